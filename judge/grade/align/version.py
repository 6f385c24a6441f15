"""A new prompt version built from an old one plus an examples section, written beside it and
locked (`judge align`). A locked version is never edited: the new file gets the next free version
number of its id, is created exclusively (never over an existing file) and is added to its folder's
prompts.lock; the old version, its file and its lock entry are untouched.

Where it goes: the old version's folder when that is the user's `prompts/`; for a built-in prompt,
the user's project `prompts/` (beside its pyproject.toml, created if need be), which `judge` searches
first. The body is the old version's body with the section appended to its system part (before the
first `<!-- role: user -->` marker), or put before the body when it has no role markers.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from judge.config import project_root
from judge.errors import ConfigError
from judge.prompts import Prompt, content_hash, list_prompts, load_prompt_file, read_lock, write_lock

_USER_MARKER = re.compile(r"^<!--\s*role:\s*user\s*-->\s*$", re.MULTILINE)


def target_folder(old: Prompt) -> Path:
    """The prompts folder the new version is written to (see the module docstring)."""
    if old.origin == "user":
        return old.path.parent.parent
    root = project_root()
    if root is None:
        raise ConfigError(f"prompt {old.ref} is built in, and there is no project folder (a pyproject.toml "
                          "above the working directory) whose prompts/ could hold its new version")
    return root / "prompts"


def next_version(old: Prompt) -> int:
    """One more than the highest version of the prompt's id anywhere judge looks."""
    return max([p.version for p in list_prompts() if p.id == old.id] + [old.version]) + 1


def new_body(old_body: str, section: str) -> str:
    """The old body with `section` at the end of its system part, or first when it has no roles."""
    marker = _USER_MARKER.search(old_body)
    if marker is None:
        return f"{section}\n\n{old_body.lstrip()}"
    before = old_body[:marker.start()].rstrip("\n")
    return f"{before}\n\n{section}\n{old_body[marker.start():]}"


def write_version(old: Prompt, section: str, notes: str) -> Prompt:
    """Write `prompts/<id>/v<N+1>.md` (old text plus `section`), lock it, and return it loaded."""
    folder = target_folder(old)
    version = next_version(old)
    meta = {"id": old.id, "version": version, "purpose": old.meta.purpose,
            "output_schema": old.meta.output_schema, "notes": notes}
    header = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    text = f"---\n{header}---\n{new_body(old.body, section)}"
    if not text.endswith("\n"):
        text += "\n"
    path = folder / old.id / f"v{version}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    _create(path, text)
    prompt = load_prompt_file(path, "user")
    lock = read_lock(folder)
    lock[prompt.ref] = content_hash(path)
    write_lock(folder, lock)
    return prompt


def _create(path: Path, text: str) -> None:
    """Write `path` whole or not at all, and never over an existing file: a temporary file in the
    same folder, then a hard link to the name (which fails if the name exists)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise ConfigError(f"{path} exists already: a prompt version is never overwritten") from None
    finally:
        tmp.unlink(missing_ok=True)
