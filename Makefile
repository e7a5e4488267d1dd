# Set-up and entry points. `make site` builds the reference site from the bundled specs;
# `make test` runs the whole test suite (unit, property, golden, build, browser).
# Both create .venv and install what they need on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: site test serve bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch==2.13.0 is the CPU build these machines carry; an unpinned torch pulls CUDA.
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[test,torch]"
	# torchao 0.18 is only the cross-check oracle of the parity tests (pure-Python use).
	$(BIN)/python -m pip install --quiet --no-deps "torchao==0.18.0"
	touch $(STAMP)

$(VENV)/.installed-site: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

site: $(VENV)/.installed-site
	$(BIN)/roofline build

serve: $(VENV)/.installed-site
	$(BIN)/roofline build --serve

test: $(STAMP)
	bash scripts/ensure-chromium
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_evaluate.py
	$(BIN)/python benchmarks/bench_build.py

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) site docs/generated test-artifacts
