# vae — the two commands a newcomer needs are `make demo` and `make test`.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
# Optional setup scripts of the integrations (browser for the report test,
# Node packages for the Node example, pipecat's and LiveKit's own venvs, PostgreSQL for the
# shared-store tests, SIPp/baresip/Kamailio for the SIP tests); each is idempotent.
SETUP_SCRIPTS := $(wildcard scripts/ci_setup_browser.sh scripts/ci_setup_node.sh scripts/setup_pipecat_env.sh scripts/setup_livekit_env.sh scripts/ci_setup_postgres.sh scripts/ci_setup_sip.sh)

.PHONY: install dev demo test test-deps check lint typecheck protos protos-check bench clean

install:  ## install vae (runtime only) and put `vae` on PATH
	$(PIP) install -q -e .
	@command -v pyenv >/dev/null 2>&1 && pyenv rehash || true

demo: install  ## install, then run the whole product once on the embedded defaults
	vae demo

dev:  ## install vae with the development tools
	$(PIP) install -q -e '.[dev]'
	@command -v pyenv >/dev/null 2>&1 && pyenv rehash || true

test-deps: dev
	@for s in $(SETUP_SCRIPTS); do echo "== $$s"; bash $$s || exit 1; done

# Most tests wait on real-time audio rather than the CPU: three workers cut the
# wall time about 2.5x on 2 cores (PYTEST_WORKERS=0 runs them in one process).
# Tests marked `serial` assert real-time delivery beside a load they make
# themselves (the fuzzer, a flooder): they run afterwards, alone. `--dist loadgroup`
# keeps the tests marked xdist_group("ray") in one worker: one Ray instance.
PYTEST_WORKERS ?= 3

# --durations=15: every run ends with its 15 slowest tests, so CI time is watched as
# the suite grows (budget: .ci/run within 35 minutes on the 2-core reference machine).
test: test-deps  ## install what the tests need, then run them
	$(PYTHON) -m pytest -n $(PYTEST_WORKERS) --dist loadgroup -m "not serial" --durations=15
	$(PYTHON) -m pytest -m serial --durations=15

lint: dev
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

typecheck: dev
	$(PYTHON) -m mypy

protos:  ## regenerate vae/*/v1 from protos/ (the only way they are produced)
	$(PYTHON) scripts/gen_protos.py

protos-check: dev protos  ## fail when the committed generated code differs from a regeneration
	@git status --porcelain -- vae protos | grep . && { echo "generated code drifted: run 'make protos' and commit"; git diff --stat -- vae; exit 1; } || echo "generated code is up to date"

check: lint typecheck protos-check  ## lint, format, types, generated-code drift

bench: dev  ## run the benchmarks at quick sizes (full runs: the commands in docs/benchmarks.md)
	@for b in benchmarks/*.py; do echo "== $$b"; $(PYTHON) $$b --quick || exit 1; done

clean:
	rm -rf build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
