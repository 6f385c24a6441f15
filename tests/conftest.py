import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Every `judge grade` keeps its report in a run log (.judge/runs/ beside the project): in tests, a
# folder of their own, not the repository (tests of the run log itself set or unset it).
os.environ.setdefault("JUDGE_LOG_DIR", tempfile.mkdtemp(prefix="judge-test-runs-"))
# The cache folder (verdicts, the extracted text model, the model-blind name list, corpus results): the
# session's own, so that no test reads what an earlier session or the developer's own grades kept there
# (tests of the cache set their own). Extracting the text model into it costs ~0.6 s once a session.
_CACHE = tempfile.mkdtemp(prefix="judge-test-cache-")
os.environ.setdefault("JUDGE_CACHE_DIR", _CACHE)
atexit.register(shutil.rmtree, _CACHE, True)

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is absent (it sits beside the clone in CI and on developer machines)")
    return SHARED
