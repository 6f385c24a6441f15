"""Reliability diagram PNG of a calibration record (matplotlib, Agg canvas, no pyplot state)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from calibration.confidence import ReliabilityBin
from calibration.files import replace_atomically


def reliability_diagram(bins: list[ReliabilityBin] | None, path: str | Path, *, title: str,
                        ece: float | None = None) -> Path:
    """Accuracy against mean confidence per bin, with the diagonal of perfect calibration, over a
    histogram of verdict counts per bin. Without confidences the figure says so instead."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5.0, 6.0), dpi=100)
    FigureCanvasAgg(figure)
    if not bins or not any(b.count for b in bins):
        axes = figure.add_subplot()
        axes.set_axis_off()
        axes.text(0.5, 0.5, "no confidences given:\nno reliability diagram", ha="center", va="center")
        axes.set_title(title)
    else:
        _draw(figure, bins, title=title, ece=ece)
    path = Path(path)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    replace_atomically(path, buffer.getvalue())
    return path


def _draw(figure: Any, bins: list[ReliabilityBin], *, title: str, ece: float | None) -> None:
    top, bottom = figure.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    width = bins[0].upper - bins[0].lower
    centres = [b.lower + width / 2 for b in bins]
    accuracy = [b.accuracy or 0.0 for b in bins]
    top.bar(centres, accuracy, width=width * 0.9, color="#4C72B0", edgecolor="black", label="accuracy")
    used = [b for b in bins if b.count]
    top.plot([b.mean_confidence for b in used], [b.accuracy for b in used], "o", color="#DD8452",
             label="bin mean confidence")
    top.plot([0, 1], [0, 1], "--", color="grey", label="perfect calibration")
    top.set_xlim(0, 1)
    top.set_ylim(0, 1)
    top.set_ylabel("share of verdicts right")
    top.legend(loc="upper left", fontsize="small")
    top.set_title(title + (f"  (ECE {ece:.3f})" if ece is not None else ""))
    bottom.bar(centres, [b.count for b in bins], width=width * 0.9, color="#8C8C8C")
    bottom.set_xlabel("judge confidence")
    bottom.set_ylabel("verdicts")
    figure.tight_layout()
