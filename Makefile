# CaLMQA analysis suite. `make help` lists the targets.
# No .DELETE_ON_ERROR: every recipe writes its target atomically, and deleting the database after a
# failed build is exactly what must not happen.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
MAKEFLAGS += --no-builtin-rules
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SETUP := $(VENV)/.setup-done
RAW := data/raw/calmqa
DATA_STAMP := $(RAW)/.verified
DB ?= data/calmqa.duckdb
SOURCE ?= $(RAW)
VERIFY ?= yes

# The database depends on the code that builds it; reports depend on all the package code.
DB_CODE := $(addprefix analysis/,__init__.py db.py errors.py ingest.py language_id.py nativqa.py release.py schema.py \
                             surface.py tokenizer.py vocabulary.py) \
           $(wildcard data/nativqa/*.csv)
# Code that only the index, the browser check or the explorer use must not re-run every notebook.
PACKAGE_CODE := $(filter-out analysis/index.py analysis/browser.py analysis/explorer.py,$(wildcard analysis/*.py))
ifeq ($(SOURCE),$(RAW))
SOURCE_FILES := $(DATA_STAMP)
else
SOURCE_FILES := $(shell find $(SOURCE) -type f 2>/dev/null)
endif
NOTEBOOKS := $(sort $(filter-out notebooks/00_%,$(wildcard notebooks/[0-9][0-9]_*.ipynb)))
REPORTS := $(patsubst notebooks/%.ipynb,reports/%.html,$(NOTEBOOKS))
INDEX := reports/index.html
# The reproduction report reads the figures CSVs of every other notebook, so it runs after them.
REPRODUCTION := reports/08_paper_reproduction.html
CLAIMS := $(wildcard data/paper/claims/*.csv)

.PHONY: help setup data db figures check-reports check-paper import-answers import-metrics import-questions test bench bench-surface check-tokenizer lab clean

help: ## list the targets
	@echo "CaLMQA analysis suite. Targets:"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## (.*)/  make \1\t\2/' | expand -t 24
	@echo "Variables: DB=$(DB)  SOURCE=$(SOURCE)  VERIFY=$(VERIFY) (VERIFY=no builds from files that differ from the pinned release)"

setup: $(SETUP) ## create .venv with every package, R and fonts (apt-get on Debian), and the Jupyter kernel

$(SETUP): pyproject.toml scripts/install-system-deps.sh
	bash scripts/install-system-deps.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m ipykernel install --sys-prefix --name calmqa-analysis --display-name "Python (calmqa-analysis)" >/dev/null
	touch $@

data: $(DATA_STAMP) ## obtain the CaLMQA release into data/raw/calmqa and verify every checksum

$(DATA_STAMP): data/calmqa-manifest.csv data/calmqa-languages.csv | $(SETUP)
	$(PY) -m analysis fetch --dest $(RAW)
	touch $@

db: $(DB) ## build the DuckDB database (DB=path, SOURCE=release folder, VERIFY=no for your own files)

$(DB): $(SOURCE_FILES) $(DB_CODE) | $(SETUP)
	$(PY) -m analysis build-db --source $(SOURCE) --db $(DB) $(if $(filter no,$(VERIFY)),--no-verify)

figures: $(INDEX) ## run every notebook: figures/<notebook>/ (PNG, SVG, PDF, CSV), reports/<notebook>.html, reports/index.html

$(INDEX): $(REPORTS) analysis/index.py analysis/report.py | $(SETUP)
	$(PY) -m analysis.index

check-reports: $(INDEX) ## open every report in headless Chromium (network off): charts drawn, no console error, no request
	$(PY) -m analysis.browser $(INDEX) $(REPORTS)

reports/%.html: notebooks/%.ipynb $(DB) $(PACKAGE_CODE) | $(SETUP)
	$(PY) -m analysis run-notebook $* --db $(DB)

$(REPRODUCTION): $(filter-out $(REPRODUCTION),$(REPORTS)) $(CLAIMS)

check-paper: $(INDEX) ## every number the two papers print against the suite's: counts by status; fails on a change
	$(PY) -m analysis.paper_check --figures figures --claims data/paper/claims

import-answers: | $(SETUP) ## add a model's answers: FILE=answers.csv|.jsonl|dataset-*.json [DB=]
	$(PY) -m analysis import-answers $(FILE) --db $(DB)

import-metrics: | $(SETUP) ## add per-answer metrics: FILE=metrics.csv|.jsonl [VERIFICATION=veriscore file] [DB=]
	$(PY) -m analysis import-metrics $(FILE) --db $(DB) $(if $(VERIFICATION),--verification $(VERIFICATION))

import-questions: | $(SETUP) ## add questions of the public dataset's export: FILE=questions.csv|.jsonl [DB=]
	$(PY) -m analysis import-questions $(FILE) --db $(DB)

test: $(SETUP) $(DATA_STAMP) ## set up, obtain the data and run the whole test suite
	$(PY) -m pytest

bench: $(DATA_STAMP) | $(SETUP) ## time every stage at 1x, 10x, 50x the snapshot -> bench/results/ (BENCH_ARGS="--scales 1")
	$(PY) scripts/bench.py $(BENCH_ARGS)

bench-surface: $(DB) | $(SETUP) ## surface stage vs the CaLMQA authors' approach: speed and agreement -> bench/results/surface.*
	$(PY) scripts/bench_surface.py --db $(DB)

check-tokenizer: $(DB) | $(SETUP) ## o200k_base: tiktoken vs quicktok token ids on every text; repetition verdicts vs cl100k -> bench/results/tokenizer.*
	$(PY) scripts/check_tokenizer.py --db $(DB)

lab: $(SETUP) $(DB) ## open JupyterLab on notebooks/ with the project's kernel
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks

clean: ## remove figures, reports and build outputs (keeps the data, the database and .venv)
	rm -rf build reports $(filter-out figures/README.md,$(wildcard figures/*))
