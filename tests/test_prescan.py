"""The reader's precheck flags exactly the lines the line test flags: one RE2 pass finds candidates
(judge.trace.prescan), the line test (judge.trace.precheck.line_needs_redaction) decides them."""

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge.trace.gates import lower
from judge.trace.precheck import found_line_needs_redaction, line_needs_redaction, lines_needing_redaction
from judge.trace.prescan import _EXTRA, base64_run_lines, candidate_lines, found_lines
from tests.hostile.planted import FIELD_VALUES, VALUES, planted_trace
from tests.test_redact import _PIECES, _event

# Pieces that sit on the edges of the candidate branches: hints before `=`, `:` and JSON key ends,
# escapes, the folding characters, Unicode digits and spaces, IBAN and number shapes.
_EDGES = st.sampled_from([
    "Token", "TOKEN", "toKen", "\u017fecret", "\u212aey", "api\u212aey", "pa\u017f\u017fword", "\u0130", "\u0131",
    "Bearer", "BA\u017fIC", "bas\u0131c", "AW\u017f", "aws", "passwd", "passphrase", "passcode", "key_pass",
    "database-pass", "session_key", "SessionKey", "priv-key", "contraseña", "Pwd", "cookie", "auth",
    '\\"', "\\\\", "\\n", "\\t", '"', "'", ":", "=", ":=", "=>", " ", "\t", "\u00a0", "\u2028", "\u3000",
    "\u0085", "\x1c", "x" * 90, "y" * 210, "-", ".", "_", "é", "中文", "\U0001f600",
    "١٢٣", "４５６", "۷۸۹", "0", "12", "345", "6789", "(", ")", "+", "+٣", "+1",
    "GB82 WEST 1234 5698 7654 32", "DE89370400440532013000", "AB12", "A\u00c9",
    "sk-", "sk-abcdefghijklmnop", "hf_", "npm_", "ghp_", "xoxb-", "eyJ", "-----BEGIN", "AKIA", "AIza",
    "AccountKey=", "SG.", "\\u00e9", "@", "a@", " @", "\\n@", '"@',
    # issue 23: what the folded copy, base64 and the new shapes look at
    "ew", "ey", "eyA", "ewo", "%", "%4", "%40", "%22", "%5C", "\u200b", "\uff20", "\uff10", "\u00ad", "\u2011",
    "\\/", "SGVsbG8", "ZGJfcGFzc3dvcmQ9", "=", "==", "X", "Z", "Infinity", ", NaN", "[1e400", ":-1e999", "xapp-",
    "1234567", "ＮａＮ", "\uff02", "\uff3c", "/",
    # found for a base64 run alone (judge.trace.precheck.found_line_needs_redaction): paths, of one case and mixed
    "src/checkout/sdk/client.py", "tests/sdk/Client_Test.py", "Src/Payments/GatewayClient", "ZGJfcGFzc3dvcmQ9aHVudGVyMg",
    # issue 39: the anchors of the provider shapes and of prose (judge.trace.providers, judge.trace.prose)
    "hooks.slack.com", "-us1", "-us", "0f3e5a9c1b7d2e4f6a8c0b1d3e5f7a39", ".Cl2FMQ.", "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "12345678", ":", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0", "PRIVATE KEY", "PuTTY-User-Key-File-", "SoftLayer.com",
    "GR1348941", "AKC", "AP6", "glptt-", "pin", "PİN", "is", "was", " ", "\\t", "api key", "Access-Key",
    "passcode", "Pin_Number", "were",
])


def test_the_fold_classes_hold_every_character_lower_maps_to_an_ascii_letter():
    found: dict[str, set[str]] = {}
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        ch = chr(code)
        low = lower(ch)
        if len(low) == 1 and "a" <= low <= "z" and ch not in (low, low.upper()):
            found.setdefault(low, set()).add(ch)
    assert found == {k: set(v) for k, v in _EXTRA.items()}


def _lines(text: str) -> list[str]:
    return [json.dumps({"id": "e1", "turn": 1, "kind": "assistant", "text": text}),
            json.dumps({"id": "e1", "turn": 1, "kind": "assistant", "text": text}, ensure_ascii=False),
            json.dumps(_event(text)), json.dumps(_event(text), ensure_ascii=False) + "\n", text, text + "\n"]


def _same_as_the_line_test(lines: list[str]) -> None:
    flags = lines_needing_redaction(lines)
    assert [bool(f) for f in flags] == [line_needs_redaction(line) for line in lines]


@pytest.mark.slow
@settings(max_examples=600, deadline=None, derandomize=True)
@given(st.lists(st.one_of(_PIECES, _EDGES), max_size=10), st.text(max_size=12))
def test_the_precheck_flags_exactly_the_lines_the_line_test_flags(pieces, noise):
    text = "".join(pieces) + noise
    _same_as_the_line_test(_lines(text))


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.lists(st.one_of(_PIECES, _EDGES), max_size=6), st.text(max_size=8)), max_size=40))
def test_many_lines_at_once_flag_what_each_alone_would(rows):
    _same_as_the_line_test([line for pieces, noise in rows for line in _lines("".join(pieces) + noise)])


def test_every_planted_value_is_a_candidate_and_flagged():
    lines = [json.dumps(record, ensure_ascii=ascii_) for record in planted_trace("s") for ascii_ in (True, False)]
    lines += [text for _, text, _ in VALUES] + [json.dumps({name: value}) for name, value, _ in FIELD_VALUES]
    _same_as_the_line_test(lines)
    assert all(lines_needing_redaction([line])[0] for line in lines[2:])  # the header may be clean


