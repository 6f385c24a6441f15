"""The offline judge's torch threads: one on a machine with few cores, `options.torch_threads` else."""

from __future__ import annotations

import pytest

from judge.config import JudgeConfig
from judge.errors import ConfigError
from judge.judges.factory import make_judge
from judge.text import minilm


@pytest.fixture(autouse=True)
def _restore():
    yield
    minilm.set_torch_threads(None)


def test_one_thread_by_default_on_few_cores_torch_decides_on_many():
    assert minilm.default_torch_threads(2) == 1 and minilm.default_torch_threads(minilm.FEW_CORES) == 1
    assert minilm.default_torch_threads(minilm.FEW_CORES + 1) is None


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_a_bad_torch_threads_option_is_a_config_error_naming_the_field(bad):
    with pytest.raises(ConfigError, match="torch_threads must be a positive integer") as caught:
        make_judge(JudgeConfig(name="local", backend="embedding", options={"torch_threads": bad}))
    assert caught.value.field == "tool.judge.judges.local.options.torch_threads"


def test_the_option_is_what_the_next_model_load_applies(monkeypatch):
    torch = pytest.importorskip("torch")
    make_judge(JudgeConfig(name="local", backend="embedding", options={"torch_threads": 2}))
    assert minilm.torch_threads() == 2
    before = torch.get_num_threads()
    try:
        minilm._apply_threads()
        assert torch.get_num_threads() == 2
        make_judge(JudgeConfig(name="local", backend="embedding"))  # no option: the machine's default
        monkeypatch.setattr(minilm.os, "cpu_count", lambda: 2)
        minilm._apply_threads()
        assert minilm.torch_threads() == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
