"""Scenario, policy and manifest files are read by PyYAML's pure-Python parser, never by libyaml's.

libyaml (PyYAML's C parser) is ~8x faster, and was used for a few hours (stop 32, with the pure parser
only for the texts libyaml refused). A mutation fuzz of the bundled YAML files then showed it is not
the same parser: of 3,000 mutated files, 99 that the pure parser refuses were accepted, and 36 were
read into other trees (other values, tags or columns). The texts below are small cases of each kind:
the reader must give the pure parser's answer for every one, and libyaml must still disagree (else
this test no longer says anything and may go).
"""

from __future__ import annotations

import re

import pytest
import yaml

from judge.errors import FixtureError
from judge.ledger import fixture


def _tree(node):
    """A node as nested tuples: tag, value, and the line and column of its start."""
    if isinstance(node, yaml.ScalarNode):
        value = node.value
    elif isinstance(node, yaml.MappingNode):
        value = tuple((_tree(k), _tree(v)) for k, v in node.value)
    else:
        value = tuple(_tree(item) for item in node.value)
    return node.tag, value, node.start_mark.line, node.start_mark.column


def _composed(text: str, loader):
    try:
        return _tree(yaml.compose(text, Loader=loader))
    except yaml.YAMLError as exc:
        return type(exc).__name__


def _fuzz_script():
    """benchmarks/yaml_fuzz.py as a module (its libyaml loader, its fuzz)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "yaml_fuzz.py"
    spec = importlib.util.spec_from_file_location("yaml_fuzz", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DISAGREE = [
    "a:\t1\n",                                 # a tab after the colon: the pure parser refuses it
    "key: [x, c\tonf]\n",                      # a tab inside a flow scalar
    "- {key:\tgoal, class: goal}\n",
    "{a: x, tool? y}\n",                       # `?` inside a flow mapping's key
    "a: [x,!b, c]\n",                          # a tag right after a comma: other tags, another length
    "- {turn: ,5, op: x}\n",                   # an empty value: another column
    "a:\n  - key: k\n    \ufeffclass: c\n",    # a byte order mark inside a line: another column
    "a: 1\n\ufeff  b: 2\n",                    # ... at a line's start: libyaml refuses it
]


@pytest.mark.parametrize("text", DISAGREE)
def test_the_reader_follows_the_pure_parser_where_libyaml_disagrees(text: str):
    pure = _composed(text, yaml.SafeLoader)
    assert _composed(text, fixture._BoundedLoader) == pure
    if isinstance(pure, str):  # refused: one line naming the file and the line, exit code 2
        with pytest.raises(FixtureError, match=r"x\.yaml"):
            fixture.parse_structured(text, "x.yaml")
    if yaml.__with_libyaml__:
        assert _composed(text, _fuzz_script()._libyaml_loader()) != pure


READ_AS = {  # what the reader gives for the texts the pure parser accepts (libyaml reads them otherwise)
    "a: [x,!b, c]\n": "could not determine a constructor for the tag '!b,'",  # libyaml: tag '!b', 3 items
    "- {turn: ,5, op: x}\n": [{"turn": None, 5: None, "op": "x"}],
    "a:\n  - key: k\n    \ufeffclass: c\n": {"a": [{"key": "k", "\ufeffclass": "c"}]},
    "a: 1\n\ufeff  b: 2\n": {"a": 1, "\ufeff  b": 2},  # libyaml refuses it
}


@pytest.mark.parametrize("text", list(READ_AS))
def test_what_the_pure_parser_accepts_reads_as_it_did(text: str):
    expected = READ_AS[text]
    if isinstance(expected, str):
        with pytest.raises(FixtureError, match=re.escape(expected)):
            fixture.parse_structured(text, "x.yaml")
    else:
        assert fixture.parse_structured(text, "x.yaml")[0] == expected


def test_the_bounded_loader_is_the_pure_python_one():
    mro = fixture._BoundedLoader.__mro__
    assert yaml.SafeLoader in mro and all(not c.__module__.startswith("yaml._yaml") for c in mro)


@pytest.mark.slow
@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
def test_the_fuzz_figures_quoted_are_the_fuzz_scripts():
    """benchmarks/yaml_fuzz.py's docstring (and RESULTS.md) quote its seed-1 figures: they still hold."""
    module = _fuzz_script()
    quoted = re.search(r"Seed 1, 3,000 cases .*?: (\d+) accepted that\s+the pure parser refuses, (\d+) other trees",
                       module.__doc__, re.S)
    assert quoted, module.__doc__
    counts, _ = module.fuzz(1, 3000)
    assert (counts["accepted, pure refuses"], counts["other tree"]) == (int(quoted[1]), int(quoted[2]))