@pytest.mark.parametrize("text, found, needs", [
    ("edit src/checkout/sdk/client.py now", None, False),  # one case: never plausible base64, not found
    ("see Src/Payments/GatewayClient.py", "runs", False),  # mixed case, decodes to no text
    ("blob ZGJfcGFzc3dvcmQ9aHVudGVyMg here", "runs", True),  # base64 of `db_password=hunter2`
    ("mail a@b.example about Src/Payments/GatewayClient.py", "whole", True),
    ("Src/Payments/GatewayClient.py at 5% x", "runs", False),  # `%`: the whole line test runs (the folded copy)
    ("src/checkout/sdk/client.py \u00e9", "whole", True),  # `\u00e9` as JSON escapes it: always a candidate
])
def test_a_line_is_found_for_the_test_that_can_say_yes_and_decided_as_the_line_test_decides(text, found, needs):
    line = json.dumps({"id": "e1", "turn": 1, "kind": "assistant", "text": text}) + "\n"
    raw = line.encode("utf-8")
    whole, runs = found_lines(raw)
    assert (whole, runs) == {"whole": ([0], []), "runs": ([], [0]), None: ([], [])}[found]
    assert line_needs_redaction(line) is needs
    if found is not None:
        assert found_line_needs_redaction(line, found == "runs") is needs


@pytest.mark.parametrize("block, expected", [
    (b"", []), (b"src/checkout/sdk/client.py\n", []), (b"0123456789abcdef0123\n", []),  # one case, hex
    (b"x\nsrc/Checkout/sdkClient\nSrc/Payments/GatewayClient\n", [1, 2]),
    (b"short Ab\nAbcdefghijklmno\nAbcdefghijklmnop\n", [2]),  # 15 characters are no run, 16 are
    (b"a\\/B\\/cdefghijklmn\n", [0]),  # `\/` joins a run in a raw line
    (b"AAAAAAAAAAAAAAAA aaaaaaaaaaaaaaaa\n", []),  # each run of one case: the line is not found
    (b"Abcdefghijklmnopq Abcdefghijklmnopq\nend", [0]),  # a line once; the last without its newline
])
def test_base64_run_lines_finds_runs_of_both_cases_only(block, expected):
    assert base64_run_lines(block) == expected


def _runs_by_copies(block: bytes) -> list[int]:
    """The definition: lines holding a run of 16 or more of the run class with a capital and a small
    letter in it, each run copied and compared with its lower() and upper()."""
    import re

    found = []
    for index, line in enumerate(block.split(b"\n")):
        runs = re.findall(rb"[A-Za-z0-9+/_\\-]{16,}", line)
        if any(run.lower() != run and run.upper() != run for run in runs):
            found.append(index)
    return found


@settings(max_examples=300)
@given(st.lists(st.sampled_from([b"a", b"B", b"z", b"Q", b"0", b"/", b"\\", b"-", b"_", b"+", b"=", b" ", b"\n",
                                 b"\xc3\xa9", b"x" * 15, b"Y" * 15, b"src/checkout/", b"Gateway"]), max_size=60))
def test_base64_run_lines_is_its_definition(pieces):
    block = b"".join(pieces)
    assert base64_run_lines(block) == _runs_by_copies(block)


def test_the_reader_flags_the_benchmark_trace_as_the_line_test_does(tmp_path):
    """The lines of bench_windows.py's generated trace (paths, e-mails, phones, summaries): the
    reader's flags, block by block, against the line test of every line."""
    from judge.trace import blocks

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from gen_trace import generate

    trace, _ = generate(3000, 1, 7, tmp_path)
    read = list(blocks.BlockReader(trace, max_line=1 << 24).lines())
    lines = trace.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(read) == len(lines) > 3000
    flagged = [flag == blocks.SLOW for _, _, flag in read]
    assert flagged == [line_needs_redaction(line) for line in lines]
    assert 0 < sum(flagged) < len(lines) // 2


@pytest.mark.parametrize("block, expected", [
    (b"", []), (b"clean\n", []), (b"a@b\n", [0]), (b"x\ny\nAKIAABCD\nz\n", [2]),
    (b"token: 1 a@b\nclean\n@\n", [0, 2]), (b"123 456 789\n12345678\n", [0]),
])
def test_candidate_lines_names_each_line_once(block, expected):
    assert candidate_lines(block) == expected


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.lists(st.one_of(_PIECES, _EDGES), max_size=6), st.text(max_size=8)), max_size=30),
       st.sampled_from([16, 97, 1 << 20]))
def test_a_file_read_a_block_at_a_time_flags_what_the_line_test_flags(rows, block):
    """The reader's own path (judge.trace.blocks): a file's lines cut into blocks (small ones here,
    so lines straddle them), one pass per block, the line test on the candidates."""
    import tempfile

    from judge.trace import blocks

    lines = [json.dumps(_event("".join(pieces) + noise), ensure_ascii=bool(len(noise) % 2)) for pieces, noise in rows]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        saved, blocks.BLOCK = blocks.BLOCK, block
        try:
            read = list(blocks.BlockReader(path, max_line=1 << 24).lines())
        finally:
            blocks.BLOCK = saved
    assert [raw.decode("utf-8") for _, raw, _ in read] == lines
    assert [flag == blocks.SLOW for _, _, flag in read] == [line_needs_redaction(line + "\n") for line in lines]
