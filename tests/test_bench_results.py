"""benchmarks/_results.py writes one named section of RESULTS.md and leaves the others alone."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_results", REPO / "benchmarks" / "_results.py")
results = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(results)

DOC = "# Benchmark results\n\nIntro.\n\n## A\n\nold a\n\n### A detail\n\nmore a\n\n## B (b.py)\n\nb text\n"


def test_a_section_is_replaced_in_place_subsections_included(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(DOC)
    results.write_section("A", "new a\n", path)
    assert path.read_text() == "# Benchmark results\n\nIntro.\n\n## A\n\nnew a\n\n## B (b.py)\n\nb text\n"


def test_the_last_section_is_replaced_and_a_new_one_appended(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(DOC)
    results.write_section("B (b.py)", "\nnew b\n\n", path)
    results.write_section("C", "c", path)
    text = path.read_text()
    assert text.endswith("more a\n\n## B (b.py)\n\nnew b\n\n## C\n\nc\n")
    assert text.count("## ") == 4 and "b text" not in text


def test_only_the_exact_title_matches_and_a_missing_file_is_created(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(DOC)
    results.write_section("B", "just b", path)  # not "B (b.py)"
    assert "b text" in path.read_text() and path.read_text().endswith("## B\n\njust b\n")
    fresh = tmp_path / "new.md"
    results.write_section("A", "a", fresh)
    assert fresh.read_text() == "# Benchmark results\n\n## A\n\na\n"


def test_writing_a_section_twice_changes_nothing_more(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(DOC)
    results.write_section("A", "new a", path)
    once = path.read_text()
    results.write_section("A", "new a", path)
    assert path.read_text() == once


def test_a_sections_kept_tail_stays_under_the_new_figures(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(DOC.replace("more a\n", f"more a\n\n{results.KEPT} by hand -->\n\nWhy: analysis.\n"))
    results.write_section("A", "new a", path)
    results.write_section("A", "newer a", path)
    assert path.read_text() == ("# Benchmark results\n\nIntro.\n\n## A\n\nnewer a\n\n"
                                f"{results.KEPT} by hand -->\n\nWhy: analysis.\n\n## B (b.py)\n\nb text\n")
