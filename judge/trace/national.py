"""National identity numbers that carry a check digit, decided by python-stdnum (kind `national_id`).

- China: the resident identity card, 18 characters (the last a digit or `X`), plain; cn.ric checks
  its region, birth date and check character.
- India: Aadhaar, 12 digits not starting 0 or 1, plain or 4-4-4 with spaces or dashes; in_.aadhaar
  (Verhoeff).
- Spain: DNI (8 digits and a letter) and NIE (`X`/`Y`/`Z`, 7 digits, a letter), plain or with a dash
  before the letter; es.dni, es.nie.
- United Kingdom: the NHS number, 10 digits written 3-3-4 with spaces or dashes; gb.nhs (mod 11).
- Brazil: CPF, 11 digits written `000.000.000-00`; br.cpf.

Shapes are kept narrow where the check digit is weak (a plain 10- or 11-digit number, an order id
or a timestamp, passes a mod-11 check one time in eleven): those are recognised only as written.
US social security numbers are numbers.py's `ssn`. The digit-only ids are found as candidates of
numbers.py; the ones that end in a letter by `lettered`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

AADHAAR = re.compile(r"[2-9]\d{11}|[2-9]\d{3}([ -])\d{4}\1\d{4}")
NHS = re.compile(r"\d{3}([ -])\d{3}\1\d{4}")
CPF = re.compile(r"\d{3}\.\d{3}\.\d{3}-\d{2}")
LETTERED = re.compile(r"(?<![\w+])(?:[0-9]{17}[0-9Xx]|[0-9]{8}-?[A-Z]|[XYZ]-?[0-9]{7}-?[A-Z])(?![^\W_])")


@lru_cache(maxsize=4096)
def national_kind(number: str, digits: str) -> str | None:
    """`national_id` when this candidate window (digits and separators) is one of the table above."""
    count = len(digits)
    if count == 18 and number == digits:
        from stdnum.cn import ric

        return "national_id" if ric.is_valid(digits) else None
    if count == 12 and AADHAAR.fullmatch(number):
        from stdnum.in_ import aadhaar

        return "national_id" if aadhaar.is_valid(digits) else None
    if count == 10 and NHS.fullmatch(number):
        from stdnum.gb import nhs

        return "national_id" if nhs.is_valid(digits) else None
    if count == 11 and CPF.fullmatch(number):
        from stdnum.br import cpf

        return "national_id" if cpf.is_valid(digits) else None
    return None


def lettered(text: str) -> Iterator[tuple[int, int, str]]:
    """Ids that end in a letter: a Chinese id ending in `X`, a Spanish DNI or NIE."""
    for match in LETTERED.finditer(text):
        value = match.group().replace("-", "").upper()
        if _valid_lettered(value):
            yield match.start(), match.end(), "national_id"


@lru_cache(maxsize=4096)
def _valid_lettered(value: str) -> bool:
    if len(value) == 18:
        from stdnum.cn import ric

        return ric.is_valid(value)
    from stdnum.es import dni, nie

    return nie.is_valid(value) if value[0] in "XYZ" else dni.is_valid(value)
