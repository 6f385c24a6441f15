"""Build the judge a configuration names, from its backend's spec (judge.judges.backends and the
`judge.backends` entry points). Backends import their libraries only when built (litellm and
sentence-transformers take seconds to import)."""

from __future__ import annotations

from judge.config import JudgeConfig
from judge.errors import require_extra
from judge.judges.base import Judge
from judge.judges.spec import backend_spec


def make_judge(config: JudgeConfig) -> Judge:
    """The judge of one `[tool.judge.judges.NAME]` table."""
    spec = backend_spec(config.backend)
    if spec.extra:
        require_extra(spec.extra, f"judge {config.name!r} (backend {spec.name})")
    return spec.make(config)


def audits_while_grading(judge: object) -> bool:
    """Does the judge's backend audit the run's summaries while grading (so the grade keeps them)?
    The backend is the judge's configured one (a replay judge's fingerprint names the backend that
    recorded its verdicts, not itself); a judge built by hand without one, its fingerprint's."""
    from judge.judges.spec import backend_specs

    backend = getattr(getattr(judge, "config", None), "backend", None)
    if backend is None and judge is not None:
        backend = judge.fingerprint().get("backend")  # type: ignore[attr-defined]
    spec = backend_specs().get(backend) if isinstance(backend, str) else None
    return spec is not None and spec.audits_while_grading
