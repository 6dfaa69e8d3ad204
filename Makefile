# Branchpoint: `make run` serves the demo, `make test` runs everything.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install run test lint format browser bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## Migrate, load the demo project and serve it on SQLite at http://127.0.0.1:8000
run: install
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py load_demo
	DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:8000

## Lint and run the whole suite in two workers (against $$DATABASE_URL when it is set)
test: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -n 2; status=$$?; if [ $$status -eq 5 ]; then echo "no tests collected"; status=0; fi; exit $$status

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## Debian's chromium for the browser tests (needs root)
browser:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

## Benchmarks (print figures against their budgets; PostgreSQL runs too when reachable)
bench: install
	$(BIN)/python bench/trees_io.py
	$(BIN)/python bench/annotate_page.py
	$(BIN)/python bench/corpus_io.py
	$(BIN)/python bench/collect_sim.py
	$(BIN)/python bench/evaluate.py
	$(BIN)/python bench/agreement.py
	$(BIN)/python bench/api_load.py

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache
