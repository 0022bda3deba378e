"""Obtain the CaLMQA release files and check them against the committed manifest.

Sources, in order: the folder named by CALMQA_MIRROR; a `shared/calmqa` mirror beside the checkout;
a download from the upstream repository at the pinned commits. Checksums are of the uncompressed
content, so a file may arrive as `.json` or `.json.gz`.
"""

import csv
import gzip
import hashlib
import os
import shutil
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from tqdm import tqdm

from ..core import errors, files, paths
from ..core.errors import Problems

UPSTREAM_BASE = "https://raw.githubusercontent.com/2015aroras/CaLMQA"
CHUNK = 1 << 20


@dataclass(frozen=True)
class ReleaseFile:
    file: str  # path inside the release folder, without a `.gz` suffix
    upstream_path: str
    upstream_commit: str
    sha256: str
    bytes: int

    def url(self, base: str) -> str:
        return f"{base.rstrip('/')}/{self.upstream_commit}/{self.upstream_path}"


def read_manifest(manifest: Path = paths.MANIFEST) -> list[ReleaseFile]:
    with open(manifest, newline="", encoding="utf-8") as fh:
        return [
            ReleaseFile(r["file"], r["upstream_path"], r["upstream_commit"], r["sha256"], int(r["bytes"]))
            for r in csv.DictReader(fh)
        ]


