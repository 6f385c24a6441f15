"""Kept import path: the recorder lives in judge.trace.recorder (`from judge.recorder import Recorder`)."""

from judge.trace.recorder import Recorder

__all__ = ["Recorder"]
