# Builder: `make start` installs what is missing and starts the service; `make test` installs and runs every test.
SHELL := /bin/bash
VENV := pipelines/.venv
PY := $(VENV)/bin/python
NPM_STAMP := node_modules/.builder-installed
VENV_STAMP := $(VENV)/.builder-installed
export ONNXRUNTIME_NODE_INSTALL := skip

.PHONY: install start test test-ts test-py typecheck bench-help clean-data

install: $(NPM_STAMP) $(VENV_STAMP)

$(NPM_STAMP): package.json package-lock.json
	@# npm install, not npm ci: npm 11 omits optional platform packages from the lock, which npm ci then refuses.
	npm install --no-audit --no-fund
	@touch $@

# torch==2.13.0 is pinned in requirements.txt: pip takes the local CPU wheel; an unpinned torch would pull CUDA.
$(VENV_STAMP): pipelines/requirements.txt
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -r pipelines/requirements.txt
	@touch $@

start: install
	./builder migrate
	./builder serve

typecheck: $(NPM_STAMP)
	npx tsc --noEmit

test: install typecheck test-py test-ts
	@node scripts/test-summary.mjs

test-ts: $(NPM_STAMP) $(VENV_STAMP)
	@rm -f .test-results/vitest.json
	npx vitest run --reporter=default --reporter=json --outputFile.json=.test-results/vitest.json

test-py: $(VENV_STAMP)
	@rm -f .test-results/pytest.xml
	cd pipelines && .venv/bin/python -m pytest -q -p no:cacheprovider --junitxml=../.test-results/pytest.xml tests

clean-data:
	rm -rf data
