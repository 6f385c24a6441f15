"""EventIds: a report's slice kept compactly (issue 26, memory by construction). It must behave as the
list of ids it stands for, serialize as that list, and cost far less memory than the list."""

from __future__ import annotations

import json
import pickle
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from judge.model import GradeReport
from judge.model.event_ids import EventIds, SliceIds, membership
from judge.render.json_text import json_chunks

ids_lists = st.lists(st.text(max_size=12), max_size=60)


def _as_list_everywhere(compact: EventIds, ids: list[str]) -> None:
    assert len(compact) == len(ids) and list(compact) == ids and compact == ids and bool(compact) == bool(ids)
    for i in range(-len(ids), len(ids)):
        assert compact[i] == ids[i]
    for bad in (len(ids), -len(ids) - 1):
        with pytest.raises(IndexError):
            compact[bad]
    for cut in (slice(None, 3), slice(-3, None), slice(1, -1, 2), slice(None, None, -1)):
        assert compact[cut] == ids[cut]
    assert pickle.loads(pickle.dumps(compact)) == ids
    assert all(name in compact for name in ids[:5]) and ("\x00never" in compact) == ("\x00never" in ids)


@pytest.mark.slow
@given(ids_lists)
def test_collected_ids_are_the_list_they_were_made_from(ids):
    _as_list_everywhere(EventIds.collect(iter(ids)), ids)


@pytest.mark.slow
@given(st.text(max_size=4), st.integers(0, 10**9), st.integers(0, 40))
def test_numbered_ids_are_the_list_of_their_numbers(prefix, first, count):
    assert EventIds.numbered(prefix, first, count).in_a_row and not EventIds.collect(["e1"]).in_a_row
    _as_list_everywhere(EventIds.numbered(prefix, first, count), [f"{prefix}{first + i}" for i in range(count)])


# Questions a numbered id list answers by arithmetic: near misses of every kind.
_ASKED = st.one_of(st.text(max_size=8), st.sampled_from(["e", "e0", "e00", "e07", "e-1", "e+1", "e 1", "e\u0661",
                                                          "e\u00b2", "e1.0", "E1", "e1e", "1", "", "e12345678901234567890"]))


@given(st.sampled_from(["", "e", "e1", "evt-", "0"]), st.integers(0, 120), st.integers(0, 30),
       st.lists(st.one_of(_ASKED, st.integers(0, 200).map(lambda n: f"e{n}"), st.integers(0, 200).map(str)), max_size=20))
def test_a_numbered_list_answers_in_as_its_list_does(prefix, first, count, asked):
    compact, ids = EventIds.numbered(prefix, first, count), [f"{prefix}{first + i}" for i in range(count)]
    for name in [*asked, *ids[:3], *ids[-3:], f"{prefix}{first - 1}", f"{prefix}{first + count}", f"{prefix}0{first}"]:
        assert (name in compact) == (name in ids), name
    assert membership(compact) is compact  # asked as it is: no id is made
    assert 42 not in compact and None not in compact


def test_membership_of_other_ids_is_a_set_of_them():
    collected = EventIds.collect(["a", "b7", "c"])
    assert membership(collected) == {"a", "b7", "c"} and membership(["x", "y"]) == {"x", "y"}


def test_numbered_ids_refuse_negative_numbers():
    with pytest.raises(ValueError, match="first >= 0"):
        EventIds.numbered("e", -1, 3)


def test_equality_is_by_value_and_never_with_a_string():
    assert EventIds.numbered("e", 1, 2) == EventIds.collect(["e1", "e2"]) == ("e1", "e2")
    assert EventIds.numbered("e", 1, 2) != ["e1", "e3"] and EventIds.numbered("e", 1, 2) != ["e1"]
    assert EventIds.collect(["ab"]) != "ab" and EventIds.collect(["a", "b"]) != "ab"


@pytest.mark.slow
def test_a_hundred_thousand_ids_cost_a_fraction_of_their_list():
    names = (f"evt-{i:x}" for i in range(100_000))
    tracemalloc.start()
    try:
        compact = EventIds.collect(names)
        kept, _ = tracemalloc.get_traced_memory()
        as_list = list(compact)
        both, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept < 20 * 100_000  # 9 characters and an 8-byte offset an id
    assert both - kept > 3 * kept  # the same ids as a list of str: ~66 bytes an id
    assert as_list[-1] == "evt-1869f"
    tracemalloc.start()
    try:
        numbered = EventIds.numbered("e", 1, 10**6)
        assert tracemalloc.get_traced_memory()[0] < 10_000 and numbered[-1] == "e1000000"
    finally:
        tracemalloc.stop()


class _Holder(BaseModel):
    model_config = ConfigDict(extra="forbid")
    slice: SliceIds


def test_the_field_reads_a_json_list_and_keeps_compact_ids_as_they_are():
    assert _Holder.model_json_schema()["properties"]["slice"] == {"items": {"type": "string"}, "title": "Slice",
                                                                  "type": "array"}
    read = _Holder.model_validate_json('{"slice": ["e1", "x"]}')
    assert read.slice == ["e1", "x"] and isinstance(read.slice, list)
    compact = EventIds.numbered("e", 3, 2)
    held = _Holder(slice=compact)
    assert held.slice is compact
    assert held.model_dump() == {"slice": ["e3", "e4"]} == held.model_dump(mode="json")
    assert json.loads(held.model_dump_json()) == {"slice": ["e3", "e4"]}
    with pytest.raises(ValueError):
        _Holder(slice=[1, 2])  # type: ignore[list-item]


def _report(slices: list) -> GradeReport:
    run = json.loads((_example_report()).model_dump_json())
    runs = []
    for i in range(len(slices)):
        runs.append({**run, "run_id": f"r{i}", "slice": []})
    report = GradeReport.model_validate({"judge": None, "floor": 1.0, "runs": runs})
    for r, ids in zip(report.runs, slices, strict=True):
        r.slice = ids
    return report


def _example_report():
    from pathlib import Path

    from judge.grade import grade_trace
    from judge.ledger import load_ledger

    folder = Path(__file__).resolve().parents[1] / "examples" / "checkout-firefox"
    return grade_trace(load_ledger(folder / "scenario.yaml"), folder / "drift.jsonl")


def test_json_chunks_write_the_text_json_dumps_writes():
    """Compact slices (numbered, collected, empty, odd characters) spliced in a few thousand ids at
    a time give exactly the contract's text; a forged mark in trace text stays text."""
    forged = "\x00" + "0" * 32 + ":0\x00"
    slices = [EventIds.numbered("e", 1, 9000), EventIds.collect(["é\"1", "\\x", forged, "\n", "\x00"]),
              EventIds.collect([]), ["plain", "list"], EventIds.numbered("c", 7, 1)]
    report = _report(slices)
    expected = json.dumps(report.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False) + "\n"
    pieces = list(json_chunks(report))
    assert "".join(pieces) == expected
    assert len(pieces) > 5  # the 9,000 numbered ids came in batches, not as one text
    assert json.loads(expected)["runs"][1]["slice"][2] == forged
