# One venv, everything the project needs installed by its own files.
# torch is pinned and installed first: an unpinned torch pulls a multi-GB CUDA build.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

CHROMIUM := /usr/bin/chromium

.PHONY: setup chromium demo test check lint typecheck pytest bench bench-ui screenshots clean

setup: $(STAMP) chromium

# the browser tests drive Debian's Chromium (Playwright never downloads a browser here)
chromium:
	test -x $(CHROMIUM) || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install "torch==2.13.0"
	$(BIN)/python -m pip install -e ".[models,server,dev]"
	touch $(STAMP)

demo: setup
	$(BIN)/palimpsest demo

check: setup lint typecheck

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck:
	$(BIN)/mypy palimpsest

pytest: setup
	$(BIN)/pytest

test: check pytest

bench: setup
	$(BIN)/python bench/core.py

bench-ui: setup
	$(BIN)/python bench/ui.py

# the dashboard's screenshots in docs/, taken by the browser tests
screenshots: setup
	PALIMPSEST_SCREENSHOTS=docs $(BIN)/pytest tests/test_ui_browser.py -q

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
