"""Load a scenario file (YAML or JSON) into a `Scenario`, with errors that name file, line and field.

PyYAML's composed node tree keeps the line of every mapping key and sequence item, so a pydantic
error location (`ledger.2.sensitivity`) can be turned back into the line a user must fix.

Bounded: YAML aliases (`*name`) may repeat a value, but what they expand to is capped at
MAX_YAML_VALUES values and MAX_YAML_BYTES bytes of scalars (a few hundred bytes of nested aliases
can ask for gigabytes: the "billion laughs"; a 1 MB string aliased 150,000 times asks for 150 GB
in a handful of values), nesting deeper than MAX_DEPTH is refused (a recursive alias too), and a
file over MAX_FILE_BYTES is never read whole. A `.json` file is JSON: read by the JSON parser only
(a trailing comma is an error naming its line, never a YAML reading of the text), without `NaN` or
`Infinity`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from yaml.constructor import SafeConstructor

from judge.errors import FixtureError
from judge.model import Scenario, rule_kinds
from judge.model.limits import MAX_DEPTH, MAX_FILE_BYTES, DepthError, check_depth, depth_message, read_capped

Loc = tuple[Any, ...]
MAX_YAML_VALUES = 200_000  # values built from one file, aliases expanded
MAX_YAML_BYTES = MAX_FILE_BYTES  # bytes of scalar text built from one file, aliases expanded


def _construct(node: yaml.Node, loc: Loc, lines: dict[Loc, int], budget: list[int] | None = None,
               constructor: SafeConstructor | None = None) -> Any:
    """Turn a composed YAML node into plain Python, recording the 1-based line of every location.

    Raises ValueError (with the line) for what plain data cannot hold: a non-scalar or repeated
    mapping key, a tag the safe loader does not know (`!!python/...`, `!custom`), nesting deeper
    than MAX_DEPTH or aliases expanding past MAX_YAML_VALUES values or MAX_YAML_BYTES bytes."""
    budget = budget if budget is not None else [MAX_YAML_VALUES, MAX_YAML_BYTES]
    # One safe constructor per file types every scalar (a loader made per scalar cost more than the parse).
    constructor = constructor if constructor is not None else SafeConstructor()
    budget[0] -= 1
    if budget[0] < 0:
        raise _NodeError(f"YAML aliases (*name) expand to more than {MAX_YAML_VALUES} values",
                         node.start_mark.line + 1, ())
    if isinstance(node, yaml.ScalarNode):  # counted before the value is built
        budget[1] -= len(node.value)
        if budget[1] < 0:
            raise _NodeError(f"YAML aliases (*name) expand to more than {MAX_YAML_BYTES >> 20} MB",
                             node.start_mark.line + 1, ())
    if len(loc) > MAX_DEPTH:
        raise _NodeError(depth_message(), node.start_mark.line + 1, ())
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            where = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise _NodeError("a mapping key must be a plain scalar", where, loc)
            key = _scalar(key_node, constructor)
            if key in out:
                raise _NodeError(f"duplicate key {key!r}", where, loc + (key,))
            budget[1] -= len(key_node.value)
            out[key] = _construct(value_node, loc + (key,), lines, budget, constructor)
            lines[loc + (key,)] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(item, loc + (i,), lines, budget, constructor) for i, item in enumerate(node.value)]
    return _scalar(node, constructor)


def _scalar(node: yaml.Node, constructor: SafeConstructor) -> Any:
    # The safe loader's constructor alone: it reads no stream, it types the scalar node.
    try:
        return constructor.construct_object(node, deep=True)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise _NodeError(problem, node.start_mark.line + 1, ()) from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise _NodeError(str(exc), node.start_mark.line + 1, ()) from None


class _NodeError(ValueError):
    def __init__(self, message: str, line: int, loc: Loc) -> None:
        super().__init__(message)
        self.message, self.line, self.loc = message, line, loc


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader's composer, refusing nesting deeper than MAX_DEPTH (it recurses) and aliases
    that would expand past MAX_YAML_VALUES values or MAX_YAML_BYTES bytes, as they are composed: a
    bomb is refused at the alias that crosses the limit, before the rest of the file is read."""

    _depth = 0

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (values, bytes) it expands to
        self._spent = [0, 0]

    def _charge(self, values: int, size: int, mark: Any) -> None:
        self._spent[0] += values
        self._spent[1] += size
        if self._spent[0] > MAX_YAML_VALUES:
            raise _NodeError(f"YAML aliases (*name) expand to more than {MAX_YAML_VALUES} values", mark.line + 1, ())
        if self._spent[1] > MAX_YAML_BYTES:
            raise _NodeError(f"YAML aliases (*name) expand to more than {MAX_YAML_BYTES >> 20} MB", mark.line + 1, ())

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            target = self.anchors.get(event.anchor)
            if target is not None:  # (an unknown anchor: the composer names it)
                self._charge(*self._sizes.get(id(target), (1, 0)), event.start_mark)
            return super().compose_node(parent, index)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _NodeError(depth_message(), self.peek_event().start_mark.line + 1, ())
            node = super().compose_node(parent, index)
            assert node is not None  # compose_node is called only where a node follows
        finally:
            self._depth -= 1
        if isinstance(node, yaml.ScalarNode):
            size = (1, len(node.value))
            self._charge(*size, node.start_mark)
        else:
            children = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else node.value
            sizes = [self._sizes.get(id(child), (1, 0)) for child in children]
            size = (1 + sum(v for v, _ in sizes), sum(b for _, b in sizes))
            self._charge(1, 0, node.start_mark)
        self._sizes[id(node)] = size
        return node


