"""The review queue (findings a person should look at) and the append-only label store."""

from judge.review.labels import Answer, LabelStore, in_conflict, label_row
from judge.review.queue import ReviewItem, build_queue, relative_trace, report_files

__all__ = ["Answer", "LabelStore", "ReviewItem", "build_queue", "in_conflict", "label_row", "relative_trace",
           "report_files"]
