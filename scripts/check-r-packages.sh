#!/usr/bin/env bash
# Checks that R and the R packages the statistics use are at the versions of r-packages.csv (the versions
# Debian 12 ships, with which the suite's results were computed): the cumulative link mixed models and
# their contrasts depend on them. `make setup` runs it (scripts/install-system-deps.sh).
#   scripts/check-r-packages.sh [r-packages.csv]
# ALLOW_OTHER_R_VERSIONS=1 goes on with other versions; the CLMM tables may then differ from the ones recorded.
set -euo pipefail
pins="${1:-$(dirname "$0")/../r-packages.csv}"
command -v Rscript >/dev/null 2>&1 || { echo "R is not installed (Rscript not found)" >&2; exit 1; }
report=$(Rscript --vanilla -e '
  pins <- utils::read.csv(commandArgs(TRUE)[1], stringsAsFactors = FALSE)
  installed <- vapply(pins$package, function(p) {
    if (p == "R") return(paste(R.version$major, R.version$minor, sep = "."))
    v <- suppressWarnings(utils::packageDescription(p, fields = "Version"))
    if (is.na(v)) "not installed" else v
  }, "")
  off <- installed != pins$version
  if (any(off)) cat(sprintf("  %s %s, recorded %s (Debian: %s, conda-forge: %s)\n", pins$package[off], installed[off],
                            pins$version[off], pins$debian[off], pins$conda[off]), sep = "")
' "$pins")
if [[ -z "$report" ]]; then
  exit 0
fi
echo "R packages at other versions than $pins records:" >&2
echo "$report" >&2
if [[ -n "${ALLOW_OTHER_R_VERSIONS:-}" ]]; then
  echo "ALLOW_OTHER_R_VERSIONS is set: going on; the models of notebook 05 may differ from the recorded results." >&2
  exit 0
fi
echo "Install the recorded versions (Debian 12's packages, or conda-forge's with environment.yml), or set" >&2
echo "ALLOW_OTHER_R_VERSIONS=1 to go on with these (the models of notebook 05 may then differ)." >&2
exit 1
