"""The LLM judge counts tokens as litellm's `token_counter` does for gpt-4o, without importing litellm
(issue 41): the same tiktoken encoding, read offline from the files litellm ships, and litellm's
arithmetic for tools and `tool_choice`, equal to litellm's own counter over random and real
requests (this test imports litellm; judge.judges.tokens does not)."""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import llm_judge_config, llm_server  # noqa: F401  (fixture)
from typer.testing import CliRunner

from judge.cli import app
from judge.draft.answer import answer_model
from judge.judges import answers, tokens
from judge.judges.llm import libs
from judge.judges.schema import summary_audit_model, verdict_model

REPO = Path(__file__).resolve().parents[1]
MODELS = [verdict_model(("goal",), ("e1",)), verdict_model(("goal", "no_app_code", "repair"), ("e1", "e2", "e17")),
          verdict_model(("a",), ()), summary_audit_model(("goal", "browser")),
          answer_model({"e1": "Fix the test. Use Firefox.", "e4": "ok: passed"}, ["run_tests"])]
CHOICES = [None, "none", "auto", "required", {"type": "none"}, {"name": "Verdict"}, {"type": "function"},
           {"type": "function", "function": {"name": "Verdict"}}, {"type": "function", "function": {"name": 3}},
           {"function": {"name": "a_longer_name_for_a_function"}}]
ALPHABET = string.ascii_letters + string.digits + string.punctuation + " \t\n\r" + "éüßçñøåæ€中文日本語한국어 🙂\u200b\u00a0"


def litellm():
    return libs()[0]


def litellm_extra(tools, tool_choice, *, with_system: bool) -> int:
    """What tools and tool_choice add to a request, by litellm's own counter."""
    messages = [{"role": "system" if with_system else "user", "content": "-"}]
    return (litellm().token_counter(model="gpt-4o", messages=messages, tools=tools or None, tool_choice=tool_choice)
            - litellm().token_counter(model="gpt-4o", messages=messages))


def random_text(rng: random.Random) -> str:
    size = rng.choice([0, 1, 5, 40, 300, 1023, 1024, 1025, 2500, 5000])
    if rng.random() < 0.2:  # long runs of one character: where chunk boundaries matter
        return rng.choice(["a", " ", ".", "0", "\n", "ab"]) * size
    return "".join(rng.choice(ALPHABET) for _ in range(size))


def random_schema(rng: random.Random, depth: int = 0) -> dict:
    kind = rng.choice(["string", "integer", "number", "boolean", "null", "array", "object", None, ["string", "null"]])
    node: dict = {} if kind is None else {"type": kind}
    if kind in ("string", "integer", "number") and rng.random() < 0.4:
        node["enum"] = rng.sample(["x", "y z", 1, 2.5, None, "é"], rng.randint(1, 4))
    if kind == "array":
        node["items"] = random_schema(rng, depth + 1) if depth < 3 else {"type": "string"}
    if kind == "object" or (kind is None and rng.random() < 0.3):
        props = {f"p{i}_{rng.choice('abc')}": random_schema(rng, depth + 1) for i in range(rng.randint(0, 4))
                 } if depth < 3 else {}
        node["properties"] = props
        if props and rng.random() < 0.6:
            node["required"] = rng.sample(sorted(props), rng.randint(0, len(props)))
    if kind is None and rng.random() < 0.3:
        node["anyOf"] = [{"type": "string"}, {"type": "null"}]
    if rng.random() < 0.3:
        node["description"] = random_text(rng)[:80] or "d"
    return node


def test_the_encoding_is_the_one_litellm_counts_gpt4o_with():
    from litellm.litellm_core_utils.token_counter import openai_tokenizer_encoding

    theirs, ours = openai_tokenizer_encoding("gpt-4o"), tokens._encoding()
    assert ours.name == theirs.name == tokens.ENCODING == "o200k_base"
    rng = random.Random(41)
    for _ in range(200):
        text = random_text(rng)[:1024]  # longer runs of one character are quadratic in the encoder
        assert ours.encode_ordinary(text) == theirs.encode(text, disallowed_special=())


def test_a_text_counts_as_litellm_counts_it_in_chunks_of_1024_characters():
    rng = random.Random(7)
    texts = [random_text(rng) for _ in range(300)] + ["<|endoftext|> is text here", "x" * 9000, ""]
    for text in texts:
        assert tokens.count_chunked(text) == litellm().token_counter(model="gpt-4o", text=text), text[:60]


def test_short_messages_count_as_litellm_counts_them():
    """Line by line (memoised) is exact where a message is shorter than litellm's 1,024-character chunk."""
    rng = random.Random(11)
    for _ in range(150):
        messages = [{"role": rng.choice(["system", "user", "assistant"]), "content": random_text(rng)[:1000]}
                    for _ in range(rng.randint(1, 4))]
        assert tokens.count_messages(messages) == litellm().token_counter(model="gpt-4o", messages=messages)


