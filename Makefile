# Branchpoint: `make run` serves the demo, `make test` runs everything.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install run local-env test lint format browser bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## Migrate, load the demo project and serve it on SQLite at http://127.0.0.1:8000, with a jobs
## worker beside the server (imports above the job threshold, ...), stopped with it
RUN_ADDRESS ?= 127.0.0.1:8000
run: install local-env
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo --address $(RUN_ADDRESS)
	$(BIN)/python manage.py jobs_worker & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker' EXIT; \
	$(BIN)/python manage.py runserver $(RUN_ADDRESS)

## The checkout's own settings (DEBUG=1, a new SECRET_KEY), read by config/settings.py:
## written once, never overwritten (delete the file for a new key). Not for production.
LOCAL_ENV ?= var/local.env
local-env:
	@$(PYTHON) -c "$$WRITE_LOCAL_ENV" '$(LOCAL_ENV)'

define WRITE_LOCAL_ENV
import os, secrets, sys
path = sys.argv[1]
os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
try:
    out = os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w")
except FileExistsError:
    sys.exit(0)
with out:
    out.write(
        "# This checkout's settings for local use, written once by make run (docs/deploying.md).\n"
        "# Variables set in the environment win; with SECRET_KEY set there, this file is not read.\n"
        "# Never use it in production.\n"
        "DEBUG=1\n"
        f"SECRET_KEY={secrets.token_urlsafe(50)}\n"
    )
print(f"wrote {path}: DEBUG=1 and a new SECRET_KEY, for local use")
endef
export WRITE_LOCAL_ENV

## Lint and run the whole suite in two workers (against $$DATABASE_URL when it is set);
## PYTEST_ARGS passes more to pytest (CI's PostgreSQL pass: -m "not browser")
test: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -n 2 $(PYTEST_ARGS); status=$$?; if [ $$status -eq 5 ]; then echo "no tests collected"; status=0; fi; exit $$status

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## Debian's chromium for the browser tests (needs root)
browser:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

## Benchmarks (print figures against their budgets; PostgreSQL runs too when reachable)
bench: install
	$(BIN)/python bench/trees_io.py
	$(BIN)/python bench/oasst_messages_io.py
	$(BIN)/python bench/annotate_page.py
	$(BIN)/python bench/corpus_io.py
	$(BIN)/python bench/collect_sim.py
	$(BIN)/python bench/evaluate.py
	$(BIN)/python bench/agreement.py
	$(BIN)/python bench/api_load.py
	$(BIN)/python bench/page_cycle.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/record_imports.py

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache
