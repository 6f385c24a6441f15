"""Renderings of the library's models: grade reports, suite reports, ledgers and summary audits as
JSON, terminal tables (rich), JUnit XML and Markdown. The library returns models; this turns them into text."""

from typing import Any


def corpus_to_json(model: Any) -> str:
    """A corpus report or diff as JSON (judge.render.corpus)."""
    from judge.render.corpus import to_json

    return to_json(model)


def render_corpus(report: Any, console: Any) -> None:
    """A corpus report on the terminal (judge.render.corpus)."""
    from judge.render.corpus import render_terminal

    render_terminal(report, console)


def render_corpus_diff(diff: Any, console: Any) -> None:
    """A corpus diff on the terminal (judge.render.corpus)."""
    from judge.render.corpus import render_diff

    render_diff(diff, console)


def corpus_page(report: Any) -> str:
    """The corpus view of the run page (judge.render.html)."""
    from judge.render.html import corpus_page as page

    return page(report)
