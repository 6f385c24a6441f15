"""Model-blind masking: the candidate's model, vendor, name and version never reach a judge.

The names come from a maintained list, not from patterns written here: every model name and
provider in litellm's model map (the `model_prices_and_context_window_backup.json` litellm ships,
read from its package folder without importing litellm, as LITELLM_LOCAL_MODEL_COST_MAP=True would
load it), the family of each model (its first word: gpt, claude, gemini, o1, grok, phi, ...), plus
`data/model_words.txt` (tier words such as sonnet, opus and haiku; vendors; short forms and
products the map does not name, GLM, Copilot, ERNIE Bot, Tongyi Qianwen, also in their own scripts:
通义千问, 文心一言, 智谱清言, 豆包, ...; and the family words that are everyday words, masked only inside a
whole model name). The run header's agent name, version and model are added per request.

Text is masked with all of them; keys and identifiers (a JSON field, a tool or state name) only with
the candidate's own names (`generic=False`): a field named `anthropic` is the user's schema, not a
hint of the candidate, and stays as it is.

Matching is by words, so it is linear in the text and indifferent to how a name is written: names
are found on the folded copy of the text (judge.trace.normal: NFKC, Unicode hyphens and spaces as
`-` and ` `, zero-width characters dropped), split into runs of letters, runs of digits and single characters of the
scripts written without
spaces (Han, kana, Hangul), so `我用通义千问` holds the name `通义千问`
(`GPT‑4o` with a non-breaking hyphen, `gpt4o`, `gpt 4o` and `GPT-4o` are all gpt, 4, o), and
replaced in the text as written: the rest of the text is never normalised (that would re-assemble
what the redactor saw split). A name matches whole words joined by nothing,
one of `-_ ./:` or nothing at a letter/digit change; the longest name starting at a word wins.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from contextlib import suppress
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

from judge.model.atomic import write_atomic
from judge.trace.normal import fold

MASK = "[model]"
_MAP_FILE = "model_prices_and_context_window_backup.json"  # litellm's model map, in its package folder
WORDS_FILE = Path(__file__).with_name("data") / "model_words.txt"
_END = ""  # the trie key that marks the end of a name
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]|(?:(?![{_CJK}])[^\W\d_])+|\d+")
_JOINERS = frozenset(("", "-", "_", " ", ".", "/", ":"))
_HYPHENS = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u00ad"), "-")
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u180e"), None)
_SPACES = re.compile(r"[^\S\n\r\t\v\f\x1c-\x1f\x85\u2028\u2029]")
Trie = dict


def normalise(text: str) -> str:
    """NFKC, Unicode hyphens as `-`, Unicode spaces as ` `, zero-width characters dropped."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text).translate(_HYPHENS).translate(_INVISIBLE)
    return _SPACES.sub(" ", text)


def words(name: str) -> tuple[str, ...]:
    return tuple(t.casefold() for t in _TOKEN.findall(normalise(name)))


def _word_lists() -> tuple[set[str], set[str]]:
    mask: set[str] = set()
    keep: set[str] = set()
    for line in WORDS_FILE.read_text(encoding="utf-8").splitlines():
        kind, _, rest = line.partition(":")
        if kind.strip() in ("mask", "keep") and not line.startswith("#"):
            (mask if kind.strip() == "mask" else keep).update(rest.split())
    return mask, keep


def litellm_names() -> tuple[set[str], set[str]]:
    """(model names, provider names) of litellm's model map, read from its package folder."""
    spec = find_spec("litellm")
    if spec is None or spec.origin is None:
        return set(), set()
    path = Path(spec.origin).with_name(_MAP_FILE)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set(), set()
    models, providers = set(), set()
    for key, info in data.items():
        if not isinstance(info, dict) or key == "sample_spec":
            continue
        provider = info.get("litellm_provider")
        if isinstance(provider, str) and " " not in provider:
            providers.add(provider)
        for piece in re.split(r"[/:]", key):
            if re.match(r"^[a-z]+\.[a-z]", piece):  # bedrock's `anthropic.claude-...`, `us.meta.llama...`
                head, piece = piece.split(".", 1)
                providers.add(head)
                if re.match(r"^[a-z]+\.[a-z]", piece):
                    head, piece = piece.split(".", 1)
                    providers.add(head)
            if piece:
                models.add(piece)
    return models, providers


