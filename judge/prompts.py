"""Prompt registry: versioned judge prompts as data (`prompts/<id>/v<N>.md`), locked by hash.

A prompt file is a YAML front-matter header between `---` lines (id, version, purpose,
output_schema, notes) followed by a Jinja2 body rendered with StrictUndefined in a sandbox. The body
may be split into chat messages by marker lines `<!-- role: system -->` / `<!-- role: user -->`;
without markers the whole body is one user message.

A version is immutable: `prompts/prompts.lock` pins the sha256 of every version, `check()` reports a
file changed without a new version, a version missing from the lock and a lock entry without its
file. Lookup order: the user's own `prompts/` (beside the nearest pyproject.toml above the working
directory) before the built-in prompts shipped with the package.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.config import project_root
from judge.errors import ConfigError, JudgeInputError
from judge.model.atomic import write_atomic
from judge.model.limits import read_capped

LOCK_NAME = "prompts.lock"
_FILE_RE = re.compile(r"^v([1-9][0-9]*)\.md$")
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_ROLE_RE = re.compile(r"^<!--\s*role:\s*(system|user|assistant)\s*-->\s*$", re.MULTILINE)

Origin = Literal["user", "builtin"]


class PromptMeta(BaseModel):
    """The front-matter header of a prompt file."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    version: int = Field(ge=1)
    purpose: str = Field(min_length=1)
    output_schema: str = Field(min_length=1)
    notes: str | None = None


@dataclass(frozen=True)
class Prompt:
    meta: PromptMeta
    body: str
    sha256: str
    path: Path
    origin: Origin

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def version(self) -> int:
        return self.meta.version

    @property
    def ref(self) -> str:
        return f"{self.meta.id}@{self.meta.version}"

    def fingerprint(self) -> dict[str, Any]:
        return {"id": self.meta.id, "version": self.meta.version, "sha256": self.sha256}

    def render(self, context: dict[str, Any]) -> list[dict[str, str]]:
        """Chat messages of this prompt rendered with `context` (a missing variable is an error)."""
        from jinja2 import TemplateError

        messages = []
        try:
            for role, template in _compiled(self.body):
                text = template.render(**context).strip()
                if text:
                    messages.append({"role": role, "content": text})
        except TemplateError as exc:
            raise ConfigError(f"prompt {self.ref} does not render: {exc}", file=str(self.path)) from exc
        return messages


# ---------------------------------------------------------------- locating prompt folders


def builtin_dir() -> Path:
    """The built-in prompts: `judge/_builtin_prompts/` in a wheel, the repo's `prompts/` otherwise."""
    packaged = Path(__file__).with_name("_builtin_prompts")
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[1] / "prompts"


def user_dir(start: str | Path | None = None) -> Path | None:
    root = project_root(start)
    if root is None or not (root / "prompts").is_dir():
        return None
    return root / "prompts"


def search_dirs(start: str | Path | None = None) -> list[tuple[Origin, Path]]:
    """Folders searched for prompts, in lookup order (a folder is listed once)."""
    dirs: list[tuple[Origin, Path]] = []
    mine = user_dir(start)
    if mine is not None:
        dirs.append(("user", mine))
    builtin = builtin_dir()
    if builtin.is_dir() and all(d.resolve() != builtin.resolve() for _, d in dirs):
        dirs.append(("builtin", builtin))
    return dirs


# ---------------------------------------------------------------- reading prompt files


def content_hash(path: Path) -> str:
    """sha256 of the file with line endings normalised (a CRLF checkout keeps its hash)."""
    data = path.read_bytes().replace(b"\r\n", b"\n")
    return hashlib.sha256(data).hexdigest()


def load_prompt_file(path: str | Path, origin: Origin = "user") -> Prompt:
    path = Path(path)
    try:
        text = read_capped(path).decode("utf-8").replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: over the size limit, or binary
        raise JudgeInputError(f"cannot read prompt: {exc}", file=str(path)) from None
    header, body = _split_front_matter(text, path)
    meta = _parse_meta(header, path)
    file_match = _FILE_RE.match(path.name)
    if file_match is None or int(file_match.group(1)) != meta.version:
        raise JudgeInputError(f"file name must be v{meta.version}.md", file=str(path), field="version")
    if path.parent.name != meta.id:
        raise JudgeInputError(f"prompt id {meta.id!r} must match its folder {path.parent.name!r}",
                              file=str(path), field="id")
    return Prompt(meta=meta, body=body, sha256=content_hash(path), path=path, origin=origin)


def _split_front_matter(text: str, path: Path) -> tuple[str, str]:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise JudgeInputError("a prompt starts with a front-matter header between '---' lines",
                              file=str(path), line=1)
    for number, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "\n".join(lines[1:number]), "\n".join(lines[number + 1:])
    raise JudgeInputError("front-matter header is not closed by a '---' line", file=str(path), line=1)


