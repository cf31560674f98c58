# The two commands a newcomer runs: `make demo` and `make test`.
#
# Every install comes from uv.lock (uv's lock: every direct and transitive dependency, at one
# version, with the hash of each file): a fresh clone installs today what it installed the
# day the lock was written. `make lock` refreshes the lock; `make test-latest` runs the suite
# against the newest releases in a virtual environment of its own (.venv-latest).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CB := $(BIN)/customs-batch
# uv itself, at one version, in a virtual environment of its own (.tools/).
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
# uv never downloads a Python of its own here: the project runs on the machine's $(PYTHON).
UV_ENV := UV_PYTHON_DOWNLOADS=never UV_PROJECT_ENVIRONMENT=$(VENV)

.PHONY: demo test lint typecheck pytest install install-dev fuzz-sandbox bench clean lock test-latest

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet 'uv==$(UV_VERSION)'

# --locked: refuse to install when uv.lock does not match pyproject.toml (run `make lock`).
# --inexact: `make demo` after `make test` leaves the development tools in place.
$(VENV)/.installed: $(UV) pyproject.toml uv.lock
	$(UV_ENV) $(UV) sync --quiet --locked --inexact --python $(PYTHON)
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed pyproject.toml uv.lock
	$(UV_ENV) $(UV) sync --quiet --locked --inexact --extra dev --python $(PYTHON)
	touch $@

## lock: refresh uv.lock to the newest releases pyproject.toml's ranges allow (then run make test)
lock: $(UV)
	$(UV_ENV) $(UV) lock --upgrade --python $(PYTHON)

## test-latest: the whole suite against the newest release of every dependency, in .venv-latest
## (uv.lock is not read or changed): run it before `make lock`, and weekly, to meet upstream
## changes before our users do
LATEST := .venv-latest
test-latest: $(UV) postgres-server chromium
	rm -rf $(LATEST)
	UV_PYTHON_DOWNLOADS=never $(UV) venv --quiet --python $(PYTHON) $(LATEST)
	UV_PYTHON_DOWNLOADS=never $(UV) pip install --quiet --upgrade --python $(LATEST)/bin/python -e '.[dev]'
	$(LATEST)/bin/ruff check customs_batch tests benchmarks
	$(LATEST)/bin/mypy
	$(LATEST)/bin/pytest

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

## demo: the main job on examples/ against the embedded sandbox
# The demo starts from a fresh local environment (the emulator's data and the state live in
# examples/.customs-batch/), validates, plans, applies and waits, then plans again: no changes.
demo: install
	rm -rf examples/.customs-batch
	cd examples && ../$(CB) validate manifests/
	cd examples && ../$(CB) plan manifests/
	cd examples && ../$(CB) apply manifests/ --auto-approve --wait
	cd examples && ../$(CB) plan manifests/ --detailed-exitcode

## test: lint, type checks and the whole test suite
test: install-dev lint typecheck pytest

lint:
	$(BIN)/ruff check customs_batch tests benchmarks
	$(BIN)/ruff format --check customs_batch tests benchmarks

# mypy --strict on the package, the tests and the benchmarks ([tool.mypy] files in pyproject.toml).
typecheck:
	$(BIN)/mypy

pytest: postgres-server chromium openssl
	$(BIN)/pytest

## postgres-server: the tests start a throwaway PostgreSQL cluster of their own; this installs
## the server from Debian's packages when the machine has none (as root, as in CI)
.PHONY: postgres-server
postgres-server:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql; \
	  else \
	    echo "The tests need a PostgreSQL server: sudo apt-get install postgresql" >&2; exit 1; \
	  fi; }

## chromium: the HTML reports' tests open them in headless Chromium driven by Selenium; this
## installs the browser and its driver from Debian's packages when the machine has none (as root)
.PHONY: chromium
chromium:
	@{ [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; } || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; \
	  else \
	    echo "The tests need Chromium: sudo apt-get install chromium chromium-driver" >&2; exit 1; \
	  fi; }

## openssl: the TLS tests make a self-signed certificate with the openssl command; this
## installs it from Debian's packages when the machine has none (as root)
.PHONY: openssl
openssl:
	@command -v openssl >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y openssl; \
	  else \
	    echo "The tests need the openssl command: sudo apt-get install openssl" >&2; exit 1; \
	  fi; }

