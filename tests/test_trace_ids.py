"""The reader's compact id set and call table answer exactly as a set and a dict would, before and
after they turn compact (PLAIN_LIMIT made small here), sequential ids (the foretold fast path),
duplicates, gaps, leading zeros, long numbers and names of any shape alike."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge.trace import ids as ids_module
from judge.trace.ids import CallTable, IdSet

_NAMES = st.one_of(
    st.builds(lambda p, n: f"{p}{n}", st.sampled_from(["e", "c", "ev-", "x9y", ""]),
              st.one_of(st.integers(0, 300), st.integers(999_999_990, 1_000_000_010))),
    st.sampled_from(["e01", "e0", "e", "1", "é5", "e１", "call_7", "e٣"]),
    st.text(max_size=6),
)


# Names with sequential stretches (e1, e2, ...) between random ones.
_RUNS = st.lists(st.one_of(_NAMES, st.builds(lambda start, k: [f"e{i}" for i in range(start, start + k)],
                                             st.integers(1, 400), st.integers(1, 40))), max_size=60)


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(ids_module, "PLAIN_LIMIT", 8)


def _flat(items):
    out = []
    for item in items:
        out += item if isinstance(item, list) else [item]
    return out


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_RUNS)
def test_the_id_set_says_new_exactly_when_a_set_would(items):
    ids_module.PLAIN_LIMIT, saved = 8, ids_module.PLAIN_LIMIT
    try:
        seen, plain = IdSet(), set()
        for name in _flat(items) + _flat(items)[:5]:  # some repeated at the end
            assert seen.add(name) is (name not in plain), name
            plain.add(name)
            assert name in seen
        for name in ["e0", "e1", "e2", "e999999999", "zz", "e01"]:
            assert (name in seen) is (name in plain), name
    finally:
        ids_module.PLAIN_LIMIT = saved


def test_sequential_ids_past_the_limit_are_bits_and_a_repeat_is_caught(small_limit):
    seen = IdSet()
    assert all(seen.add(f"e{i}") for i in range(1, 5000))
    assert not seen.add("e4999") and not seen.add("e17") and seen.add("e5000") and not seen.add("e5000")
    assert seen.add("e999999999") and seen.add("e1000000000") and not seen.add("e1000000000")  # 10 digits: a string
    assert len(seen._strings) <= 2  # the numbered ones are bits


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(_NAMES, st.sampled_from(["run_tests", "edit", "deploy"])), max_size=80))
def test_the_call_table_maps_and_refuses_exactly_as_a_dict_would(pairs):
    ids_module.PLAIN_LIMIT, saved = 8, ids_module.PLAIN_LIMIT
    try:
        table, plain = CallTable(), {}
        for call_id, tool in pairs:
            assert table.add(call_id, tool) is (call_id not in plain), call_id
            plain.setdefault(call_id, tool)
            assert table.get(call_id) == plain[call_id]
        for call_id in ["c0", "c1", "zz", *plain]:
            assert table.get(call_id) == plain.get(call_id)
    finally:
        ids_module.PLAIN_LIMIT = saved