def _add(trie: Trie, tokens: tuple[str, ...]) -> None:
    node = trie
    for token in tokens:
        node = node.setdefault(token, {})
    node[_END] = True


@lru_cache(maxsize=1)
def base_trie() -> Trie:
    """Every name masked in every request (the list above, without the candidate's own names).

    Built once per machine: reading litellm's map and the list costs ~0.05-0.09 CPU-s, which every
    grade with a judge paid. The trie is kept in the cache folder as JSON (`blinding/`, ~70 kB), under
    the sha256 of what it is built from: the map file, the word list and this module's code. A stored
    trie that cannot be read or is not a trie is built again; one that cannot be written is not kept
    (no error either way)."""
    path = _stored_trie_path()
    stored = _read_trie(path) if path is not None else None
    if stored is not None:
        return stored
    trie = _build_base_trie()
    if path is not None:
        with suppress(OSError):
            write_atomic(path, json.dumps(trie, ensure_ascii=False, separators=(",", ":")))
    return trie


_STORED_LIMIT = 8 << 20  # bytes of a stored trie read (the built one is ~70 kB)


def _stored_trie_path() -> Path | None:
    from judge.errors import ConfigError
    from judge.judges.cache import default_cache_dir

    try:
        root = default_cache_dir()
    except ConfigError:  # a cache folder that is no folder: the grade says so where it opens the cache
        return None
    spec = find_spec("litellm")
    source = Path(spec.origin).with_name(_MAP_FILE) if spec is not None and spec.origin else None
    digest = hashlib.sha256()
    try:  # ~0.01 CPU-s for the 3.5 MB map: its content, not its size and time, which a reinstall may keep
        for part in (source, WORDS_FILE, Path(__file__)):
            data = part.read_bytes() if part is not None and part.is_file() else b"absent"
            digest.update(hashlib.sha256(data).digest())
    except OSError:
        return None
    key = digest.hexdigest()
    return root / "blinding" / f"base-trie-{key[:32]}.json"


def _read_trie(path: Path) -> Trie | None:
    try:
        with path.open("rb") as handle:
            data = handle.read(_STORED_LIMIT + 1)
        trie = json.loads(data) if len(data) <= _STORED_LIMIT else None
    except (OSError, ValueError, RecursionError):
        return None
    try:
        return trie if isinstance(trie, dict) and _is_trie(trie) else None
    except RecursionError:  # nesting json.loads still read
        return None


def _is_trie(node: dict[str, object]) -> bool:
    return all(isinstance(value, dict) and _is_trie(value) if key != _END else value is True
               for key, value in node.items())


def _build_base_trie() -> Trie:
    mask, keep = _word_lists()
    models, providers = litellm_names()
    trie: Trie = {}
    families: dict[tuple[str, ...], int] = {}
    for model in models:
        tokens = words(model)
        if not any(t.isalpha() and len(t) > 1 for t in tokens):
            continue  # `1024-x-1024` is an image size, not a name
        if len(tokens) > 1 and _distinct(tokens, keep):  # one word alone (`replace`, `best`) is no name
            _add(trie, tokens)
            family = words(re.split(r"[-_.@ ]", model)[0])
            families[family] = families.get(family, 0) + 1
    for provider in providers:
        tokens = words(provider)
        if tokens and _distinct(tokens, keep):
            _add(trie, tokens)
    for family, count in families.items():
        if count > 1 and _distinct(family, keep):  # the first word of two model names or more
            _add(trie, family)
    for word in mask:
        _add(trie, words(word))
    return trie


def _distinct(tokens: tuple[str, ...], keep: set[str]) -> bool:
    """May these words be masked on their own: not an everyday word (`keep`), not a short English
    word (`in`, `pro`: one word needs four letters), not a bare number; `o1`, `gpt4` and `j2` may."""
    if len(tokens) == 1:
        word = tokens[0]
        return word not in keep and word.isalpha() and len(word) >= 4
    return any(t.isalpha() and len(t) > 1 for t in tokens) and "".join(tokens) not in keep


