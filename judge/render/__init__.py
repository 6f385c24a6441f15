"""Renderings of the library's models: grade reports, suite reports, ledgers and summary audits as
JSON, terminal tables (rich), JUnit XML and Markdown. The library returns models; this turns them into text."""
