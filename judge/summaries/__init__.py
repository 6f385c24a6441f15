"""Audit compaction and handoff summaries against the reviewed ledger: phrase, semantic and judge
layers (judge.summaries.audit), their evaluation on labelled summaries, and behavioural continuation."""
