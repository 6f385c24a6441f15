"""`judge align`: a judge improved from its disagreements with labelled cases, measured on the
held-out split (llm judges: a new locked prompt version with few-shot examples; the local judge: a
new locked version of its decision thresholds, refitted on the dev split)."""

from judge.grade.align.local import LocalAlignResult, align_local_judge
from judge.grade.align.run import AlignResult, align_judge

__all__ = ["AlignResult", "LocalAlignResult", "align_judge", "align_local_judge"]
