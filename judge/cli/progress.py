"""What a long command shows on stderr while it works: a spinner while a model loads (the offline
judge's MiniLM, the summary audit's) and a progress bar while many runs are graded.

Both live in one rich Progress (rich allows one live display at a time), on stderr, and only on a
terminal: nothing is shown when stderr is not a TTY (CI logs, pipes) or with --quiet. The library
never prints: a model load is reported through judge.text.minilm.observe_loading, and grading
through the `progress(done, total)` callbacks of GradeSession.grade_files and grade_suite.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from judge.cli.common import stderr_console


class Activity:
    """`with Activity(enabled) as activity:` then pass `activity` as a `progress(done, total)`
    callback; model loads inside the block show a spinner."""

    def __init__(self, enabled: bool, label: str = "grading runs") -> None:
        self.enabled = enabled and stderr_console().is_terminal
        self.label = label
        self.progress: Any = None
        self.bar: Any = None
        self.loading: dict[str, Any] = {}
        self._pid = os.getpid()
        self._stop_observing: Callable[[], None] | None = None

    def __enter__(self) -> Activity:
        if self.enabled:
            from judge.text import observe_loading

            self._stop_observing = observe_loading(self._model)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _start(self) -> Any:
        if self.progress is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                     MofNCompleteColumn(), TimeElapsedColumn(), console=stderr_console(),
                                     transient=True)
            self.progress.start()
        return self.progress

    def _model(self, event: str, name: str) -> None:
        if os.getpid() != self._pid:  # a forked suite worker: its parent shows the progress
            return
        if event == "start":
            self.loading[name] = self._start().add_task(f"loading the model {name}", total=None)
        elif name in self.loading and self.progress is not None:
            self.progress.remove_task(self.loading.pop(name))

    def __call__(self, done: int, total: int) -> None:
        """The `progress(done, total)` callback of a grade or a suite."""
        if not self.enabled or total < 2:
            return
        if self.bar is None:
            self.bar = self._start().add_task(self.label, total=total)
        self.progress.update(self.bar, completed=done, total=total)

    def stop(self) -> None:
        if self._stop_observing is not None:
            self._stop_observing()
            self._stop_observing = None
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
