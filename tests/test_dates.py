"""Dates in common formats as comparable forms (judge.text.dates)."""

from __future__ import annotations

import pytest

from judge.text.dates import date_forms, dates_in, sayers, with_day_index


@pytest.mark.parametrize("value, forms", [
    ("2024-03-05", {"2024-03-05"}), ("2024/3/5", {"2024-03-05"}), ("2024-03-05T10:00:00Z", {"2024-03-05"}),
    ("2024-03-05 10:00", {"2024-03-05"}), ("March 5, 2024", {"2024-03-05"}), ("5 March 2024", {"2024-03-05"}),
    ("5th of March", {"--03-05"}), ("Mar. 5th", {"--03-05"}), ("13/05/24", {"2024-05-13"}),
    ("03/05/2024", {"2024-03-05", "2024-05-03"}), ("05.03.2024", {"2024-03-05", "2024-05-03"}),
    ("Feb 29", {"--02-29"}),
])
def test_a_date_value_has_its_forms(value, forms):
    assert date_forms(value) == forms


@pytest.mark.parametrize("value", ["2024-02-30", "13/13/2024", "tomorrow", "order 12", "March 5 at noon", "1.2.3",
                                   "2024-03-05 and more", 20240305, "x" * 80])
def test_anything_else_is_no_date(value):
    assert date_forms(value) == frozenset()


def test_dates_in_a_text_and_who_says_them():
    found = with_day_index(dates_in("Fly March 5, 2024 or 2024-04-01, back on the 6th of May; call 555-1234."))
    assert {"2024-03-05", "2024-04-01", "--05-06", "*-03-05"} <= found and not any("12" in f for f in found)
    assert "--05-06" in sayers("2025-05-06") and "*-03-05" in sayers("--03-05")
