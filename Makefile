# One venv, everything the project needs installed by its own files.
# The defaults need no torch; the dev venv has the fp32 extra too (a test compares the int8
# model with it), and torch is pinned and installed first: an unpinned torch pulls a
# multi-GB CUDA build. Users: `pip install ".[models,server]"` (no torch at all).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

CHROMIUM := /usr/bin/chromium

.PHONY: setup chromium mcp-peer postgres demo test check lint typecheck pytest bench bench-ui bench-mcp screenshots clean

setup: $(STAMP)

# the browser tests drive Debian's Chromium (Playwright never downloads a browser here);
# only `make test` (and the targets that drive the dashboard) install it, never `make demo`
chromium:
	test -x $(CHROMIUM) || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install "torch==2.13.0"
	$(BIN)/python -m pip install -e ".[models,server,fp32,dev,postgres]"
	touch $(STAMP)

# the official MCP memory server, which tests/test_mcp_compat.py compares against (the test
# installs it the same way on first use); npm is the only registry it needs
MCP_PEER := .cache/mcp-peer
mcp-peer:
	test -f $(MCP_PEER)/node_modules/@modelcontextprotocol/server-memory/dist/index.js || \
	  npm install --prefix $(MCP_PEER) --no-audit --no-fund --no-save \
	    @modelcontextprotocol/server-memory@2026.8.31

# the tests start throwaway PostgreSQL servers (tests/pg_server.py) from Debian's postgresql:
# installed for the tests only, never for the demo; with it, no PostgreSQL test may skip
postgres:
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || \
	  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql)

demo: setup
	$(BIN)/palimpsest demo

check: setup lint typecheck

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck:
	$(BIN)/mypy palimpsest

pytest: setup chromium mcp-peer postgres
	PALIMPSEST_REQUIRE_POSTGRES=1 $(BIN)/pytest

test: check pytest

bench: setup
	$(BIN)/python bench/core.py

bench-mcp: setup mcp-peer
	$(BIN)/python bench/mcp_compat.py

bench-ui: setup chromium
	$(BIN)/python bench/ui.py

# the dashboard's screenshots in docs/, taken by the browser tests
screenshots: setup chromium
	PALIMPSEST_SCREENSHOTS=docs $(BIN)/pytest tests/test_ui_browser.py -q

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis .cache
