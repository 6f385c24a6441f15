# Two commands set up a fresh machine: `make demo` and `make test` (see README.md); CONTRIBUTING.md
# has the rest of the engineer's loop (`make test-fast`, `make docs`, what to regenerate).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export HF_HUB_DISABLE_PROGRESS_BARS := 1
export LITELLM_LOCAL_MODEL_COST_MAP := True
export LITELLM_OFFLINE_MODE := true
export LITELLM_MODE := PRODUCTION
export TOKENIZERS_PARALLELISM := false

.PHONY: demo test test-fast install compiled clean-venv bench docs

install: $(STAMP) compiled

# The grader's hot modules compiled by mypyc into $(VENV)/judge-compiled/ (scripts/build_compiled.py,
# judge/compiled.py): 30-50 s on 2 idle cores (minutes on a busy machine), again only when one of their sources changed; judge loads them only
# while they match their sources. Without a C compiler judge stays pure Python (the same results).
compiled: $(STAMP)
	@$(BIN)/python scripts/build_compiled.py --if-stale

# EXTRAS: every optional part (`all`: pyproject.toml's extras, README.md "Install") and the test
# tooling, so the whole suite runs; `make install EXTRAS=test` is the core with the test tools.
# torch (the sentence-transformers extra, in `all`) is pinned and installed first: pip takes the CPU build
# from local disk; an unpinned torch would resolve a multi-GB CUDA build. judge/__init__.py
# holds the version (pyproject.toml reads it): a new version reinstalls, so the metadata follows.
# scripts/install.py says each step with its elapsed time, and a line every 20 s while pip works
# (pip's own output goes to .venv/install.log).
EXTRAS ?= all,test,local-llm
$(STAMP): pyproject.toml constraints.txt judge/__init__.py
	@echo "install: into $(VENV)/ (pyproject.toml, constraints.txt or the version changed; 2.5-3 min on 2 idle cores, much longer on a busy machine)"
	@$(PY) scripts/install.py --venv $(VENV) --extras $(EXTRAS)
	@touch $(STAMP)
	@echo "install: the CLI is $(BIN)/judge (or run \`. $(VENV)/bin/activate\` once, then \`judge\`)"

# Grades every bundled example (a clean and a drifting run each, and more failing runs where a folder
# has them: examples/support-refund/over-limit.jsonl); the drifting runs exit 1 by design, and the
# closing tally says what was graded, what failed by design, and what to run next (scripts/demo.py).
DEMO_JUDGE ?= local
demo: install
	@echo "demo: grading every example in examples/, a clean and a drifting run each, with the '$(DEMO_JUDGE)' judge."
	@echo "demo: the drifting runs exit 1 by design: each '(exit code 1)' below is a drift caught, not a failure of the demo."
	@echo
	@$(BIN)/python scripts/demo.py --judge $(DEMO_JUDGE)

# The whole suite: the README's test command, and what CI (.ci/run) runs.
test: install
	@$(BIN)/python -m pytest

# The suite without the tests marked `slow` (pyproject.toml [tool.pytest.ini_options] markers): the
# loop while working; run `make test` before handing a change over.
test-fast: install
	@$(BIN)/python -m pytest -m "not slow"

# The documentation site (mkdocs.yml, docs/) into site/, the API reference rendered from docstrings
# (mkdocstrings); --strict turns a broken link, anchor or reference into a failure. Installs the docs
# extra's requirements by name (not `-e .[docs]`, which would redo the editable install), pinned by
# constraints.txt (DOCS_REQUIREMENTS is pyproject.toml's docs extra: tests/test_contract_page.py).
DOCS_STAMP := $(VENV)/.docs-installed
DOCS_REQUIREMENTS := 'mkdocs-material>=9.5' 'mkdocstrings[python]>=1.0'
docs: $(DOCS_STAMP)
	@NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d site
	@echo "built site/ (open site/index.html)"

$(DOCS_STAMP): $(STAMP)
	@$(BIN)/pip install -q --disable-pip-version-check -c constraints.txt $(DOCS_REQUIREMENTS) 2>&1 | grep -v "is ignored" || true
	@$(BIN)/mkdocs --version >/dev/null
	@$(BIN)/python -c "import mkdocstrings_handlers.python"
	@touch $(DOCS_STAMP)

bench: install
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean-venv:
	rm -rf $(VENV)
