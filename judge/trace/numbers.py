"""Numbers that are personal data: card numbers, US social security numbers, phone numbers, IBANs.

Finding a candidate is ours (one linear pass, see `candidates`); deciding what it is belongs to the
libraries that keep the rules: python-stdnum (the Luhn check of card numbers, the IBAN check digits
and country formats, the SSN ranges that are never issued) and phonenumbers (Google's libphonenumber
metadata: which national numbers are valid in which country).

A candidate is a left-maximal run of up to 16 groups of digits with separators (space, `.`, `-`,
`/`, parentheses; the no-break and thin spaces are spaces on the folded copy detection runs on,
judge.trace.normal) between them, optionally after `+`, and not inside a word (the digits of a hex id are
none). Its groups are tried whole, then as every contiguous window of groups, so a number inside a
longer run (`ref 2024-05-01 4155550123`) is still found. What a window is, in order:

- a card number: 13-19 digits whose Luhn check passes (order ids that fail it are kept);
- a US SSN: `AAA-GG-SSSS` (or with spaces) in the ranges the SSA issues;
- a national id with a check digit (judge.trace.national: China, India, the UK's NHS, Brazil;
  Spain's DNI and NIE, which end in a letter, are found by `national.lettered`);
- a phone number: `+` and 8-15 digits; `00`, a country code and a number with separators; the
  North American shapes `(415) 555-0123`, `415-555-0123`, `415.555.0123` and a Chinese mobile
  `1[3-9]` and 9 digits (all by shape, as before); ten plain digits that are a valid US number; a
  national number written with its trunk `0` (`020 7946 0958`, `030 12345678`, `01 23 45 67 89`, `03-1234-5678`, `(02)
  9876 5432`) of 9-12
  digits that is valid in one of `NATIONAL_REGIONS`.

`classify(..., validate=False)` answers by shape alone; NUMBER_SHAPE is one regex holding every
shape it accepts, which the line precheck runs: it can say yes more often than the detector, never
less.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from judge.trace.national import lettered, national_kind

# Countries whose national format (trunk prefix 0) is recognised without a country code.
NATIONAL_REGIONS = ("GB", "DE", "FR", "JP", "AU", "IT", "NL", "BE", "CH", "AT", "SE", "IE", "NZ", "IN",
                    "KR", "BR", "ZA", "TR")
# Not inside a word: the digits of a hex id (`a000000000000001`, `4bf92f35...`) are no number.
_CANDIDATE = re.compile(r"(?<![\w+])\+?\(?\d++(?:[ .()/-]{1,3}+\d++){0,15}+\)?(?![^\W\d_])")
_GROUP = re.compile(r"\d+")
_SEPARATORS = str.maketrans("", "", " .()/-+")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d\d(?:[ /]?[A-Z0-9]{1,4}){3,8}+")


def candidates(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of every number in `text` that is personal data (validated)."""
    for match in _CANDIDATE.finditer(text):
        yield from _windows(text, match, validate=True)
    yield from lettered(text)


def any_shape(text: str) -> bool:
    """Could `text` hold a number `candidates` would report? (By shape: never too strict.)"""
    return any(next(_windows(text, m, validate=False), None) is not None for m in _CANDIDATE.finditer(text))


# One regex that holds every shape `classify(..., validate=False)` accepts (13 digits or more, an
# SSN, a North American number, ten plain digits, a trunk 0 and 8 more digits; `+` numbers are the
# line precheck's own literal): the precheck runs it, not `any_shape`, on a raw line.
NUMBER_SHAPE = re.compile(r"\d(?:[ .()/-]*+\d){12}|\d{3}[- ]\d\d[- ]\d{4}|\(?\d{3}\)?[ .-]?\d{3}[ .-]\d{4}|\d{10}"
                          r"|(?<!\d)0(?:[ .()/-]*+\d){8}|\d{4}[ -]\d{4}[ -]\d{4}|\d{3}\.\d{3}\.\d{3}-\d\d").search


