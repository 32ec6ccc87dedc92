# Two commands do all set-up on a fresh machine:
#   make report   regenerate everything under reports/ (executed notebooks, HTML, eval-results.json artifacts)
#   make test     run the whole test suite, nbval over the committed notebooks included
# Both create (or reuse) the virtual environment .venv and install what they need.
# CI (.ci/run) runs `make lint`, `make typecheck`, `make docs` and `make test`, stopping at the first failure.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
EXTRAS ?= report,test,dev

.PHONY: setup node-servers test eval report lint format typecheck docs bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# The distribution used to be called `agentmemory` (now agentmemory-eval): drop such an old install first.
	$(PY) -m pip uninstall --quiet --yes agentmemory 2>/dev/null || true
	$(PY) -m pip install --quiet -c constraints.txt -e '.[$(EXTRAS)]'
	@touch $(STAMP)

setup: $(STAMP)

# The MCP memory servers the `mcp` system's tests start (agentmemory/systems/node: package.json + lockfile),
# installed with `npm ci` where npm exists; without it those tests skip and say why.
NODE_DIR   := agentmemory/systems/node
NODE_STAMP := $(NODE_DIR)/node_modules/.installed-stamp

$(NODE_STAMP): $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix $(NODE_DIR) --ignore-scripts --no-audit --no-fund --loglevel=error && touch $@; \
	else \
		echo "npm not found: the tests that start MCP servers from $(NODE_DIR) will skip"; \
	fi

node-servers: $(NODE_STAMP)

# Unit tests, then nbval over the committed executed notebooks in reports/ (same pytest run), on every
# core (pytest-xdist; --dist loadfile keeps each test file and each notebook on one worker).
JOBS ?= auto
test: $(STAMP) $(NODE_STAMP)
	$(PY) -m pytest -n $(JOBS) --dist loadfile --nbval --nbval-current-env tests reports/eval.ipynb reports/explore.ipynb \
		reports/collection.ipynb reports/collection-provenance.ipynb \
		reports/collection-longmemeval.ipynb reports/collection-beam.ipynb reports/collection-systems.ipynb \
		reports/collection-patched.ipynb reports/sweep.ipynb reports/answers.ipynb

eval: $(STAMP)
	$(PY) -m agentmemory eval --seed 7 --k 5

# Executed notebooks (eval, explore, collection, sweep, answers), their HTML, the eval-results.json artifacts
# (each checked byte for byte against `agentmemory eval`), TREC runs.
report: $(STAMP)
	$(PY) -m agentmemory.report.build --seed 7 --k 5

# The code ruff checks and formats (notebooks and reports/ are excluded in pyproject.toml).
LINT_PATHS := agentmemory tests examples benchmarks

# ruff's rules, then the formatter's verdict; both configured in pyproject.toml, ruff pinned in constraints.txt.
lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)

# Rewrite the files `make lint` would reject for their format, and apply ruff's safe fixes.
format: $(STAMP)
	$(VENV)/bin/ruff format $(LINT_PATHS)
	$(VENV)/bin/ruff check --fix $(LINT_PATHS)

# mypy over the package, configured by [tool.mypy] in pyproject.toml (which files, how strict).
typecheck: $(STAMP)
	$(VENV)/bin/mypy

# The documentation site (mkdocs.yml, pages in docs/) built into site/ with --strict: any warning (a broken
# link, a docstring mkdocstrings cannot read, a generated page that disagrees with the code) fails it.  The
# `docs` extra is installed on top of the usual ones, once per change of the pins.
DOCS_STAMP := $(VENV)/.docs-stamp
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[docs]'
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# Benchmarks are not tests: they install the peers (the `bench` extra) and print ratios.  The whole-process
# rows build their own plain install (no extras) in benchmarks/.cache/plainvenv.
bench: $(STAMP)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[bench]'
	$(PY) benchmarks/run.py
	$(PY) benchmarks/run.py --only whole
	$(PY) benchmarks/run.py --only grid

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist site
