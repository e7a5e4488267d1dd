# Set-up and entry points. `make site` builds the reference site from the bundled specs;
# `make test` runs the whole test suite (unit, property, golden, build, browser).
# Both create .venv and install what they need on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SITE_STAMP := $(VENV)/.installed-site

# `make site` options (the CI workflows and tests/test_make_targets.py pass them):
# SITE_DIR is where the site goes, SPECS a spec file (empty: the bundled database).
# The permalinks, canonical links and sitemap use $ROOFLINE_ATLAS_SITE_URL when it is set.
SITE_DIR ?= site
SPECS ?=
# `make spec-diff`: the bundled spec file against the same file at git revision BASE_REV.
BASE_REV ?= origin/main

.PHONY: site test serve bench lint clean spec-diff

# scripts/install-python makes the venv and installs with uv (pip where uv cannot be had).
$(STAMP): pyproject.toml scripts/install-python
	PYTHON=$(PYTHON) bash scripts/install-python $(VENV) test
	touch $(STAMP) $(SITE_STAMP)  # the test install holds everything the site needs

$(SITE_STAMP): pyproject.toml scripts/install-python
	PYTHON=$(PYTHON) bash scripts/install-python $(VENV) site
	touch $@

site: $(SITE_STAMP)
	$(BIN)/roofline build --site-dir "$(SITE_DIR)" $(if $(SPECS),--specs "$(SPECS)")

serve: $(SITE_STAMP)
	$(BIN)/roofline build --site-dir "$(SITE_DIR)" $(if $(SPECS),--specs "$(SPECS)") --serve

spec-diff: $(SITE_STAMP)
	@$(BIN)/roofline diff --base-rev "$(BASE_REV)" roofline/data/gpus.toml

test: $(STAMP)
	bash scripts/ensure-chromium
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_evaluate.py
	$(BIN)/python benchmarks/bench_build.py
	$(BIN)/python benchmarks/bench_shapes.py
	$(BIN)/python benchmarks/bench_pages.py
	$(BIN)/python benchmarks/bench_scale.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) site docs/generated test-artifacts
