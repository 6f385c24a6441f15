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
# judge/compiled.py): under a minute (36-50 s for 19 modules on 2 cores), again only when one of their sources changed; judge loads them only
# while they match their sources. Without a C compiler judge stays pure Python (the same results).
compiled: $(STAMP)
	@$(BIN)/python scripts/build_compiled.py --if-stale

# torch is pinned and installed first: pip takes the CPU build from local disk; an unpinned
# torch (pulled in by sentence-transformers) would resolve a multi-GB CUDA build. judge/__init__.py
# holds the version (pyproject.toml reads it): a new version reinstalls, so the metadata follows.
$(STAMP): pyproject.toml constraints.txt judge/__init__.py
	@test -x $(BIN)/python || { echo "install: creating the virtual environment $(VENV)/"; $(PY) -m venv $(VENV); }
	@echo "install: into $(VENV)/ (pyproject.toml, constraints.txt or the version changed; the first run takes a few minutes)"
	@echo "install: 1/3 torch 2.13.0, the CPU build (pinned first: unpinned, pip would pick a multi-GB CUDA build)"
	@$(BIN)/pip install -q --disable-pip-version-check torch==2.13.0 2>&1 | grep -v "is ignored" || true
	@echo "install: 2/3 judge (editable) and its dependencies at the versions in constraints.txt (extras: test, ray, local-llm)"
	@$(BIN)/pip uninstall -q -y judge 2>/dev/null || true  # the distribution's old name (now judge-drift): its metadata and script would linger
	@$(BIN)/pip install -q --disable-pip-version-check -c constraints.txt -e '.[test,ray,local-llm]' 2>&1 | grep -v "is ignored" || true
	@echo "install: 3/3 checking that judge, calibration and torch import"
	@$(BIN)/python -c "import judge, calibration, torch; assert torch.__version__.startswith('2.13.0')"
	@touch $(STAMP)
	@echo "install: done; the CLI is $(BIN)/judge (or run \`. $(VENV)/bin/activate\` once, then \`judge\`)"

# Grades every bundled example (a clean and a drifting run each); drifting runs exit 1 by design.
DEMO_JUDGE ?= local
demo: install
	@echo "demo: grading every example in examples/, a clean and a drifting run each, with the '$(DEMO_JUDGE)' judge."
	@echo "demo: the drifting runs exit 1 by design: each '(exit code 1)' below is a drift caught, not a failure of the demo."
	@echo "demo: a folder may hold more failing runs (examples/support-refund/over-limit.jsonl: a refund above the user's limit)."
	@echo
	@for d in examples/*/; do \
	  if [ -f "$$d/scenario.yaml" ]; then \
	    echo "== $$d"; \
	    $(BIN)/judge grade "$$d/scenario.yaml" "$$d/clean.jsonl" "$$d/drift.jsonl" $$(ls "$$d"over-*.jsonl 2>/dev/null) --judge $(DEMO_JUDGE); \
	    code=$$?; echo "(exit code $$code$$([ $$code = 1 ] && echo ': the drifting run was caught, as designed'))"; echo; \
	  fi; \
	done
	@echo "demo: done. Next: .venv/bin/judge init my-agent (a scenario and runs of your own to start from)"

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