@pytest.mark.parametrize("with_system", [True, False])
def test_tools_and_tool_choice_count_as_litellm_counts_them(with_system):
    rng = random.Random(3 + with_system)
    cases = [(answers.schema_part(form, model).get("tools", []), choice)
             for model in MODELS for form in answers.FORMS for choice in CHOICES]
    for _ in range(300):
        functions = [{"name": rng.choice(["answer", "Verdict", "f_" + str(rng.randint(0, 99)), ""]),
                      **({"description": random_text(rng)[:100]} if rng.random() < 0.6 else {}),
                      **({"parameters": random_schema(rng)} if rng.random() < 0.9 else {})}
                     for _ in range(rng.randint(1, 3))]
        cases.append(([{"type": "function", "function": f} for f in functions], rng.choice(CHOICES)))
    for tools, choice in cases:
        assert tokens.tool_tokens(tools, choice, with_system=with_system) == \
            litellm_extra(tools, choice, with_system=with_system), (tools, choice)


def test_a_tool_in_another_shape_is_counted_by_litellm():
    tools = [{"name": "answer", "description": "d", "input_schema": {"type": "object", "properties": {
        "a": {"type": "string"}}}}]
    assert tokens.tool_tokens(tools, None, with_system=True) == litellm_extra(tools, None, with_system=True) > 9


@pytest.mark.slow
def test_every_request_of_the_200_turn_drift_counts_as_before(shared_dir, llm_server, tmp_path, monkeypatch):  # noqa: F811
    """Each body the judge sent, in both direct modes: its count is the messages (line by line, as
    before) plus what litellm's counter adds for its tools or response_format (what the code before
    computed with litellm)."""
    monkeypatch.setenv("JUDGE_TOKENS_KEY", "sk-test-not-a-secret")
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    runner = CliRunner()
    for mode in ("tools", "strict"):
        llm_server.reset()
        config = llm_judge_config(tmp_path / f"{mode}.toml", model="openai/judge-tokens-model", mode=mode,
                                  api_base=llm_server.api_base, key_env="JUDGE_TOKENS_KEY", timeout_s=5)
        result = runner.invoke(app, ["grade", str(shared_dir / "contract" / "checkout-firefox.yaml"),
                                     str(shared_dir / "contract" / "checkout-firefox.drift.200.jsonl"),
                                     "--judge", "gpt", "--config", str(config), "--json", str(tmp_path / "r.json")])
        assert result.exit_code == 1, result.output
        assert len(llm_server.bodies) >= 14
        for body in llm_server.bodies:
            tools = list(body.get("tools") or [])
            fmt = (body.get("response_format") or {}).get("json_schema")
            if fmt:
                tools.append({"type": "function", "function": {"name": fmt["name"], "parameters": fmt["schema"]}})
            with_system = any(m.get("role") == "system" for m in body["messages"])
            before = tokens.count_messages(body["messages"]) + litellm_extra(tools, body.get("tool_choice"),
                                                                              with_system=with_system)
            assert tokens.body_tokens(body) == before


@pytest.mark.slow
def test_the_encoding_loads_offline_and_without_litellm():
    """No network (every socket refused), no tiktoken cache of its own: the files litellm ships."""
    expected = litellm().token_counter(model="gpt-4o", text="Checkout must use Firefox. Never touch app code.")
    code = ("import json, socket, sys\n"
            "def refuse(*args, **kwargs):\n    raise OSError('no network in this test')\n"
            "socket.socket.connect = refuse\nsocket.create_connection = refuse\n"
            "from judge.judges import tokens\n"
            "n = tokens.count_chunked('Checkout must use Firefox. Never touch app code.')\n"
            "print(json.dumps([n, [m for m in ('litellm', 'instructor', 'openai') if m in sys.modules]]))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR",
                                                            "CUSTOM_TIKTOKEN_CACHE_DIR")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                         env={**env, "HF_HUB_OFFLINE": "1"}, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [expected, []]


def test_the_encoding_is_read_as_tiktoken_reads_it_and_tiktoken_is_left_as_it_is(tmp_path):
    """tokens._encoding_args runs tiktoken's own constructor with a faster parse of the same file:
    the same ranks, split pattern and special tokens as tiktoken's loader, and tiktoken's module keeps
    its loader (the constructor is run as a copy)."""
    import tiktoken
    import tiktoken_ext.openai_public as public
    from tiktoken.load import load_tiktoken_bpe

    tokens._encoding()  # points tiktoken at the files litellm ships
    ours = tokens._encoding_args()
    theirs = public.o200k_base()
    assert public.load_tiktoken_bpe is load_tiktoken_bpe
    assert len(ours["mergeable_ranks"]) == len(theirs["mergeable_ranks"]) > 199_000
    assert ours == theirs
    encoding = tiktoken.get_encoding("o200k_base")
    assert tokens._encoding()._pat_str == encoding._pat_str
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"IQ== 0\nIg==\n")  # a line without its rank
    with pytest.raises(ValueError, match="not a tiktoken rank file"):
        tokens.read_ranks(str(bad))


@pytest.mark.parametrize("piece", [1, 7, 64, 1 << 18])
def test_the_rank_file_read_in_pieces_is_read_whole(tmp_path, monkeypatch, piece):
    """Pieces end at line ends whatever their size: every piece size gives tiktoken's own reading."""
    import base64

    from tiktoken.load import load_tiktoken_bpe

    rng = random.Random(piece)
    lines = [base64.b64encode(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))) + b" %d" % rank
             for rank in range(300)]
    path = tmp_path / "ranks.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n" * rng.randrange(0, 2))
    monkeypatch.setattr(tokens, "_RANKS_PIECE", piece)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the file itself, no cache copy
    assert tokens.read_ranks(str(path)) == load_tiktoken_bpe(str(path))