def _parse_meta(header: str, path: Path) -> PromptMeta:
    from judge.ledger.fixture import parse_structured

    try:  # bounded as a scenario is: no alias bombs, no deep nesting
        data, _ = parse_structured(header, str(path)) if header.strip() else ({}, {})
    except JudgeInputError as exc:
        if exc.line is not None:
            exc.line += 1  # the header starts on the file's second line
        raise
    if not isinstance(data, dict):
        raise JudgeInputError("front matter must be a mapping", file=str(path), line=2)
    try:
        return PromptMeta.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field_name = ".".join(str(p) for p in err["loc"]) or None
        raise JudgeInputError(err["msg"], file=str(path), field=field_name) from exc


def _split_roles(body: str) -> list[tuple[str, str]]:
    parts = _ROLE_RE.split(body)
    if len(parts) == 1:
        return [("user", body)]
    # parts = [before, role1, text1, role2, text2, ...]; text before the first marker is dropped
    return [(parts[i], parts[i + 1]) for i in range(1, len(parts) - 1, 2)]


_ENV = None
_COMPILED: dict[str, list[tuple[str, Any]]] = {}


def _compiled(body: str) -> list[tuple[str, Any]]:
    """The body's (role, compiled template) pairs; compiled once per distinct body."""
    found = _COMPILED.get(body)
    if found is None:
        found = [(role, _environment().from_string(text)) for role, text in _split_roles(body)]
        if len(_COMPILED) > 256:
            _COMPILED.clear()
        _COMPILED[body] = found
    return found


def _environment():
    global _ENV
    if _ENV is None:
        from jinja2 import StrictUndefined
        from jinja2.sandbox import SandboxedEnvironment

        _ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False,
                                    trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False)
    return _ENV


# ---------------------------------------------------------------- lookup


def parse_ref(ref: str) -> tuple[str, int | None]:
    """`id@N` -> (id, N); a bare `id` -> (id, None), meaning its latest version."""
    name, sep, version = ref.strip().partition("@")
    if not _ID_RE.match(name):
        raise ConfigError(f"bad prompt reference {ref!r} (expected ID@VERSION, e.g. goal-fidelity@1)")
    if not sep:
        return name, None
    digits = version[1:] if version.startswith("v") else version
    if not digits.isdigit() or int(digits) < 1:
        raise ConfigError(f"bad prompt version in {ref!r} (expected a positive integer)")
    return name, int(digits)


def prompt_files(folder: Path) -> list[Path]:
    """Every `<id>/v<N>.md` in a prompts folder, sorted by id then version."""
    found = [p for p in folder.glob("*/v*.md") if _FILE_RE.match(p.name)]
    return sorted(found, key=lambda p: (p.parent.name, _file_version(p)))


def _file_version(path: Path) -> int:
    """N of a `v<N>.md` file (one that `_FILE_RE` matches)."""
    match = _FILE_RE.match(path.name)
    if match is None:
        raise ValueError(f"not a prompt file name: {path.name}")
    return int(match.group(1))


def list_prompts(start: str | Path | None = None) -> list[Prompt]:
    """Every prompt visible from `start`, user ones first; a built-in shadowed by a user file with
    the same id and version is left out."""
    seen: set[str] = set()
    out: list[Prompt] = []
    for origin, folder in search_dirs(start):
        for path in prompt_files(folder):
            prompt = load_prompt_file(path, origin)
            if prompt.ref not in seen:
                seen.add(prompt.ref)
                out.append(prompt)
    return out


def load_prompt(ref: str, *, start: str | Path | None = None, verify: bool = True) -> Prompt:
    """The prompt `id@N` (or the latest version of `id`), looked up user-first. With `verify` (what a
    judge uses), a version whose text no longer matches its folder's lock is a ConfigError: a locked
    version is immutable, and a judge must not grade with an edited one under the old name."""
    name, version = parse_ref(ref)
    for origin, folder in search_dirs(start):
        if version is not None:
            path = folder / name / f"v{version}.md"
            if path.is_file():
                return _verified(load_prompt_file(path, origin), folder, verify)
            continue
        versions = [p for p in prompt_files(folder) if p.parent.name == name]
        if versions:
            return _verified(load_prompt_file(versions[-1], origin), folder, verify)
    known = ", ".join(p.ref for p in list_prompts(start)) or "none"
    raise ConfigError(f"unknown prompt {ref!r} (known: {known})")


def shadowed_builtin(prompt: Prompt) -> Path | None:
    """The built-in file a project prompt shadows with other text (same id and version, another
    sha256), else None. A version names one text: a project's `goal-fidelity@2` that is not the
    built-in `goal-fidelity@2` would be graded, and fingerprinted, under the built-in's name."""
    builtin = builtin_dir()
    if prompt.origin != "user" or prompt.path.resolve().is_relative_to(builtin.resolve()):
        return None
    twin = builtin / prompt.id / f"v{prompt.version}.md"
    if twin.is_file() and content_hash(twin) != prompt.sha256:
        return twin
    return None


