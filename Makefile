# The two quick-start commands (see README): `make demo` and `make test`.
# Each sets everything up on a fresh clone (a virtualenv in .venv) and then runs.
VENV ?= .venv
STAMP := $(VENV)/.kldcard-installed

.PHONY: demo test setup generate

$(STAMP): pyproject.toml constraints.txt setup.py scripts/setup-venv.sh
	scripts/setup-venv.sh $(VENV)

setup: $(STAMP)

## demo: the main job on bundled examples
demo: $(STAMP)
	$(VENV)/bin/kldcard demo
	@echo; echo "== The linter on the bundled example cards: one compliant, one per rule it enforces =="
	@$(VENV)/bin/kldcard lint examples/cards/*.md; test $$? -le 1

## test: the whole test suite
test: $(STAMP)
	$(VENV)/bin/python -m pytest

## generate: regenerate committed artefacts (JSON Schemas, rule docs, pre-commit hook file)
generate: $(STAMP)
	$(VENV)/bin/python scripts/generate.py
