# The two commands the README promises on a fresh machine: `make demo` and `make test`.
# Each creates .venv when missing and installs what it needs (Python packages from
# PyPI, the npm reference server into tests/peers/node_modules).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo lint typecheck unit bench install peers ws-peer clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test,demo,bench,fast]'
	touch $(STAMP)

install: $(STAMP)

tests/peers/node_modules/.package-lock.json: tests/peers/package.json tests/peers/package-lock.json
	npm ci --prefix tests/peers --no-audit --no-fund --loglevel=error
	touch $@

peers: tests/peers/node_modules/.package-lock.json

# The WebSocket peer (issue 25): the official SDK 1.x in a venv of its own (mcp 2.x,
# in .venv, has no WebSocket transport). Made once; remade when the pins change.
WS_VENV := tests/peers/ws-venv
WS_STAMP := $(WS_VENV)/.installed
$(WS_STAMP): tests/peers/ws-requirements.txt
	test -x $(WS_VENV)/bin/python || $(PYTHON) -m venv $(WS_VENV)
	$(WS_VENV)/bin/python -m pip install -q --disable-pip-version-check -r tests/peers/ws-requirements.txt
	touch $(WS_STAMP)

ws-peer: $(WS_STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check mcp_proto mcp_io_common mcp_io_sync mcp_io_trio tests bench fuzz examples
	$(VENV)/bin/ruff format --check mcp_proto mcp_io_common mcp_io_sync mcp_io_trio

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict mcp_proto mcp_io_common mcp_io_sync mcp_io_trio

# The core's tests run twice: with orjson (the "fast" extra, installed here) and with
# the standard json module alone, the path of an install without the extra. Two workers
# (pytest-xdist), a test file each at a time: a file's module fixtures (servers, CLI
# batches) start once. Most of the suite waits on server processes, so this halves it.
XDIST := -n 2 --dist loadfile
unit: $(STAMP) peers ws-peer
	$(PY) -m pytest -q -W error $(XDIST)
	MCP_PROTO_JSON=json $(PY) -m pytest -q -W error -p no:cacheprovider $(XDIST) tests/proto

test: lint typecheck unit

# The demo narrates itself: make echoes each command before running it.
MCP_PROTO := $(VENV)/bin/mcp-proto
DEMO_SERVER := -- $(PY) examples/demo_server.py
demo: $(STAMP)
	$(MCP_PROTO) tools $(DEMO_SERVER)
	$(MCP_PROTO) call countdown seconds=3 $(DEMO_SERVER)
	$(MCP_PROTO) read demo://readme $(DEMO_SERVER)
	$(MCP_PROTO) prompt review 'code=def add(a, b): return a - b' $(DEMO_SERVER)

bench: $(STAMP)
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) $(WS_VENV) tests/peers/node_modules .pytest_cache .mypy_cache .ruff_cache

# Fuzzing (issue 11): each target in fuzz/ for FUZZ_SECONDS, coverage-guided under
# atheris (installed here, into the venv, if it installs), else the hypothesis
# byte-stream driver. `make test` only replays fuzz/corpus/ (tests/proto/test_fuzz_targets.py).
FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?=
fuzz: $(STAMP)
	-$(PY) -m pip install -q --disable-pip-version-check -e '.[fuzz]'
	$(PY) fuzz/run.py $(FUZZ_TARGETS) --seconds $(FUZZ_SECONDS)

# Mutation testing (issue 11), one pure module at a time against its own tests; not part
# of `make test`. MUTATE_MODULES picks modules; scores are recorded in docs/testing.md.
MUTATE_MODULES ?=
mutate: $(STAMP)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[mutate]'
	$(PY) fuzz/mutate.py $(MUTATE_MODULES)
