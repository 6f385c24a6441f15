"""A written policy (Markdown or plain text) as sentences, each knowing its line and its section.

`judge draft --policy-doc FILE` reads the kind of document an agent gets as its system prompt
(tau-bench's airline policy, a company's "rules for the support bot"): headings (`#`, `##`) name
sections, bullets (`-`, `*`, `1.`) and paragraphs hold the rules. Each block is joined across its
lines and cut into sentences (judge.text.cues); a sentence remembers the line its block starts
on and its section's heading, which is how every drafted rule cites where it came from
(`wiki.md:9 (Modify flight)`). The file is read whole within `MAX_DOC_BYTES` and as UTF-8 text;
anything else is a one-line input error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from judge.draft.headings import heading
from judge.errors import JudgeInputError
from judge.model.limits import read_capped
from judge.text.cues import sentences

MAX_DOC_BYTES = 1024 * 1024  # a policy document is a few pages; a larger file is not one
MAX_SENTENCE = 2000  # characters of one sentence read (a run-on "sentence" is cut, never read whole)
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+")


@dataclass(frozen=True)
class PolicySentence:
    """One sentence of the document."""

    line: int  # 1-based line its block starts on
    section: str  # the heading above it ("" before any)
    text: str

    @property
    def ref(self) -> str:
        """The evidence id of the sentence: `L<line>`."""
        return f"L{self.line}"


@dataclass(frozen=True)
class PolicyDocument:
    path: str
    title: str  # the first heading, or the file's stem
    sentences: list[PolicySentence]
    sha256: str


def _blocks(lines: list[str]) -> list[tuple[int, str, str]]:
    """(start line, section, text) of every bullet and paragraph."""
    out: list[tuple[int, str, str]] = []
    section, start = "", 0
    parts: list[str] = []

    def close() -> None:
        if parts:
            out.append((start, section, " ".join(parts)))
        parts.clear()

    for number, line in enumerate(lines, start=1):
        title = heading(line)
        if title or not line.strip():
            close()
            if title:
                section = title[1]
            continue
        bullet = _BULLET.match(line)
        if bullet:
            close()
            line = line[bullet.end():]
        if not parts:
            start = number
        parts.append(line.strip())
    close()
    return out


def read_policy_document(path: str | Path) -> PolicyDocument:
    """The sentences of a policy document (see the module docstring)."""
    import hashlib

    path = Path(path)
    try:
        data = read_capped(path, MAX_DOC_BYTES)
        text = data.decode("utf-8")
    except OSError as exc:
        raise JudgeInputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    except UnicodeDecodeError:
        raise JudgeInputError("not a policy document: not UTF-8 text", file=str(path)) from None
    except ValueError as exc:
        raise JudgeInputError(f"not a policy document: {exc}", file=str(path)) from None
    lines = text.splitlines()
    title = next((h[1] for h in map(heading, lines) if h), path.stem)
    found = [PolicySentence(start, section, sentence[:MAX_SENTENCE])
             for start, section, block in _blocks(lines) for sentence in sentences(block)]
    if not found:
        raise JudgeInputError("not a policy document: no sentences in it", file=str(path))
    return PolicyDocument(str(path), title, found, hashlib.sha256(data).hexdigest())
