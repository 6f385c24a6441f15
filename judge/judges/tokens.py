"""Token counts of judge requests as sent: the messages and the schema the request carries.

What a request costs depends on the configured `mode`: in the tools modes the response schema
travels as a tool (plus `tool_choice`), in `json_schema` and `strict` as `response_format`, in
`json` and `md_json` instructor writes it into the messages. `request_tokens(messages, extra)` is
the messages plus `extra = schema_tokens(mode, model)`, the tokens of everything else the request
carries, measured once per (mode, response model) on the request the client (judge.judges.client)
actually builds.

The arithmetic is litellm's `token_counter` for gpt-4o (whatever model judges): 3 tokens per
message plus its role and content, 3 for the reply primer, and OpenAI's function-definition format
for a tool (the same format counts a `response_format` schema). One difference: litellm counts a
message in chunks of 1,024 characters (up to ~1 token of drift per chunk); here a message is counted
line by line, memoised, so the ledger lines and template text that every request of a run repeats
are counted once, and a line is counted exactly. A line is counted on its own only where a line
break is a token boundary in the gpt-4o encoding (the next line starts with a letter or digit: no
pre-token spans the break); otherwise it is counted with the line before it. A line longer than
1,024 characters is counted in chunks like litellm's (the encoder is quadratic in one long run).

tiktoken's gpt-4o encoding ships inside litellm (read offline).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

COUNT_MODEL = "gpt-4o"  # the tokenizer used to size requests, whatever the judging model
CHUNK = 1024  # characters, as litellm's counter
_PER_MESSAGE, _PRIMER = 3, 3
_MEMO_LIMIT = 2048  # longer pieces are counted, not memoised (bounded memory)
_PLACEHOLDER = ({"role": "system", "content": "-"}, {"role": "user", "content": "-"})

BodyBuilder = Callable[[list[dict[str, str]]], dict[str, Any]]


@lru_cache(maxsize=1)
def _encoding() -> Any:
    from judge.judges.libs import litellm_lib

    litellm_lib()  # litellm's import sets TIKTOKEN_CACHE_DIR to the tokenizer files it ships
    from litellm.litellm_core_utils.token_counter import openai_tokenizer_encoding

    return openai_tokenizer_encoding(COUNT_MODEL)


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
    litellm = _litellm()
    total = count_messages(body["messages"])
    tools = list(body.get("tools") or [])
    schema = ((body.get("response_format") or {}).get("json_schema") or {})
    if schema:
        tools.append({"type": "function", "function": {
            "name": schema.get("name", "answer"), "parameters": schema.get("schema", {})}})
    if tools or body.get("tool_choice"):
        system = [{"role": "system", "content": "-"}] if any(m.get("role") == "system" for m in body["messages"]) \
            else [{"role": "user", "content": "-"}]
        with_tools = litellm.token_counter(model=COUNT_MODEL, messages=system, tools=tools or None,
                                           tool_choice=body.get("tool_choice"))
        total += with_tools - litellm.token_counter(model=COUNT_MODEL, messages=system)
    return total


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
