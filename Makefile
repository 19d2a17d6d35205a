# textsift — two commands on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat requirements/lock.txt pyproject.toml | sha256sum | cut -c1-12)

# Embedded defaults: local Prefect (temporary API), MLflow on sqlite in the project, no telemetry.
export PATH := $(BIN):$(PATH)
export PREFECT_HOME ?= $(CURDIR)/.prefect
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 90
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := true
export MLFLOW_DISABLE_TELEMETRY := true
export GX_ANALYTICS_ENABLED := False
export HF_HUB_OFFLINE := 1
export PYTHONDONTWRITEBYTECODE := 1
export DVC_SITE_CACHE_DIR ?= $(CURDIR)/.dvc/tmp/site_cache

# make test runs test files on 2 pytest-xdist workers (a file's tests stay together), the longest files first
# (tests/conftest.py orders them; --no-loadscope-reorder keeps that order): the long dvc repro test runs beside
# the rest instead of after it. TEST_WORKERS=0 runs in one process.
# tests.reap stops whatever a test left running (a timed-out test's servers) when pytest exits.
TEST_WORKERS ?= 2

.PHONY: setup run repro test fuzz bench bench-docs lint mlflow-ui clean

# The lock installs with uv (itself pinned, installed by pip): ~1 min cold and ~40 s from uv's cache on a second
# clone, against 2.1-2.4 min with pip. uv reads no pip config, so pip's find-links (where a machine keeps local
# wheels, e.g. a CPU torch) are handed over; --compile-bytecode because PYTHONDONTWRITEBYTECODE is set below and
# imports without bytecode take twice as long.
UV_VERSION := 0.13.9
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps
PIP_FIND_LINKS ?= $(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null)
FIND_LINKS = $(foreach link,$(PIP_FIND_LINKS),--find-links $(link))

$(STAMP): requirements/lock.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(UV) --compile-bytecode $(FIND_LINKS) -r requirements/lock.txt
	$(UV) --no-build-isolation -e .
	rm -f $(VENV)/.installed-*
	touch $@

# Bytecode for the project's own code too (uv compiles the lock's): PYTHONDONTWRITEBYTECODE keeps imports from
# writing it, so without this every process (each `dvc repro` stage, each Dask worker) compiled components/ again.
setup: $(STAMP)
	$(BIN)/python -m compileall -q components flows

run: setup  ## run the whole pipeline (Prefect flow) on the demo corpus
	$(BIN)/python -m flows.pipeline $(ARGS)

repro: setup  ## the same stages through DVC
	$(BIN)/dvc repro

test: setup
	$(BIN)/ruff check components flows tests bench infra
	$(BIN)/mypy
	$(BIN)/python -m tests.reap -- $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15 $(PYTEST_ARGS)

FUZZ_INPUTS ?= 10000

fuzz: setup  ## nightly depth: FUZZ_INPUTS inputs per fuzzed surface (readers, params, REST API), a kill at every commit point
	TEXTSIFT_FUZZ_INPUTS=$(FUZZ_INPUTS) TEXTSIFT_FAULT_SHARE=1 $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile \
	  --durations=10 tests/unit/test_fuzz_readers.py tests/unit/test_fuzz_params.py tests/unit/test_fuzz_api.py \
	  tests/integration/test_runs_agree.py::test_kills_across_the_stages_then_the_bytes_of_an_uninterrupted_run \
	  tests/integration/test_runs_agree.py::test_each_kind_of_damaged_output_is_rebuilt_to_the_bytes_of_an_uninterrupted_run

BENCH_STAMP := $(VENV)/.bench-$(shell cat requirements/bench.txt | sha256sum | cut -c1-12)

$(BENCH_STAMP): requirements/bench.txt | $(STAMP)
	$(UV) --compile-bytecode $(FIND_LINKS) -r requirements/bench.txt
	rm -f $(VENV)/.bench-*
	touch $@

bench: setup $(BENCH_STAMP)  ## figures to bench/results/latest.json (installs spaCy, the detector's reference)
	$(BIN)/python -m bench.run $(ARGS)

bench-docs: setup  ## docs/BENCHMARKS.md from bench/results/latest.json: the docs' only measured figures
	$(BIN)/python -m bench.docs

lint: setup  ## ruff over the code; mypy over the privacy cores and the key path (files: pyproject.toml)
	$(BIN)/ruff check components flows tests bench infra
	$(BIN)/mypy

mlflow-ui: setup  ## browse runs at http://127.0.0.1:5000
	MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false $(BIN)/mlflow ui --backend-store-uri sqlite:///$(CURDIR)/mlruns.db --host 127.0.0.1 --port 5000

clean:
	rm -rf data metrics reports mlruns.db mlartifacts .prefect .dvc/tmp .dvc/cache bench/results/*.json
