"""Traces: load the native JSONL (streaming, validated, redacted at load time)."""

from judge.trace.load import TraceReader, read_trace

__all__ = ["TraceReader", "read_trace"]