def locate(folder: Path, name: str) -> Path | None:
    """The file `name` in `folder`, as it is or gzipped."""
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def open_uncompressed(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def sha256_uncompressed(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with open_uncompressed(path) as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


# What reading a damaged gzip file raises: a truncated one EOFError, a flipped byte zlib.error or BadGzipFile.
UNREADABLE = (OSError, EOFError, zlib.error)


def unreadable(exc: OSError | EOFError | zlib.error) -> str:
    """Why a file could not be read, for a problem's message."""
    if isinstance(exc, (EOFError, zlib.error, gzip.BadGzipFile)):
        return f"cannot be read: {exc} (a truncated or corrupted gzip file?)"
    return f"cannot be read: {errors.reason(exc)}"


def source_checksums(folder: Path, found: list[Path] | None = None) -> pl.DataFrame:
    """The files `found` of `folder` (by default every file of it, hidden ones left out) with the sha256
    and size of their uncompressed content, and the time each was last modified (`mtime_ns`, taken before
    it is read: a build compares it and the checksum before and after it reads the files)."""
    if found is None:
        found = [p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")]
    rows, problems = [], Problems()
    for path in sorted(found):
        try:
            modified = path.stat().st_mtime_ns
            sha, size = sha256_uncompressed(path)
        except UNREADABLE as exc:
            problems.add(path, None, None, unreadable(exc))
            continue
        rows.append({"file": str(path.relative_to(folder)), "sha256": sha, "bytes": size, "mtime_ns": modified})
    problems.raise_if_any()
    return pl.DataFrame(rows, schema={"file": pl.String, "sha256": pl.String, "bytes": pl.Int64, "mtime_ns": pl.Int64})


def fingerprint(checksums: pl.DataFrame) -> str:
    """A short name of a version of the release: the sha256 of its files' names (without `.gz`) and
    checksums (`source_checksums`, or the database's `source_files`), whether or not they are gzipped."""
    lines = sorted(
        f"{file.removesuffix('.gz')}\t{sha}\n" for file, sha in checksums.select("file", "sha256").iter_rows()
    )
    return hashlib.sha256("".join(lines).encode()).hexdigest()[:16]


def differences(checksums: pl.DataFrame, manifest: list[ReleaseFile] | None = None) -> list[str]:
    """The pinned release's files that `checksums` (of a release folder, or a database's `source_files`)
    lacks or holds with other content; empty when it is the pinned release (other files do not count)."""
    manifest = manifest if manifest is not None else read_manifest()
    found = {file.removesuffix(".gz"): sha for file, sha in checksums.select("file", "sha256").iter_rows()}
    return [entry.file for entry in manifest if found.get(entry.file) != entry.sha256]


def check_file(path: Path, expected: ReleaseFile, problems: Problems) -> bool:
    try:
        sha, size = sha256_uncompressed(path)
    except UNREADABLE as exc:
        problems.add(path, None, None, f"{unreadable(exc)}; expected the release file {expected.file}")
        return False
    if sha != expected.sha256:
        problems.add(
            path,
            None,
            None,
            f"checksum mismatch: sha256 of the content is {sha} ({size} bytes), "
            f"the manifest expects {expected.sha256} ({expected.bytes} bytes)",
        )
        return False
    return True


def verify(folder: Path, manifest: list[ReleaseFile] | None = None) -> None:
    """Check that every manifest file is in `folder` with the pinned content; raise naming each one that is not."""
    manifest = manifest if manifest is not None else read_manifest()
    problems = Problems()
    for entry in tqdm(manifest, desc=f"verify {folder}", unit="file", disable=None):
        path = locate(folder, entry.file)
        if path is None:
            problems.add(folder / entry.file, None, None, "missing (neither the file nor a .gz of it is there)")
        else:
            check_file(path, entry, problems)
    problems.raise_if_any()


def mirror_folder() -> Path | None:
    """The local mirror to copy from, or None to download."""
    named = os.environ.get("CALMQA_MIRROR")
    if named:
        folder = Path(named)
        if not folder.is_dir():
            raise FileNotFoundError(f"CALMQA_MIRROR={named} is not a folder")
        return folder
    return paths.SHARED_MIRROR if paths.SHARED_MIRROR.is_dir() else None


def _copy(source: Path, entry: ReleaseFile, target: Path, problems: Problems) -> None:
    if not check_file(source, entry, problems):
        return
    with files.atomic_write(target) as tmp:
        shutil.copyfile(source, tmp)


class _Mismatch(Exception):
    pass


def _download(entry: ReleaseFile, base: str, target: Path, problems: Problems) -> None:
    url = entry.url(base)
    try:
        with files.atomic_write(target) as tmp:
            with urllib.request.urlopen(url, timeout=60) as response, open(tmp, "wb") as out:
                shutil.copyfileobj(response, out, CHUNK)
            sha, size = sha256_uncompressed(tmp)
            if sha != entry.sha256:
                raise _Mismatch(
                    f"downloaded from {url}: checksum mismatch: sha256 {sha} ({size} bytes), "
                    f"the manifest expects {entry.sha256} ({entry.bytes} bytes)"
                )
    except (urllib.error.URLError, OSError) as exc:
        problems.add(target, None, None, f"download from {url} failed: {exc}")
    except _Mismatch as exc:
        problems.add(target, None, None, str(exc))


def fetch(
    dest: Path = paths.RAW_CALMQA,
    mirror: Path | None = None,
    upstream_base: str | None = None,
    manifest: list[ReleaseFile] | None = None,
) -> str:
    """Put every release file into `dest`, verified. Returns a sentence saying where the files came from.

    With `mirror` None the files are downloaded from `upstream_base` (default: the upstream repository,
    or CALMQA_UPSTREAM when set). A file already in `dest` with the pinned content is kept.
    """
    manifest = manifest if manifest is not None else read_manifest()
    dest.mkdir(parents=True, exist_ok=True)
    upstream = upstream_base or os.environ.get("CALMQA_UPSTREAM", UPSTREAM_BASE)  # when there is no mirror
    problems = Problems()
    for entry in tqdm(manifest, desc="obtain CaLMQA release", unit="file", disable=None):
        existing = locate(dest, entry.file)
        if existing is not None:
            if check_file(existing, entry, Problems()):
                continue
            existing.unlink()
        if mirror is not None and (from_mirror := locate(mirror, entry.file)) is not None:
            _copy(from_mirror, entry, dest / from_mirror.relative_to(mirror), problems)
        elif not entry.upstream_path:
            # Not an upstream file (languages.csv, the paper's Table 10): the project's own copy stands in.
            _copy(paths.LANGUAGES_CSV, entry, dest / entry.file, problems)
        elif mirror is not None:
            problems.add(mirror / entry.file, None, None, "missing from the mirror (neither the file nor a .gz of it)")
        else:
            _download(entry, upstream, dest / entry.file, problems)
    problems.raise_if_any()
    source = f"the mirror {mirror}" if mirror is not None else f"{upstream} at the pinned commits"
    return f"{len(manifest)} files from {source} in {dest}, every checksum verified"
