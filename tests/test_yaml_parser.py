"""Scenario, policy and manifest files are read by PyYAML's pure-Python parser, never by libyaml's.

libyaml (PyYAML's C parser) is ~8x faster, and was used for a few hours (stop 32, with the pure parser
only for the texts libyaml refused). A mutation fuzz of the bundled YAML files then showed it is not
the same parser: of 3,000 mutated files, 99 that the pure parser refuses were accepted, and 36 were
read into other trees (other values, tags or columns). The texts below are small cases of each kind:
the reader must give the pure parser's answer for every one, and libyaml must still disagree (else
this test no longer says anything and may go).
"""

from __future__ import annotations

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


def _libyaml_composer():
    from yaml._yaml import CParser
    from yaml.composer import Composer
    from yaml.constructor import SafeConstructor
    from yaml.resolver import Resolver

    class ComposingCParser(Composer, CParser, SafeConstructor, Resolver):
        def __init__(self, stream):
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
    return ComposingCParser


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
        assert _composed(text, _libyaml_composer()) != pure


def test_the_bounded_loader_is_the_pure_python_one():
    mro = fixture._BoundedLoader.__mro__
    assert yaml.SafeLoader in mro and all(not c.__module__.startswith("yaml._yaml") for c in mro)