def _windows(text: str, match: re.Match[str], validate: bool) -> Iterator[tuple[int, int, str]]:
    base = match.start()
    run = match.group()
    groups = [(m.start(), m.end()) for m in _GROUP.finditer(run)][:16]
    total = [0]
    for start, end in groups:
        total.append(total[-1] + end - start)
    n = len(groups)
    i = 0
    while i < n:
        for j in range(min(n, i + 8), i, -1):  # the longest window starting at group i first
            count = total[j] - total[i]
            if count > 19:
                continue
            start, end = groups[i][0], groups[j - 1][1]
            if i == 0 and run[0] in "+(":
                start = 0
            elif start > 0 and run[start - 1] == "(":
                start -= 1
            if count < 8 and run[start] != "+":
                break
            kind = classify(run[start:end], validate)
            if kind is not None:
                yield base + start, base + end, kind
                i = j - 1
                break
        i += 1


@lru_cache(maxsize=16384)
def classify(number: str, validate: bool = True) -> str | None:
    """`card_number`, `ssn`, `phone` or None for one candidate window (digits and separators)."""
    digits = number.translate(_SEPARATORS)
    count = len(digits)
    plain = digits == number
    if 13 <= count <= 19 and not number.startswith("+") and (not validate or _luhn(digits)):
        return "card_number"
    if count == 9 and re.fullmatch(r"\d{3}([- ])\d{2}\1\d{4}", number):
        return "ssn" if not validate or _ssn(number.replace(" ", "-")) else None
    if count in (10, 11, 12, 18):
        national = national_kind(number, digits) if validate else _national_shape(number, digits)
        if national is not None:
            return national
    return _phone(number, digits, plain, validate)


def _national_shape(number: str, digits: str) -> str | None:
    """By shape alone: what `national_kind` could accept (the precheck's question)."""
    from judge.trace.national import AADHAAR, CPF, NHS

    count = len(digits)
    shaped = (count == 18 and number == digits) or (count == 12 and AADHAAR.fullmatch(number)) or \
        (count == 10 and NHS.fullmatch(number)) or (count == 11 and CPF.fullmatch(number))
    return "national_id" if shaped else None


def _phone(number: str, digits: str, plain: bool, validate: bool) -> str | None:
    count = len(digits)
    if number.startswith("+"):
        return "phone" if 8 <= count <= 15 else None
    if re.fullmatch(r"(?:1[ .-]?)?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}", number):
        return "phone"
    if number.startswith("00") and not plain and 10 <= count <= 17:  # 0044 20 7946 0958
        return "phone" if not validate or _valid("+" + digits[2:], ("GB",)) else None
    if plain and count == 11 and re.fullmatch(r"1[3-9]\d{9}", digits):
        return "phone"
    if plain and (count == 10 or (count == 11 and digits[0] == "1")) and digits[-10] not in "01":
        return "phone" if not validate or _valid(digits, ("US",)) else None
    lead = number.lstrip("(")
    if lead.startswith("0") and 9 <= count <= 12:
        return "phone" if not validate or _valid(number, NATIONAL_REGIONS) else None
    return None


def _luhn(digits: str) -> bool:
    from stdnum import luhn

    return luhn.is_valid(digits)


def luhn_ok(digits: str) -> bool:
    return digits.isdigit() and _luhn(digits)


@lru_cache(maxsize=4096)
def _ssn(number: str) -> bool:
    from stdnum.us import ssn

    return ssn.is_valid(number)


@lru_cache(maxsize=4096)
def _valid(number: str, regions: tuple[str, ...]) -> bool:
    import phonenumbers

    for region in regions:
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(number, region)):
                return True
        except phonenumbers.NumberParseException:
            continue
    return False


def ibans(text: str) -> Iterator[tuple[int, int, str]]:
    """IBANs (upper case, with or without spaces every four characters), by python-stdnum's check."""
    from stdnum import iban

    for match in _IBAN.finditer(text):
        value = match.group()
        while len(value) >= 15:
            if iban.is_valid(value.replace("/", " ")):
                yield match.start(), match.start() + len(value), "iban"
                break
            cut = max(value.rfind(" "), value.rfind("/"))
            value = value[:cut] if cut > 0 else value[:-1]


def iban_shape(lowered: str) -> bool:
    return _IBAN_SHAPE(lowered) is not None


_IBAN_SHAPE = re.compile(r"(?<![a-z0-9])[a-z]{2}\d\d[ /]?[a-z0-9]{4}[ /]?[a-z0-9]{4}").search