def _verified(prompt: Prompt, folder: Path, verify: bool) -> Prompt:
    """The prompt, unless its folder's lock pins other text for it, or it shadows a built-in
    version with other text (whether or not a lock exists): ConfigErrors."""
    if not verify:
        return prompt
    pinned = read_lock(folder).get(prompt.ref)
    if pinned is not None and pinned != prompt.sha256:
        raise ConfigError(f"prompt {prompt.ref} changed after it was locked (lock sha256 {pinned[:12]}..., file "
                          f"{prompt.sha256[:12]}...): a locked version is immutable; write "
                          f"v{_next_version(folder, prompt.id)}.md and point the judge at it",
                          file=str(prompt.path), field="version")
    twin = shadowed_builtin(prompt)
    if twin is not None:
        raise ConfigError(f"project prompt {prompt.ref} shadows the built-in {prompt.ref} ({twin}) with other text: "
                          f"a version names one text; give yours its own id (e.g. my-{prompt.id}) or use the "
                          "built-in as it is", file=str(prompt.path), field="id")
    return prompt


# ---------------------------------------------------------------- lock and check


@dataclass(frozen=True)
class Problem:
    kind: Literal["changed", "unlocked", "missing-file", "invalid", "shadows"]
    ref: str
    detail: str


@dataclass
class CheckReport:
    folder: Path
    locked: int = 0
    problems: list[Problem] = field(default_factory=list)
    added: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def read_lock(folder: Path) -> dict[str, str]:
    path = folder / LOCK_NAME
    if not path.is_file():
        return {}
    try:
        data = json.loads(read_capped(path).decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad JSON, over the limit, not UTF-8
        raise JudgeInputError(f"bad lock file: {exc}", file=str(path)) from None
    prompts = data.get("prompts") if isinstance(data, dict) else None
    if not isinstance(prompts, dict) or not all(isinstance(v, str) for v in prompts.values()):
        raise JudgeInputError("expected {\"prompts\": {\"ID@N\": \"<sha256>\"}}", file=str(path),
                              field="prompts")
    return dict(prompts)


def write_lock(folder: Path, entries: dict[str, str]) -> None:
    path = folder / LOCK_NAME
    text = json.dumps({"lock_version": 1, "prompts": dict(sorted(entries.items()))}, indent=2) + "\n"
    write_atomic(path, text)


def default_folder(start: str | Path | None = None) -> Path:
    """The folder `check`/`lock` work on: the user's prompts/ when there is one, else the built-in."""
    return user_dir(start) or builtin_dir()


def check(folder: str | Path | None = None) -> CheckReport:
    """Compare every prompt file of `folder` with its lock."""
    folder = Path(folder) if folder is not None else default_folder()
    lock = read_lock(folder)
    report = CheckReport(folder=folder, locked=len(lock))
    present: set[str] = set()
    for path in prompt_files(folder):
        ref = f"{path.parent.name}@{_file_version(path)}"
        present.add(ref)
        try:
            loaded = load_prompt_file(path)
        except JudgeInputError as exc:
            report.problems.append(Problem("invalid", ref, str(exc)))
            continue
        twin = shadowed_builtin(loaded)
        if twin is not None:
            report.problems.append(Problem("shadows", ref, f"{path} shadows the built-in {ref} ({twin}) with other "
                                                           f"text: give it its own id (my-{loaded.id})"))
        pinned, actual = lock.get(ref), content_hash(path)
        if pinned is None:
            report.problems.append(Problem("unlocked", ref, f"{path} has no lock entry (run `judge prompts lock`)"))
        elif pinned != actual:
            report.problems.append(Problem(
                "changed", ref, f"{path} changed after it was locked: a locked version is immutable, "
                                f"write v{_next_version(folder, path.parent.name)}.md instead"))
    for ref in sorted(set(lock) - present):
        report.problems.append(Problem("missing-file", ref, f"lock entry {ref} has no prompt file"))
    return report


def lock(folder: str | Path | None = None) -> CheckReport:
    """Pin every valid, unlocked version. A changed locked file is never re-pinned and a lock entry
    without its file is never dropped: both stay as problems in the returned report."""
    folder = Path(folder) if folder is not None else default_folder()
    report = check(folder)
    entries = read_lock(folder)
    for problem in [p for p in report.problems if p.kind == "unlocked"]:
        name, version = parse_ref(problem.ref)
        entries[problem.ref] = content_hash(folder / name / f"v{version}.md")
        report.added.append(problem.ref)
    if report.added:
        write_lock(folder, entries)
    report.problems = [p for p in report.problems if p.kind != "unlocked"]
    report.locked = len(entries)
    return report


def _next_version(folder: Path, name: str) -> int:
    versions = [_file_version(p) for p in (folder / name).glob("v*.md")
                if _FILE_RE.match(p.name)]
    return max(versions, default=0) + 1