def _candidate_trie(names: Iterable[str | None]) -> Trie | None:
    extra = []
    for name in names:
        if not name or not str(name).strip():
            continue
        for variant in {str(name).strip(), str(name).strip().rsplit("/", 1)[-1]}:
            tokens = words(variant)
            # A bare "1" or "v2" would mask every such word: too short to be the candidate's name.
            if tokens and sum(map(len, tokens)) >= 3 and not (len(tokens) == 1 and tokens[0].isdigit()):
                extra.append(tokens)
    if not extra:
        return None
    trie = _copy(base_trie(), extra)
    for tokens in extra:
        _add(trie, tokens)
    return trie


def _copy(trie: Trie, extra: list[tuple[str, ...]]) -> Trie:
    """A copy of the nodes the extra names pass through (the rest is shared, never changed)."""
    out = dict(trie)
    firsts = {t[0] for t in extra}
    for first in firsts:
        if first in out:
            out[first] = _deep(out[first])
    return out


def _deep(node: Trie) -> Trie:
    return {k: (_deep(v) if isinstance(v, dict) else v) for k, v in node.items()}


@lru_cache(maxsize=64)
def _trie_for(names: tuple[str | None, ...], generic: bool = True) -> Trie | None:
    if not generic:
        return _candidate_only(names)
    return _candidate_trie(names) or base_trie()


def _candidate_only(names: tuple[str | None, ...]) -> Trie | None:
    """A trie of the candidate's own names alone (for keys and identifiers); None without names."""
    base = _candidate_trie(names)
    if base is None:
        return None
    trie: Trie = {}
    for name in names:
        if not name or not str(name).strip():
            continue
        for variant in {str(name).strip(), str(name).strip().rsplit("/", 1)[-1]}:
            tokens = words(variant)
            if tokens and sum(map(len, tokens)) >= 3 and not (len(tokens) == 1 and tokens[0].isdigit()):
                _add(trie, tokens)
    return trie or None


def _absorb_version(text: str, tokens: list[tuple[int, int, str]], best: int) -> int:
    """Past a name, its version: numbers and one- or two-letter words (`phi` `-3`, `qwen2` `.5`, `-r`)."""
    k = best + 1
    while k < len(tokens):
        joiner = text[tokens[k - 1][1]:tokens[k][0]]
        word = tokens[k][2]
        if not ((word.isdigit() and joiner in ("", "-", ".", "_", " ")) or
                (len(word) <= 2 and word.isascii() and joiner in ("", "-", ".", "_"))):
            break
        best, k = k, k + 1
    return best


def mask_names(text: str, names: Iterable[str | None] = (), *, generic: bool = True) -> str:
    """`text` with every model, vendor and candidate name replaced by MASK (found on its folded
    copy; the text is otherwise left as it is). `generic=False`: the candidate's names only (a key
    or an identifier)."""
    trie = _trie_for(tuple(names), generic)
    if trie is None:
        return text
    source = text
    folded = fold(text)
    text = _SPACES.sub(" ", folded.text) if not folded.text.isascii() else folded.text
    tokens = [(m.start(), m.end(), m.group().casefold()) for m in _TOKEN.finditer(text)]
    out, pos, i, n = [], 0, 0, len(tokens)
    while i < n:
        node, j, best = trie.get(tokens[i][2]), i, -1
        while node is not None:
            if _END in node:
                best = j
            j += 1
            if j >= n or text[tokens[j - 1][1]:tokens[j][0]] not in _JOINERS:
                break
            node = node.get(tokens[j][2])
        if best < 0:
            i += 1
            continue
        best = _absorb_version(text, tokens, best)
        start, end = folded.original(tokens[i][0], tokens[best][1])
        out.append(source[pos:start])
        out.append(MASK)
        pos = end
        i = best + 1
    if not out:
        return source
    out.append(source[pos:])
    return "".join(out)
