# One venv, everything the project needs installed by its own files.
# torch is pinned and installed first: an unpinned torch pulls a multi-GB CUDA build.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup demo test check lint typecheck pytest bench clean

setup: $(STAMP)

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

pytest:
	$(BIN)/pytest

test: check pytest

bench: setup
	$(BIN)/python bench/core.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
