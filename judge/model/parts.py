"""Two behaviours the typed parts of a report share.

`SetFields`: a part written with exactly the fields it was given. A judge's fingerprint has different
fields per backend (an llm judge's prompt and sampling, the embedding judge's weights and code
hashes); each backend's JSON must keep exactly its keys, because calibration records are keyed on
the canonical JSON of the fingerprint (a key added to one backend's fingerprint would make every
record of that backend stale). So a field that was not set is left out of the JSON, a field set to
null is written as null, and a part read back from JSON is written again as it was read.

`JsonView`: a typed part still reads like the JSON object it is written as: `part["key"]`,
`part.get("key")`, `"key" in part`, `part.keys()` and `part.items()` give the JSON values (what the
report file holds), for code written when these parts were plain dicts. Attributes are typed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import SerializationInfo, model_serializer

from judge.model.base import Strict


class JsonView(Strict):
    """Read access by JSON key (see module docs); a part is never changed through it."""

    def _json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def __getitem__(self, key: str) -> Any:
        return self._json()[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The JSON value of `key`, or `default` when the part does not have it."""
        return self._json().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._json()

    def keys(self) -> Iterator[str]:
        """The JSON keys, in the order they are written."""
        return iter(list(self._json()))

    def items(self) -> Iterator[tuple[str, Any]]:
        """(JSON key, JSON value) pairs, in the order they are written."""
        return iter(list(self._json().items()))


class SetFields(JsonView):
    """Written with exactly the fields it was given (see module docs)."""

    @model_serializer(mode="wrap")
    def _only_set_fields(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data = handler(self)
        fields = type(self).model_fields
        given = self.model_fields_set
        keep = {(f.serialization_alias or f.alias or name) if info.by_alias else name
                for name, f in fields.items() if name in given}
        return {key: value for key, value in data.items() if key in keep}