def read_structured(path: Path) -> tuple[Any, dict[Loc, int]]:
    """Parse a YAML or JSON file (a `.json` file as JSON only), within the limits above."""
    try:
        raw = read_capped(path)
    except OSError as exc:
        raise FixtureError(f"cannot read: {exc.strerror}", file=str(path)) from None
    except ValueError as exc:
        message = "binary file, expected YAML or JSON text" if "binary" in str(exc) else str(exc)
        raise FixtureError(message, file=str(path)) from None
    if not raw.strip():
        raise FixtureError("file is empty", file=str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FixtureError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from None
    return parse_structured(text, str(path), json_only=path.suffix.lower() == ".json")


def parse_structured(text: str, name: str, *, json_only: bool = False) -> tuple[Any, dict[Loc, int]]:
    """Parse YAML or JSON text (`json_only`: JSON, as a `.json` file is) within the limits above; a
    FixtureError names `name`, the line and the field. JSON is also composed as YAML so that lines are
    known for both, but its values come from the JSON parser (YAML 1.1 reads `1e5` as a string, keeps
    `\\ud83d` escapes as lone surrogates and rejects tab indentation)."""
    try:
        json_data = _json_or_none(text, name, json_only)
    except DepthError:
        raise FixtureError(depth_message(), file=name) from None
    if json_data is not None:
        text = text.replace("\t", " ")  # valid JSON has raw tabs only between tokens
    try:
        node = yaml.compose(text, Loader=_BoundedLoader)
    except _NodeError as exc:
        raise FixtureError(f"invalid YAML/JSON: {exc.message}", file=name, line=exc.line) from None
    except yaml.YAMLError as exc:
        if json_data is not None:
            return json_data, {}  # valid JSON that YAML cannot read: no line numbers, no loss
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FixtureError(f"invalid YAML/JSON: {problem}", file=name, line=line) from None
    lines: dict[Loc, int] = {}
    if node is None:
        raise FixtureError("file is empty", file=name)
    try:
        data = _construct(node, (), lines)
        return (data if json_data is None else json_data), lines
    except _NodeError as exc:
        raise FixtureError(f"invalid YAML/JSON: {exc.message}", file=name, line=exc.line,
                           field=dotted(exc.loc) if exc.loc else None) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _json_or_none(text: str, name: str, json_only: bool) -> Any:
    if not json_only and text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        if not json_only:
            return None  # not JSON after all (a YAML flow mapping?): the YAML reader decides
        raise FixtureError(f"invalid JSON: {exc.msg} (column {exc.colno})", file=name, line=exc.lineno) from None
    except ValueError as exc:  # NaN, Infinity, an integer of more than 4,300 digits
        raise FixtureError(f"invalid JSON: {exc}", file=name) from None
    except RecursionError:
        raise DepthError(MAX_DEPTH) from None
    check_depth(data)
    return data


def line_of(lines: dict[Loc, int], loc: Loc) -> int | None:
    """The line of the deepest recorded prefix of `loc`."""
    for end in range(len(loc), -1, -1):
        if tuple(loc[:end]) in lines:
            return lines[tuple(loc[:end])]
    return None


def dotted(loc: Loc) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def load_scenario(path: str | Path) -> tuple[Scenario, dict[Loc, int]]:
    """Load and validate a scenario; returns it with the line map (for lint messages)."""
    path = Path(path)
    data, lines = read_structured(path)
    if not isinstance(data, dict):
        raise FixtureError("a scenario must be a mapping with id, ledger, deltas, checkpoints, rules",
                           file=str(path), line=1)
    return validate_scenario(data, str(path), lines), lines


class ScenarioFormatError(FixtureError):
    """A scenario that breaks its format: the first problem is the message (file, line, field);
    `problems` holds every one pydantic found, as (message, line, field)."""

    def __init__(self, problems: list[tuple[str, int | None, str]], *, file: str) -> None:
        message, line, field = problems[0]
        super().__init__(message, file=file, line=line, field=field)
        self.problems = problems


def format_problems(exc: ValidationError, lines: dict[Loc, int] | None = None) -> list[tuple[str, int | None, str]]:
    """Every error of a scenario's validation as (message, line, dotted field), in file order."""
    out = []
    for err in exc.errors():
        loc = model_loc(tuple(err["loc"]))
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        elif err["type"] == "literal_error":
            message = f"{err['msg']} (got {err.get('input')!r})"
        out.append((message, line_of(lines or {}, loc), dotted(loc)))
    return list(dict.fromkeys(out))


def validate_scenario(data: dict[str, Any], name: str, lines: dict[Loc, int] | None = None) -> Scenario:
    """The Scenario model of parsed data; a ScenarioFormatError names the file, line (when known) and
    field of the first problem and carries every other one (a FixtureError for data nested too deep)."""
    for key, value in data.items():
        try:
            check_depth(value, MAX_DEPTH - 1)
        except DepthError:
            raise FixtureError(depth_message(), file=name, line=line_of(lines or {}, (key,)), field=str(key)) from None
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioFormatError(format_problems(exc, lines), file=name) from None


def model_loc(loc: Loc) -> Loc:
    """Drop the discriminator tags pydantic inserts into union locations (rules.0.scope.tool)."""
    return tuple(part for i, part in enumerate(loc) if not (i > 0 and loc[0] == "rules" and part in rule_kinds()))
