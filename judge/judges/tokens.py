"""Token counts of judge requests as sent: the messages and the schema the request carries.

What a request costs depends on the configured `mode`: in the tools modes the response schema
travels as a tool (plus `tool_choice`), in `json_schema` and `strict` as `response_format`, in
`json` and `md_json` instructor writes it into the messages. `request_tokens(messages, extra)` is
the messages plus `extra = schema_tokens(mode, model)`, the tokens of everything else the request
carries, measured once per (mode, response model) on the request the client (judge.judges.client)
actually builds.

The arithmetic is litellm's `token_counter` for gpt-4o (whatever model judges), done here without
importing litellm (about 3 CPU-s and 250 MB): tiktoken's `o200k_base` encoding (the one litellm's
counter picks for gpt-4o), 3 tokens per message plus its role and content, 3 for the reply primer,
and OpenAI's function-definition format for a tool (the same format counts a `response_format`
schema): the tools written as litellm writes them (`namespace functions { ... }`), counted in
chunks of 1,024 characters, plus 9, less 4 when the messages have a system message, and 7 plus the
name for a named `tool_choice`. tests/test_llm_tokens.py holds each piece equal to litellm's own
counter over random and real requests. A tool in a shape other than OpenAI's (`function` inside)
is counted by litellm itself.

One difference from litellm, by design: litellm counts a message in chunks of 1,024 characters (up
to ~1 token of drift per chunk); here a message is counted line by line, memoised, so the ledger
lines and template text that every request of a run repeats are counted once, and a line is
counted exactly. A line is counted on its own only where a line break is a token boundary in the
gpt-4o encoding (the next line starts with a letter or digit: no pre-token spans the break);
otherwise it is counted with the line before it. A line longer than 1,024 characters is counted in
chunks like litellm's (the encoder is quadratic in one long run).

The encoding's file is read from the copy litellm ships in its package folder (found without
importing litellm; no network), as litellm's own import points tiktoken at it
(`TIKTOKEN_CACHE_DIR`, or `CUSTOM_TIKTOKEN_CACHE_DIR` when set).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

COUNT_MODEL = "gpt-4o"  # the tokenizer used to size requests, whatever the judging model
ENCODING = "o200k_base"  # tiktoken's encoding of COUNT_MODEL, the one litellm's counter uses for it
CHUNK = 1024  # characters, as litellm's counter
_PER_MESSAGE, _PRIMER = 3, 3
_TOOLS, _SYSTEM_DISCOUNT, _NAMED_CHOICE = 9, 4, 7  # litellm's function-definition arithmetic (module docs)
_EXACT_CHARS = 4_000_000  # past this litellm extrapolates a text's count from samples: it counts those
_MEMO_LIMIT = 2048  # longer pieces are counted, not memoised (bounded memory)
_RANKS_PIECE = 1 << 18  # bytes of tiktoken's rank file parsed at once (`read_ranks`)
_PLACEHOLDER = ({"role": "system", "content": "-"}, {"role": "user", "content": "-"})

BodyBuilder = Callable[[list[dict[str, str]]], dict[str, Any]]


def bundled_tokenizers() -> Path | None:
    """The folder of tiktoken files litellm ships (litellm_core_utils/tokenizers), found without
    importing litellm; None without litellm."""
    spec = find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    folder = bundled_tokenizers()
    if folder is not None:  # what litellm's import does: tiktoken reads the bundled files, offline
        os.environ["TIKTOKEN_CACHE_DIR"] = os.environ.get("CUSTOM_TIKTOKEN_CACHE_DIR") or str(folder)
    try:
        return tiktoken.Encoding(**_encoding_args())
    except (AttributeError, ImportError, TypeError, ValueError):  # another tiktoken's layout: its own way
        return tiktoken.get_encoding(ENCODING)


def _encoding_args() -> dict[str, Any]:
    """The arguments of tiktoken's encoding: tiktoken's own constructor of it (tiktoken_ext.openai_public:
    the file's address and sha256, the split pattern, the special tokens), run with `read_ranks` for
    tiktoken's loader. tiktoken parses the file's 200k lines one Python call each (~0.2 CPU-s); the
    constructor is copied with other globals, so tiktoken's module is left as it is."""
    from types import FunctionType

    import tiktoken_ext.openai_public as public

    constructor = getattr(public, ENCODING)
    args: dict[str, Any] = FunctionType(constructor.__code__, {**vars(public), "load_tiktoken_bpe": read_ranks})()
    return args


def read_ranks(path: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """tiktoken.load.load_tiktoken_bpe's result (a token's bytes -> its rank), each piece of the file
    split and decoded by calls in C, not line by line: the file is `base64 rank` lines, read and checked
    against its sha256 by tiktoken."""
    from binascii import a2b_base64

    from tiktoken.load import read_file_cached

    contents = read_file_cached(path, expected_hash)
    ranks: dict[bytes, int] = {}
    at = 0
    while at < len(contents):  # in pieces ending at a line end: the whole file's words at once are ~20 MB more
        end = contents.find(b"\n", min(at + _RANKS_PIECE, len(contents) - 1)) + 1 or len(contents)
        fields = contents[at:end].split()
        if len(fields) % 2:
            raise ValueError(f"not a tiktoken rank file: {path}")
        ranks.update(zip(map(a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))
        at = end
    return ranks


def _encode_count(text: str) -> int:
    encode = _encoding().encode_ordinary
    return sum(len(encode(text[i:i + CHUNK])) for i in range(0, len(text), CHUNK))


@lru_cache(maxsize=65536)
def _memo_count(piece: str) -> int:
    return _encode_count(piece)


def _piece_count(piece: str) -> int:
    return _memo_count(piece) if len(piece) <= _MEMO_LIMIT else _encode_count(piece)


def pieces(text: str) -> list[str]:
    """`text` cut at the line breaks that are token boundaries (each piece keeps its line break)."""
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        if out and out[-1].endswith("\n") and line[:1].isalnum() and line[:1].isascii():
            out.append(line)
        elif out:
            out[-1] += line
        else:
            out.append(line)
    return out


def count_text(text: str) -> int:
    """Tokens of `text` in the gpt-4o encoding (line by line, memoised; see module docs)."""
    if len(text) <= _MEMO_LIMIT and text.isascii() and "\n" not in text:
        return _memo_count(text)
    return sum(_piece_count(p) for p in pieces(text))


def count_line(line: str) -> int:
    """What one more line costs inside a message: the line and its line break."""
    return count_text(line + "\n")


def count_messages(messages: Sequence[dict[str, str]]) -> int:
    """Tokens of chat messages as litellm's token_counter counts them (reply primer included)."""
    total = _PRIMER
    for message in messages:
        total += _PER_MESSAGE + sum(count_text(v) for v in message.values() if isinstance(v, str))
    return total


def request_tokens(messages: Sequence[dict[str, str]], extra: int) -> int:
    """A request's tokens: its messages plus `extra`, what else it carries (see `schema_tokens`)."""
    return count_messages(messages) + extra


def body_tokens(body: dict[str, Any]) -> int:
    """Tokens of a chat-completions request body: messages, tools and tool_choice (litellm's
    function-definition format), and a `response_format` json_schema counted as a tool would be."""
    total = count_messages(body["messages"])
    tools = list(body.get("tools") or [])
    schema = ((body.get("response_format") or {}).get("json_schema") or {})
    if schema:
        tools.append({"type": "function", "function": {
            "name": schema.get("name", "answer"), "parameters": schema.get("schema", {})}})
    if tools or body.get("tool_choice"):
        with_system = any(m.get("role") == "system" for m in body["messages"])
        total += tool_tokens(tools, body.get("tool_choice"), with_system=with_system)
    return total


def tool_tokens(tools: Sequence[Any], tool_choice: Any, *, with_system: bool) -> int:
    """What `tools` and `tool_choice` add to a request, as litellm's token_counter counts them for
    gpt-4o (module docs); a tool not in OpenAI's shape is counted by litellm itself."""
    if not all(isinstance(t, Mapping) and isinstance(t.get("function"), Mapping) for t in tools):
        return _litellm_tool_tokens(tools, tool_choice, with_system=with_system)
    total = 0
    if tools:
        total += count_chunked(function_definitions([t["function"] for t in tools])) + _TOOLS
        total -= _SYSTEM_DISCOUNT if with_system else 0
    return total + _choice_tokens(tool_choice)


def _choice_tokens(tool_choice: Any) -> int:
    match tool_choice:  # litellm's `_count_tool_choice`, case by case
        case "none":
            return 1
        case {"function": {"name": str() as name}}:
            return _NAMED_CHOICE + count_chunked(name)
        case {"type": "none"}:
            return 1
        case {"name": str() as name}:
            return _NAMED_CHOICE + count_chunked(name)
        case _:
            return 0


def count_chunked(text: str) -> int:
    """Tokens of `text` as litellm counts a text: encoded in chunks of 1,024 characters."""
    if len(text) > _EXACT_CHARS:
        return _litellm().token_counter(model=COUNT_MODEL, text=text)
    return _encode_count(text)


def function_definitions(functions: Sequence[Mapping[str, Any]]) -> str:
    """Function definitions written as OpenAI appears to write them to the model, as litellm writes
    them to count them (`_format_function_definitions`)."""
    lines = ["namespace functions {", ""]
    for function in functions:
        lines.extend(_function_lines(function))
    lines.append("} // namespace functions")
    return "\n".join(lines)


def _function_lines(function: Mapping[str, Any]) -> list[str]:
    name = function.get("name")
    if not name:
        return []
    description = function.get("description")
    head = [f"// {description}"] if description else []
    given = function.get("parameters") or {}
    parameters = given if isinstance(given, Mapping) else {}
    properties = parameters.get("properties")
    if isinstance(properties, Mapping) and properties:
        return [*head, f"type {name} = (_: {{", _object_parameters(parameters, 0), "}) => any;", ""]
    return [*head, f"type {name} = () => any;", ""]


def _object_parameters(parameters: Mapping[str, Any], indent: int) -> str:
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return ""
    listed = parameters.get("required")
    required = tuple(listed) if isinstance(listed, list) else ()
    lines: list[str] = []
    for key, props in properties.items():
        description = props.get("description") if isinstance(props, Mapping) else None
        if description:
            lines.append(f"// {description}")
        lines.append(f"{key}{'' if key in required else '?'}: {_type(props, indent)},")
    return "\n".join(" " * max(0, indent) + line for line in lines)


def _type(props: Any, indent: int) -> str:
    if not isinstance(props, Mapping):
        return "any"
    kind, enum = props.get("type"), props.get("enum")
    if kind in ("string", "integer", "number") and isinstance(enum, list):
        return " | ".join(f'"{item}"' for item in enum)
    if kind == "array":
        return f"{_type(props.get('items'), indent)}[]"
    if kind == "object":
        return f"{{\n{_object_parameters(props, indent + 2)}\n}}"
    return {"string": "string", "integer": "number", "number": "number", "boolean": "boolean",
            "null": "null"}.get(kind, "any") if isinstance(kind, str) else "any"


def _litellm_tool_tokens(tools: Sequence[Any], tool_choice: Any, *, with_system: bool) -> int:
    litellm = _litellm()
    messages = [{"role": "system" if with_system else "user", "content": "-"}]
    with_tools = litellm.token_counter(model=COUNT_MODEL, messages=messages, tools=list(tools) or None,
                                       tool_choice=tool_choice)
    return int(with_tools - litellm.token_counter(model=COUNT_MODEL, messages=messages))


def schema_tokens(build: BodyBuilder, key: Any) -> int:
    """Tokens a request carries besides its own messages, for one (mode, response model) `key`:
    `build(messages)` makes the body as sent; measured once per key on placeholder messages."""
    found = _EXTRA.get(key)
    if found is None:
        placeholder = [dict(m) for m in _PLACEHOLDER]
        found = body_tokens(build(placeholder)) - count_messages(_PLACEHOLDER)
        if len(_EXTRA) > 4096:
            _EXTRA.clear()
        _EXTRA[key] = found
    return found


_EXTRA: dict[Any, int] = {}


def _litellm() -> Any:
    from judge.judges.libs import litellm_lib

    return litellm_lib()
