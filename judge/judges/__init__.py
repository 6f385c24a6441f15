"""Judge backends: the plug-in point for semantic grading (see base.Judge)."""
