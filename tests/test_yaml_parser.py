"""Scenario files are parsed by libyaml (C) under PyYAML's composer when libyaml is installed: the
nodes, the line numbers and every error must be the pure-Python parser's (judge.ledger.fixture)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from judge.errors import FixtureError
from judge.ledger import fixture

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(fixture._FAST is None, reason="PyYAML built without libyaml")


def _tree(node):
    """A node as nested tuples: tag, value, and the line and column of its start."""
    if isinstance(node, yaml.ScalarNode):
        value = node.value
    elif isinstance(node, yaml.MappingNode):
        value = tuple((_tree(k), _tree(v)) for k, v in node.value)
    else:
        value = tuple(_tree(item) for item in node.value)
    return node.tag, value, node.start_mark.line, node.start_mark.column


def _yaml_files() -> list[Path]:
    found = [p for d in ("examples", "judge", "docs") for p in (ROOT / d).rglob("*.y*ml")]
    return sorted(p for p in found if p.suffix in (".yaml", ".yml"))


def _pure(text: str):
    return yaml.compose(text, Loader=fixture._BoundedLoader)


def test_the_fast_loader_is_libyaml_under_the_bounded_composer():
    assert fixture._FAST is not None
    mro = fixture._FAST.__mro__
    assert mro.index(fixture._Bounded) < mro.index(yaml.composer.Composer) < mro.index(yaml._yaml.CParser)


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_bundled_yaml_file_composes_to_the_same_nodes(path: Path):
    text = path.read_text(encoding="utf-8")
    assert _tree(yaml.compose(text, Loader=fixture._FAST)) == _tree(_pure(text))
    assert fixture.parse_structured(text, "x") == _parse_pure(text)


def _parse_pure(text: str):
    saved, fixture._FAST = fixture._FAST, None
    try:
        return fixture.parse_structured(text, "x")
    except FixtureError as exc:
        return str(exc)
    finally:
        fixture._FAST = saved


def _parse(text: str):
    try:
        return fixture.parse_structured(text, "x")
    except FixtureError as exc:
        return str(exc)


TEXTS = [
    "a: 1\nb: [1, 2.5, true, null, ~, 0x1f, 1e5, 2001-12-14]\nc: {d: 'x', e: \"y\\u00e9\"}\n",
    "base: &b {x: 1, y: [1, 2]}\nuse: *b\nmore: *b\n",
    "- a\n- - b\n  - c: |\n      block\n      text\n- >\n  folded\n  text\n",
    "key: [1, 2\n",                     # unclosed flow sequence
    "a: 1\na: 2\n",                      # duplicate key (ours)
    "a:\n\t- 1\n",                       # a tab where indentation is
    "a: *nowhere\n",                     # unknown alias
    "a: b: c\n",                         # mapping values not allowed here
    "a: \ud800\n",                       # a lone surrogate (libyaml cannot encode it)
    "a: \x07\n",                         # a control character
    "? [a, b]\n: c\n",                   # a complex key (ours refuses it)
    "%YAML 1.1\n---\na: 1\n",
    "a: 1\n---\nb: 2\n",                 # two documents
    "\ufeffa: 1\n",                      # a byte order mark
    "[" * 60 + "]" * 60,                 # nesting past MAX_DEPTH
    "a: &a [x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
    "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n",  # a bomb
    '{"a": 1, "b": [1, 2]}',             # JSON
    '{"a": 1e5, "b": "\\ud83d"}',        # JSON YAML reads differently
    "",
    "# only a comment\n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_results_and_errors_are_the_pure_parsers(text: str):
    assert _parse(text) == _parse_pure(text)


def test_the_fast_path_refuses_a_bomb_at_the_same_line():
    bomb = TEXTS[15]
    message = _parse(bomb)
    assert isinstance(message, str) and "aliases" in message and "expand" in message, message
    assert message == _parse_pure(bomb)
