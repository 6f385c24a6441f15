"""Numbers and money read strictly (judge.text.amounts): one reading where the value says which,
two where a lone separator with three digits may group thousands or mark decimals, none for text."""

from __future__ import annotations

from decimal import Decimal

import pytest

from judge.text.amounts import canonical, numbers_in, readings


@pytest.mark.parametrize("value, expected", [
    (80, ["80"]), (80.5, ["80.5"]), ("80", ["80"]), ("  80 ", ["80"]), ("-5", ["-5"]), ("$80.00", ["80"]),
    ("80 USD", ["80"]), ("USD 80", ["80"]), ("80 usd", ["80"]), ("80 dollars", ["80"]), ("80 yen", ["80"]),
    ("£0.99", ["0.99"]), ("US$80", ["80"]), ("-$80", ["-80"]), ("$-80", ["-80"]),
    ("1,200.50", ["1200.5"]), ("€1.200,50", ["1200.5"]), ("1 200,50 €", ["1200.5"]), ("1'200.50", ["1200.5"]),
    ("1,234,567", ["1234567"]), ("1.234.567", ["1234567"]), ("12,5", ["12.5"]), (".5", ["0.5"]),
    ("0,500", ["0.5"]), ("1234,567", ["1234.567"]),
    ("1,200", ["1.2", "1200"]), ("1.200", ["1.2", "1200"]), ("$1,234", ["1.234", "1234"]),
])
def test_a_number_or_an_amount_reads(value, expected):
    assert [canonical(n) for n in readings(value)] == expected


@pytest.mark.parametrize("value", [
    True, False, None, float("nan"), float("inf"), "", "abc", "eighty", "3 items", "10%", "1.5e3", "80.5.3",
    "1,2,3", "1,,2", "1,20,0", "1,234.567.8", "abc 80", "80 abc", "--5", "$80 USD", "8" * 65, {"amount": 80}, [80],
])
def test_anything_else_is_no_number(value):
    assert readings(value) == ()


def test_readings_are_decimals_compared_exactly():
    assert readings("0.1") == (Decimal("0.1"),) and readings(0.1) == (Decimal("0.1"),)


def test_numbers_in_a_text():
    found = numbers_in("Refund $45.00 for order 1,200, not -5; two items, 3.5kg, 2024.")
    assert {"45", "1200", "1.2", "-5", "2", "3.5", "2024"} <= found
    assert "00" not in found and "3" not in found