.PHONY: docs-screenshot
## docs-screenshot: the HTML plan report of the examples in headless Chromium, saved as
## docs/images/html-report.png (tests/reports/screenshot.py)
docs-screenshot: install-dev chromium
	$(BIN)/python -m tests.reports.screenshot docs/images/html-report.png

clean:
	rm -rf $(VENV) $(LATEST) $(TOOLS) build dist .mypy_cache .ruff_cache .pytest_cache

.PHONY: bench-client
## bench-client: requests/s of sync threads vs AsyncClient vs CustomsClient (docs/benchmarks.md)
bench-client: install
	$(BIN)/python benchmarks/client_bench.py

## bench: run every benchmark and rewrite the measured blocks of docs/benchmarks.md
## (benchmarks/report.py; `make bench BENCH="apply sheet"` for some of them)
bench: install postgres-server
	$(BIN)/python benchmarks/report.py $(BENCH)

.PHONY: bench-validate
## bench-validate: validate vs check-jsonschema, printed only (docs/benchmarks.md)
bench-validate: install
	$(BIN)/python benchmarks/validate_bench.py

## fuzz-sandbox: schemathesis against the emulator's /openapi.json with many examples (make test runs a short version)
fuzz-sandbox: install-dev
	SANDBOX_FUZZ_EXAMPLES=$${SANDBOX_FUZZ_EXAMPLES:-300} $(BIN)/pytest tests/sandbox/test_openapi_fuzz.py -q -p no:cacheprovider

.PHONY: bench-sheet
## bench-sheet: a 10,000- and 100,000-row movements export (CSV and XLSX) validated end to end (docs/benchmarks.md)
bench-sheet: install
	$(BIN)/python benchmarks/sheet_bench.py --rows 10000 100000

.PHONY: bench-cache
## bench-cache: validate and plan of 100,000 documents without the load cache, cold, warm, with 10 files changed and a bare floor; apply's first request with 10 movements added (docs/benchmarks.md; CACHE_SIZE=10000 for another size)
bench-cache: install
	$(BIN)/python benchmarks/cache_bench.py --size $${CACHE_SIZE:-100000}

.PHONY: bench-apply
## bench-apply: re-plan of 10,000, apply ops/s with fsync, rate-limited apply, cost of a record (docs/benchmarks.md)
bench-apply: install
	$(BIN)/python benchmarks/plan_apply_bench.py all

.PHONY: bench-apply-speed
## bench-apply-speed: apply ops/s against a bare httpx loop (in-process and against sandbox serve), and paced applies at 20/s and 50/s on busy cores (docs/benchmarks.md)
bench-apply-speed: install
	$(BIN)/python benchmarks/apply_bench.py all

.PHONY: bench-one-thread
## bench-one-thread: a design experiment, printed only: one asyncio thread with 8 requests in flight and apply's journal, against sandbox serve and bare loops (docs/benchmarks.md)
bench-one-thread: install
	$(BIN)/python benchmarks/one_thread_bench.py

.PHONY: bench-emulator
## bench-emulator: requests/s on one kept-alive connection, sandbox serve vs a bare Starlette app (docs/benchmarks.md)
bench-emulator: install
	$(BIN)/python benchmarks/emulator_bench.py

.PHONY: reliability
## reliability: kill -9 trials, emulator kills, a fault soak, lock races, a full disk, hostile
## inputs and the secret search, with real processes (10-20 minutes); writes docs/reliability.md
reliability: install-dev postgres-server
	RELIABILITY_DOC=docs/reliability.md RELIABILITY_RESULTS=$${RELIABILITY_RESULTS:-/tmp/customs-batch-reliability.json} \
	  $(BIN)/pytest tests/reliability -m reliability -q -p no:cacheprovider

.PHONY: bench-scale
## bench-scale: re-plan of 1,000 / 10,000 / 50,000 / 100,000, a run of ten changes on a state of 100,000, spreadsheet loads' memory (docs/benchmarks.md)
bench-scale: install
	$(BIN)/python benchmarks/scale_bench.py all

.PHONY: bench-startup
## bench-startup: --help and a one-file validate as whole processes, bytecode cached, against python -c pass and a bare parse-and-check of the same file (docs/benchmarks.md)
bench-startup: install
	$(BIN)/python benchmarks/startup_bench.py

.PHONY: bench-state-pg
## bench-state-pg: cost of one recorded operation on a PostgreSQL state of 100 and 100,000 (docs/benchmarks.md)
bench-state-pg: install postgres-server
	$(BIN)/python benchmarks/state_pg_bench.py
