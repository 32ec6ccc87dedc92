# Two commands do all set-up on a fresh machine:
#   make report   regenerate everything under reports/ (executed notebooks, HTML, eval-results.json artifacts)
#   make test     run the whole test suite, nbval over the committed notebooks included
# Both create (or reuse) the virtual environment .venv and install what they need.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
EXTRAS ?= report,test,dev

.PHONY: setup test eval report lint bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[$(EXTRAS)]'
	@touch $(STAMP)

setup: $(STAMP)

# Unit tests, then nbval over the committed executed notebooks in reports/ (same pytest run).
test: $(STAMP)
	$(PY) -m pytest --nbval --nbval-current-env tests reports/eval.ipynb reports/explore.ipynb \
		reports/collection.ipynb reports/sweep.ipynb

eval: $(STAMP)
	$(PY) -m agentmemory eval --seed 7 --k 5

# Executed notebooks (eval, explore, collection, sweep), their HTML, the eval-results.json artifacts
# (each checked byte for byte against `agentmemory eval`), TREC runs.
report: $(STAMP)
	$(PY) -m agentmemory.report.build --seed 7 --k 5

lint: $(STAMP)
	$(VENV)/bin/ruff check agentmemory tests examples benchmarks

# Benchmarks are not tests: they install the peers (the `bench` extra) and print ratios.
bench: $(STAMP)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[bench]'
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist
