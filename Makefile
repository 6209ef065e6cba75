# kraftsim: every target installs what it needs into .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The base install alone (what the demo needs: no Spark, mypy or ruff); the full one implies it.
BASE_STAMP := $(VENV)/.installed-base
# The real Kafka files the interop tests and the file benchmark read (shared/ beside the checkout).
KRAFTSIM_KAFKA_DATA ?= $(abspath ../shared/kafka-data)
export KRAFTSIM_KAFKA_DATA

.PHONY: demo experiment test lint unit bench bench-experiments clean chromium

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,experiments]'
	touch $(STAMP) $(BASE_STAMP)

$(BASE_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(BASE_STAMP)

# The demo needs the base install only (about 40 MB); an existing full install serves too.
demo: $(BASE_STAMP)
	$(VENV)/bin/kraftsim demo

# A small sweep of each experiment on Spark: Parquet, report.md and plots in a new run folder
# out/EXPERIMENT/RUN_ID (out/EXPERIMENT/latest points at the newest).
experiment: $(STAMP)
	$(VENV)/bin/kraftsim experiment failover --out out/failover
	$(VENV)/bin/kraftsim experiment visibility --out out/visibility

# Lint, type-check and the whole suite, Spark and the slow injected-bug searches included
# (what .ci/run calls).
test: lint $(STAMP) chromium
	$(PY) -m pytest -q -n 2 --dist loadgroup

# The timeline.html browser test needs headless Chromium (Debian's chromium package);
# install it when missing (as root, else through sudo).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium; }

# The quick loop: the suite without Spark (marker spark) and without the slow
# injected-bug searches (marker slow).
unit: $(STAMP) chromium
	$(PY) -m pytest -q -n 2 --dist loadgroup -m 'not spark and not slow'

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(VENV)/bin/kraftsim bench

# Spark vs a process pool, local[2] vs local[1], 10,000 failover runs (several minutes).
bench-experiments: $(STAMP)
	$(PY) -m bench.experiments

# Also the Spark class-data archives of this checkout's environments in ~/.cache/kraftsim
# (kraftsim cache info lists them); the standard library runs it, so no venv is needed.
clean:
	$(PYTHON) -I experiments/cache_dir.py clean --checkout $(CURDIR)
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
