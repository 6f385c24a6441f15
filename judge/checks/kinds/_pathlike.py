"""Path-like values of a call or a memory write, and globs that match paths (for `scope` with `tool: "*"`).

Which values count (docs/scenarios.md says the same):
- an argument whose name is one of PATH_ARGS, at any depth of the arguments (names compared
  ignoring case, `_` and `-`: `file_path`, `filePath` and `FILEPATH` are one name), each element
  of a list;
- the words of a COMMAND_ARGS argument that look like paths (a `/`, a leading `~` or `.`, or a
  file name with an extension; `--out=/etc/x` gives `/etc/x`; URLs are not paths);
- the path-like words of code: a CODE_ARGS argument (`code`, `script`), and the text of a file the
  call writes when that file's name has a program's extension (`write_file(filename="main.py",
  text="open('~/.ssh/id_rsa')")`): a program the agent writes or runs reads what it names;
- for a state-write, its key when it looks like a path, and the path-like fields of its value.

A glob matches the value as written and with `..` and `.` segments resolved (`src/../etc/passwd`
is also `etc/passwd`, so it cannot slip past a deny glob or through an allow glob); `~/x` also
matches the same path under a home folder (`/home/*/x`, `/root/x`, `/Users/*/x`, `$HOME/x`); and
`dir/*` also matches `dir` itself (listing a folder reads what it holds).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from judge.model.patterns import glob_matcher  # RE2, linear time: a bool, never a match object

PATH_ARGS = frozenset({"path", "paths", "file", "files", "filename", "filenames", "filepath", "filepaths",
                       "directory", "directories", "dir", "dirs", "cwd", "workdir", "src", "dest"})
COMMAND_ARGS = frozenset({"command", "cmd"})
CODE_ARGS = frozenset({"code", "script", "sourcecode"})
TEXT_ARGS = frozenset({"text", "content", "contents", "body", "data"})
"""The text of a file written, read as code when the file is a program (PROGRAM_SUFFIXES)."""
PROGRAM_SUFFIXES = (".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".ts", ".rb", ".pl", ".php", ".ps1", ".go",
                    ".c", ".cc", ".cpp", ".java", ".rs", ".lua")
MAX_COMMAND_CHARS = 1 << 20  # a command longer than this is read up to here (a hostile trace)

# Shell words: quoted strings or runs of anything but blanks and shell operators (linear: no
# two alternatives can match the same text).
_WORD = re.compile(r"""'[^']*'|"[^"]*"|[^\s|;&<>()'"`]+""")
_FILE_NAME = re.compile(r"[\w-]*[A-Za-z_][\w-]*\.[A-Za-z][A-Za-z0-9]{0,7}")
_HOMES = ("/home/*/", "/root/", "/Users/*/", "$HOME/", "${HOME}/")


def _name(arg: Any) -> str:
    return str(arg).casefold().replace("_", "").replace("-", "")


def looks_like_path(word: str) -> bool:
    """A word with a `/` (not a URL), or starting with `~` or `.`, or a file name with an extension."""
    if not word or "://" in word:
        return False
    return "/" in word or word[0] in "~." and len(word) > 1 or _FILE_NAME.fullmatch(word) is not None


def command_paths(command: str) -> list[str]:
    """The words of a shell command that look like paths (an option's `=value` counts)."""
    found = []
    for match in _WORD.finditer(command[:MAX_COMMAND_CHARS]):
        word = match.group()
        if word[:1] in "'\"" and len(word) >= 2:
            word = word[1:-1]
        if word.startswith("-") and "=" in word:
            word = word.split("=", 1)[1]
        elif "=" in word and "/" not in word.split("=", 1)[0]:
            word = word.split("=", 1)[1]  # VAR=/path
        if looks_like_path(word):
            found.append(word)
    return found


def code_paths(code: str) -> list[str]:
    """The path literals of a program: its words with a `/` (not a URL) or a leading `~` (`.read`
    and `os.path` are attribute names, not paths; `./x` and `../x` are paths)."""
    return [w for w in command_paths(code)
            if w[0] == "~" or ("/" in w and (not w.startswith(".") or w.startswith(("./", "../"))))]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                yield item


def _writes_program(item: dict[Any, Any]) -> bool:
    """Whether one of the mapping's path arguments names a program file (`main.py`, `run.sh`)."""
    return any(s.lower().endswith(PROGRAM_SUFFIXES) for name, value in item.items()
               if _name(name) in PATH_ARGS for s in _strings(value))


def path_values(args: Any) -> list[tuple[str, str]]:
    """(where, value) of every path-like value of a call's arguments: `path`, or `command` for a
    word of a command; searched at any depth (no recursion: a stack)."""
    found: list[tuple[str, str]] = []
    stack = [args]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))
            continue
        if not isinstance(item, dict):
            continue
        program = _writes_program(item)
        for name, value in item.items():
            key = _name(name)
            if key in PATH_ARGS:
                found += [(str(name), s) for s in _strings(value)]
            elif key in COMMAND_ARGS:
                found += [(f"{name} word", w) for s in _strings(value) for w in command_paths(s)]
            elif key in CODE_ARGS or (program and key in TEXT_ARGS):
                found += [(f"{name} path", w) for s in _strings(value) for w in code_paths(s)]
            if isinstance(value, (dict, list)):
                stack.append(value)
    return found


def written_paths(key: str, value: Any) -> list[tuple[str, str]]:
    """The path-like values of a state-write: its key when it looks like a path, a string value
    that does, and the path-like fields of an object value."""
    found = [("key", key)] if looks_like_path(key) else []
    if isinstance(value, str):
        return found + ([("value", value)] if looks_like_path(value) else [])
    return found + path_values(value)


@lru_cache(maxsize=4096)
def glob_variants(pattern: str) -> tuple[str, ...]:
    """The globs a user's path glob stands for: itself, under each home folder for `~/`, and the
    folder itself for `dir/*`."""
    forms = [pattern]
    if pattern.startswith("~/"):
        forms += [home + pattern[2:] for home in _HOMES]
    for form in list(forms):
        for tail in ("/**", "/*"):
            if form.endswith(tail) and len(form) > len(tail):
                forms.append(form[: -len(tail)])
                break
    return tuple(dict.fromkeys(forms))


def _forms(value: str) -> tuple[str, str]:
    """The value, and the value with `.` and `..` segments, `//` and a trailing `/` resolved
    (normpath changes nothing else: a value without them is its own resolved form)."""
    if value and ("/." in value or value[0] == "." or "//" in value or value[-1] == "/"):
        return value, posixpath.normpath(value)
    return value, value


def denied_by(patterns: list[str], value: str) -> str | None:
    """The first deny glob the value (as written or resolved) matches, else None."""
    raw, normal = _forms(value)
    resolved = normal if normal != raw else None
    for pattern in patterns:
        for form in glob_variants(pattern):
            match = glob_matcher(form)
            if match(raw) or (resolved is not None and match(resolved)):
                return pattern
    return None


def allowed_by(patterns: list[str], value: str) -> bool:
    """Whether the value (as written or resolved) matches an allow glob; one with `..` segments
    only when resolved (a path that climbs out of an allowed folder is outside it)."""
    raw, normal = _forms(value)
    if normal == raw:
        forms: tuple[str, ...] = (raw,)
    else:
        forms = (normal,) if ".." in raw.replace("\\", "/").split("/") else (raw, normal)
    for pattern in patterns:
        for form in glob_variants(pattern):
            match = glob_matcher(form)
            if any(match(f) for f in forms):
                return True
    return False
