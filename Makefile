# Builder: `make start` installs what is missing and starts the service; `make test` installs and runs every test.
SHELL := /bin/bash
VENV := pipelines/.venv
PY := $(VENV)/bin/python
NPM_STAMP := node_modules/.builder-installed
# The dashboard (web/) is built into web/dist, which Builder serves at /; rebuilt when a source file changes.
WEB_DIST := web/dist/index.html
WEB_SOURCES := $(shell find web/src src/http locales -type f 2>/dev/null) web/index.html web/vite.config.ts web/tsconfig.json
VENV_STAMP := $(VENV)/.builder-installed
# Test-only Python tools (the Schemathesis API fuzzer), kept out of the pipelines' environment.
DEV_VENV := .venv-dev
DEV_STAMP := $(DEV_VENV)/.builder-installed

# Which torch build the pipelines get. torch==2.13.0 is pinned in pipelines/requirements.txt; where it comes from
# decides CPU or CUDA:
#   TORCH_INDEX unset (default): pip's own configuration. On PyPI, Linux x86_64 wheels of torch are CUDA builds
#     (several GB with their nvidia-* dependencies); macOS and Windows wheels are CPU builds. This development
#     machine's pip configuration (PIP_FIND_LINKS=/opt/wheels) offers torch-2.13.0+cpu, so it gets the CPU build.
#   TORCH_INDEX=https://download.pytorch.org/whl/cpu : the CPU build anywhere (no CUDA download).
#   TORCH_INDEX=https://download.pytorch.org/whl/cu128 (or another CUDA version): that CUDA build.
# e.g. `make start TORCH_INDEX=https://download.pytorch.org/whl/cpu`. A venv made earlier keeps its torch:
# delete pipelines/.venv to switch. The installed build is printed after the install.
TORCH_INDEX ?=
export ONNXRUNTIME_NODE_INSTALL := skip

.PHONY: install start test test-unit test-unit-ts test-unit-py test-ts test-py test-deploy typecheck lint lint-code format web bench-help clean-data docker-test swarm-test

install: $(NPM_STAMP) $(VENV_STAMP) $(WEB_DIST)

$(NPM_STAMP): package.json package-lock.json
	@# npm install, not npm ci: npm 11 omits optional platform packages from the lock, which npm ci then refuses.
	npm install --no-audit --no-fund
	@touch $@

$(VENV_STAMP): pipelines/requirements.txt
	@test -x $(PY) || python3 -m venv $(VENV)
	$(if $(TORCH_INDEX),$(PY) -m pip install --disable-pip-version-check -q torch==2.13.0 --index-url $(TORCH_INDEX))
	$(PY) -m pip install --disable-pip-version-check -q -r pipelines/requirements.txt
	@$(PY) -c "import torch; print('pipelines/.venv: torch', torch.__version__, '(CUDA ' + torch.version.cuda + ')' if torch.version.cuda else '(CPU build)')"
	@touch $@

$(DEV_STAMP): test/requirements-dev.txt
	@test -x $(DEV_VENV)/bin/python || python3 -m venv $(DEV_VENV)
	$(DEV_VENV)/bin/python -m pip install --disable-pip-version-check -q -r test/requirements-dev.txt
	@touch $@

web: $(WEB_DIST)

$(WEB_DIST): $(NPM_STAMP) $(WEB_SOURCES)
	npm run build:web

start: install
	./builder migrate
	./builder serve

typecheck: $(NPM_STAMP)
	npx tsc --noEmit
	npx tsx scripts/web-api-types.ts
	npx tsc -p web/tsconfig.json

# `make test` lints (ESLint, Ruff, and the Prettier / ruff format checks: `make format` fixes those) before the tests.
test: install typecheck lint test-deploy test-py test-ts
	@node scripts/test-summary.mjs

# The fast tier for the edit-test loop: the TypeScript unit tests (test/unit: no shared database, no training, no
# browser; two files at a time) and, beside them, the pipeline tests not marked `train` (pipelines/tests/conftest.py).
# Many unit tests wait on child processes and threads, so the two runners overlap well on two cores. The unit files
# share each worker's module graph (--no-isolate: 75 s against 115 s at load 10, the same 568 tests passing);
# make test still gives every file a fresh one.
test-unit: $(NPM_STAMP) $(VENV_STAMP)
	@$(MAKE) --no-print-directory -j2 -O test-unit-ts test-unit-py

test-unit-ts:
	npx vitest run --project unit --maxWorkers=2 --fileParallelism --no-isolate

test-unit-py:
	cd pipelines && .venv/bin/python -m pytest -q -p no:cacheprovider -m "not train" tests

# What Prettier formats: our TypeScript and JavaScript, the dashboard's CSS and the root configs (not Markdown, JSON
# or the generated API types: .prettierignore).
PRETTIER_FILES := "src/**/*.{ts,tsx,mts,mjs}" "web/src/**/*.{ts,tsx,css}" web/vite.config.ts "test/**/*.ts" \
	"bench/**/*.{ts,mts,mjs}" "scripts/**/*.{ts,mjs}" eslint.config.js vitest.config.ts drizzle.config.ts
RUFF := $(DEV_VENV)/bin/ruff

# ESLint (eslint.config.js) and Ruff's linter (ruff.toml), zero warnings: what `make test` runs.
lint-code: $(NPM_STAMP) $(DEV_STAMP)
	npx eslint --max-warnings 0 .
	$(RUFF) check .

lint: lint-code
	npx prettier --check $(PRETTIER_FILES)
	$(RUFF) format --check .

# Rewrites files in place: Prettier for the TypeScript, Ruff for the Python (and its import order). Prettier runs twice:
# on this tree its first pass lays out a few method chains that its second pass joins again (5 files), and
# `make lint` checks the fixed point.
format: $(NPM_STAMP) $(DEV_STAMP)
	npx prettier --write --log-level warn $(PRETTIER_FILES)
	npx prettier --write --log-level warn $(PRETTIER_FILES)
	$(RUFF) check --select I --fix .
	$(RUFF) format .

# The Kubernetes manifests (deploy/kubernetes): rendered with `kubectl kustomize` and validated offline against the
# Kubernetes API's schemas, KEDA's objects against a structural schema, and the references between objects checked;
# --self-test breaks a copy in known ways and checks each break is reported. Seconds; no cluster.
test-deploy: $(DEV_STAMP)
	$(DEV_VENV)/bin/python scripts/validate-kubernetes.py
	$(DEV_VENV)/bin/python scripts/validate-kubernetes.py --self-test

# The browser tests (test/browser) drive Debian's chromium against the built dashboard.
test-ts: $(NPM_STAMP) $(VENV_STAMP) $(DEV_STAMP) $(WEB_DIST)
	@rm -f .test-results/vitest.json
	npx vitest run --reporter=default --reporter=json --outputFile.json=.test-results/vitest.json

test-py: $(VENV_STAMP)
	@rm -f .test-results/pytest.xml
	cd pipelines && .venv/bin/python -m pytest -q -p no:cacheprovider --junitxml=../.test-results/pytest.xml tests

clean-data:
	rm -rf data

# The deployment end to end with a real Docker engine (root; slow, minutes): not part of `make test`.
docker-test:
	scripts/docker-test.sh

# The Docker Swarm stack (deploy/swarm) for real on a single-node swarm of this machine's engine: a build to ready,
# a rolling update of the api under a steady /predict load, a worker killed mid-build (root; minutes; not part of
# `make test`). SWARM_TEST_RESULTS=FILE appends the figures it measured to FILE.
swarm-test:
	scripts/swarm-test.sh
