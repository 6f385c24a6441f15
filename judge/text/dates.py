"""Calendar dates written in common formats, as comparable forms.

"2024-03-05", "2024/03/05", "March 5, 2024", "5 March 2024", "Mar 5th", "5th of March" and
"05.03.2024" are the same day when the numbers agree; `date_forms` gives a date's forms (`Y-M-D`,
or `--M-D` when no year is written), `dates_in` those of every date a text writes. A day and a
month written as numbers in either order ("03/05/2024") may be the 3rd of May or the 5th of March:
such a date has both forms (both are "said"), unless one number is over 12. Relative dates
("tomorrow", "next Friday") are not resolved: they name no date without a calendar.

Why not python-dateutil: its parser reads one whole string, guessing freely (fuzzy mode finds a
date in "order 12"), and says nothing about the other order of day and month; finding every date in
a text, and keeping both readings of an ambiguous one, is the part needed here.
"""

from __future__ import annotations

import re
from datetime import date

from judge.text.lazy_regex import lazy

MAX_CHARS = 64
"""Longer argument values are never read as a date."""

_MONTHS = {name: i + 1 for i, names in enumerate((
    "january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul", "august aug",
    "september sept sep", "october oct", "november nov", "december dec")) for name in names.split()}
_MONTH = r"(?P<{0}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?(?![a-z])"
_DAY = r"(?P<{0}>\d{{1,2}})(?:st|nd|rd|th)?(?![\d])"
_YEAR = r"(?:,?\s+(?P<{0}>\d{{4}})(?!\d))?"
_DATES = lazy("|".join([
    r"(?<![\d.])(?P<iy>\d{4})[-/.](?P<im>\d{1,2})[-/.](?P<id>\d{1,2})(?!\d)",
    r"(?<![\d.])(?P<na>\d{1,2})[-/.](?P<nb>\d{1,2})[-/.](?P<ny>\d{4}|\d{2})(?![\d])",
    r"(?<![\w])" + _DAY.format("dd") + r"\s+(?:of\s+)?" + _MONTH.format("dm") + _YEAR.format("dy"),
    r"(?<![\w])" + _MONTH.format("mm") + r"\s+" + _DAY.format("md") + _YEAR.format("my"),
]), re.IGNORECASE)
_TIME = lazy(r"(?:[T\s]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}:?\d{2}|[ap]\.?m\.?)?)?\s*",
             re.IGNORECASE)


def _form(year: int | None, month: int, day: int) -> str | None:
    try:
        date(2000 if year is None else year, month, day)  # 2000: a leap year, so "Feb 29" is a date
    except ValueError:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}" if year is not None else f"--{month:02d}-{day:02d}"


def _year(text: str | None) -> int | None:
    if not text:
        return None
    return int(text) + 2000 if len(text) == 2 else int(text)


def _forms(match: re.Match[str]) -> set[str]:
    g = match.groupdict()
    candidates: list[tuple[int | None, int, int]]
    if g["iy"]:
        candidates = [(int(g["iy"]), int(g["im"]), int(g["id"]))]
    elif g["na"]:
        a, b, year = int(g["na"]), int(g["nb"]), _year(g["ny"])
        candidates = [(year, b, a), (year, a, b)]  # day first, month first
    elif g["dd"]:
        candidates = [(_year(g["dy"]), _MONTHS[g["dm"].lower()], int(g["dd"]))]
    else:
        candidates = [(_year(g["my"]), _MONTHS[g["mm"].lower()], int(g["md"]))]
    return {form for form in (_form(*c) for c in candidates) if form is not None}


def date_spans(text: str) -> list[tuple[int, int]]:
    """Where dates are written in `text` (start, end): "12-19 May" holds the month May, not the verb."""
    return [match.span() for match in _DATES.finditer(text or "") if _forms(match)]


def dates_in(text: str) -> set[str]:
    """The forms of every date written in `text`."""
    out: set[str] = set()
    seen: set[str] = set()  # a date written many times is read once
    for match in _DATES.finditer(text or ""):
        if match.group(0) not in seen:
            seen.add(match.group(0))
            out |= _forms(match)
    return out


def date_forms(value: object) -> frozenset[str]:
    """The forms of a value that is a date (optionally with a time of day), else an empty set."""
    if not isinstance(value, str) or len(value) > MAX_CHARS:
        return frozenset()
    text = value.strip()
    match = _DATES.match(text)
    if match is None or not _TIME.fullmatch(text, match.end()):
        return frozenset()
    return frozenset(_forms(match))


def sayers(form: str) -> tuple[str, ...]:
    """The forms (as `dates_in` and `with_day_index` give them) that say a date of this form: the
    same day, and for a date with a year the same month and day said without one; for a date
    without a year, the same month and day said with any year (the index form `*-M-D`)."""
    if form.startswith("--"):
        return form, "*" + form[1:]
    return form, "--" + form[5:]


def with_day_index(forms: set[str]) -> set[str]:
    """`forms` with, for each dated form `Y-M-D`, the index form `*-M-D` that `sayers` names for a
    date without a year."""
    return forms | {"*-" + f[5:] for f in forms if not f.startswith("--")}
