"""Numbers and money amounts, read strictly: in a tool argument (`readings`) and in a text (`numbers_in`).

A value is read as a number when it is one (an int or a finite float, never a bool) or a string
that is nothing but a number with an optional sign and currency: "80", "-5", "$80.00", "80 USD",
"USD 80", "80 dollars", "1,200.50", "€1.200,50", "1 200,50 €", "1'200.50", "12,5". Anything else
("3 items", "eighty", "1.5e3", "80.5.3", "1,20,0") is not a number: a check must not guess.

`readings` gives every number a value can mean. Most have one. A single `,` or `.` followed by
exactly three digits may group thousands or mark decimals ("1,200" is 1200 in English and 1.2 in
German; "1.200" the other way round), and nothing in the value says which, so it has two readings,
1200 and 1.2; a caller decides with both (a limit check: when both are on the same side of the
bound the answer is clear). Two different separators ("1,200.50", "1.200,50"), a repeated one
("1,234,567"), a space or an apostrophe (only ever a thousands mark) or a first group that cannot
start a thousands grouping ("0,500", "1234,567") leave one reading.

Why not a library: `price-parser` extracts a price from any scraped string ("3 items" -> 3, "-5" ->
5, "1.5e3" -> 1.5, "1.200" -> 1200 with no word of doubt), which is right for scraping and wrong for
a bound that decides a veto; babel's `parse_decimal` needs the locale, which a tool argument never
names. The rules here are short enough to read at once, and they refuse what they cannot tell.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from judge.text.lazy_regex import lazy
from judge.text.lexicon import NUMBER_WORDS

MAX_CHARS = 64
"""Longer strings are never read as a number (a bound on the work per value)."""

_SYMBOLS = "$€£¥₹₩₽₺₪₫฿₴₦¢"
_CODES = frozenset("usd eur gbp jpy chf cad aud nzd cny inr sek nok dkk pln czk huf brl mxn zar krw "
                   "sgd hkd try rub ils".split())
_WORDS = r"(?:dollars?|euros?|pounds?|yen|francs?|rupees?|bucks)"
_CURRENCY = rf"(?:[A-Z]{{1,3}}\$|[{_SYMBOLS}]|[A-Za-z]{{3}})"
_AMOUNT = lazy(
    rf"(?P<s1>[+\-\u2212])?\s*(?P<pre>{_CURRENCY})?\s*(?P<s2>[+\-\u2212])?\s*"
    r"(?P<body>\d(?:[\d.,'\u00a0\u202f ]{0,40}\d)?|[.,]\d{1,20})"
    rf"\s*(?P<post>{_WORDS}|{_CURRENCY})?", re.IGNORECASE)
_GROUPING_ONLY = frozenset("'\u00a0\u202f ")
_IN_TEXT = lazy(r"(?<![\w.,\-\u2212])(?P<sign>[\-\u2212])?(?<![\d.,])"
                r"(?P<number>\d{1,3}(?:[,.'\u2019]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)(?!\d)")
_WORD = lazy(r"[a-z]+", re.IGNORECASE)


def _is_currency(token: str | None) -> bool:
    if token is None or re.fullmatch(_WORDS, token, re.IGNORECASE):
        return True
    if len(token) == 3 and token.isalpha():
        return token.isupper() or token.casefold() in _CODES
    return True


def readings(value: Any) -> tuple[Decimal, ...]:
    """Every number `value` can mean, smallest first; () when it is not a number."""
    if isinstance(value, bool) or value is None:
        return ()
    if isinstance(value, int):
        return (Decimal(value),)
    if isinstance(value, float):
        return (Decimal(repr(value)),) if math.isfinite(value) else ()
    if isinstance(value, Decimal):
        return (value,) if value.is_finite() else ()
    if not isinstance(value, str) or len(value) > MAX_CHARS:
        return ()
    found = _AMOUNT.fullmatch(value.strip())
    if found is None or (found["s1"] and found["s2"]) or (found["pre"] and found["post"]):
        return ()
    if not (_is_currency(found["pre"]) and _is_currency(found["post"])):
        return ()
    negative = (found["s1"] or found["s2"] or "+") != "+"
    return tuple(sorted({-n if negative else n for n in _body(found["body"])}))


def _body(body: str) -> list[Decimal]:
    """The readings of the digits and separators of a number."""
    groups = re.split(r"[^\d]", body)
    seps = [c for c in body if not c.isdigit()]
    if not seps:
        return [Decimal(body)]
    if "" in groups[1:]:  # two separators in a row, or one at the end
        return []
    if groups[0] == "":  # ".5"
        return [Decimal("0." + groups[1])] if len(seps) == 1 and seps[0] in ".," else []
    kinds = list(dict.fromkeys(seps))
    if len(kinds) == 2:
        point, mark = seps[-1], kinds[0]
        if point not in ".," or seps.count(point) != 1 or point == mark:
            return []
        whole = _grouped(groups[:-1])
        return [Decimal(f"{whole}.{groups[-1]}")] if whole is not None else []
    if len(kinds) > 2:
        return []
    mark = kinds[0]
    if mark in _GROUPING_ONLY or len(seps) > 1:
        whole = _grouped(groups)
        return [Decimal(whole)] if whole is not None else []
    left, right = groups
    as_decimal = Decimal(f"{left}.{right}")
    if len(right) != 3 or _grouped(groups) is None:
        return [as_decimal]
    return [as_decimal, Decimal(left + right)]


def _grouped(groups: list[str]) -> str | None:
    """The digits of a thousands grouping ("1", "234", "567"), or None when it is none."""
    first, rest = groups[0], groups[1:]
    if not 1 <= len(first) <= 3 or first.startswith("0") or any(len(g) != 3 for g in rest):
        return None
    return "".join(groups)


def canonical(number: Decimal) -> str:
    """A number as plain digits, without trailing zeros or exponent: 80.00 -> "80", 1200.50 -> "1200.5"."""
    text = format(number.normalize(), "f")
    return "0" if text in ("-0", "") else text


def canonical_readings(value: Any) -> frozenset[str]:
    """`readings(value)` as canonical strings."""
    try:
        return frozenset(canonical(n) for n in readings(value))
    except InvalidOperation:
        return frozenset()


def numbers_in(text: str) -> set[str]:
    """The canonical readings of every number written in `text` in digits ("$45.00", "1,200",
    "2024") or as a plain number word ("two", "twelve", "hundred")."""
    out: set[str] = set()
    seen: set[str] = set()  # a number written many times is read once
    for match in _IN_TEXT.finditer(text):
        written = match.group(0)
        if written in seen:
            continue
        seen.add(written)
        sign = -1 if match["sign"] else 1
        out.update(canonical(sign * n) for n in _body(match["number"].replace("\u2019", "'")))
    for word in _WORD.findall(text):
        number = NUMBER_WORDS.get(word.lower())
        if number is not None:
            out.add(canonical(Decimal(str(number))))
    return out
