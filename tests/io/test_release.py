import functools
import gzip
import http.server
import shutil
import threading
from pathlib import Path

import pytest

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.io import release

SUBSET = ("categories-metadata.csv", "datasets/dataset-specific-tongan.json", "languages.csv")


@pytest.fixture(scope="module")
def manifest():
    entries = {e.file: e for e in release.read_manifest()}
    return [entries[name] for name in SUBSET]


def test_manifest_lists_every_release_file():
    files = {e.file for e in release.read_manifest()}
    assert len(files) == 49
    assert sum(f.startswith("datasets/dataset-") for f in files) == 46
    assert {"all_ratings.csv", "categories-metadata.csv", "languages.csv"} <= files


def test_obtained_release_verifies(release_folder):
    release.verify(release_folder)


def test_fetch_from_mirror(tmp_path, release_folder, manifest):
    message = release.fetch(tmp_path / "raw", mirror=release_folder, manifest=manifest)
    assert "every checksum verified" in message
    for entry in manifest:
        assert release.locate(tmp_path / "raw", entry.file) is not None


def test_corrupted_mirror_file_is_named(tmp_path, release_folder, manifest):
    mirror = tmp_path / "mirror"
    shutil.copytree(release_folder, mirror)
    target = release.locate(mirror, "datasets/dataset-specific-tongan.json")
    content = bytearray(gzip.decompress(target.read_bytes()) if target.suffix == ".gz" else target.read_bytes())
    content[100] ^= 1
    target.write_bytes(gzip.compress(bytes(content)) if target.suffix == ".gz" else bytes(content))
    with pytest.raises(InputError) as info:
        release.fetch(tmp_path / "raw", mirror=mirror, manifest=manifest)
    assert str(target) in str(info.value) and "checksum mismatch" in str(info.value)
    assert release.locate(tmp_path / "raw", "datasets/dataset-specific-tongan.json") is None


def test_missing_file_is_named(tmp_path, release_folder, manifest):
    folder = tmp_path / "copy"
    shutil.copytree(release_folder, folder)
    release.locate(folder, "categories-metadata.csv").unlink()
    with pytest.raises(InputError) as info:
        release.verify(folder, manifest)
    assert "categories-metadata.csv: missing" in str(info.value)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


class _Upstream:
    """Serves files laid out as COMMIT/PATH on 127.0.0.1, like the upstream raw-file host."""

    def __init__(self, root: Path):
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _upstream_tree(root: Path, release_folder: Path, manifest) -> None:
    for entry in manifest:
        if not entry.upstream_path:
            continue
        target = root / entry.upstream_commit / entry.upstream_path
        target.parent.mkdir(parents=True, exist_ok=True)
        with release.open_uncompressed(release.locate(release_folder, entry.file)) as src:
            target.write_bytes(src.read())


def test_download_from_upstream(tmp_path, release_folder, manifest):
    _upstream_tree(tmp_path / "upstream", release_folder, manifest)
    with _Upstream(tmp_path / "upstream") as base:
        message = release.fetch(tmp_path / "raw", mirror=None, upstream_base=base, manifest=manifest)
    assert base in message
    # downloads arrive uncompressed; languages.csv is not upstream and comes from the project's copy
    assert (tmp_path / "raw" / "datasets" / "dataset-specific-tongan.json").is_file()
    assert (tmp_path / "raw" / "languages.csv").read_bytes() == paths.LANGUAGES_CSV.read_bytes()
    release.verify(tmp_path / "raw", manifest)


def test_download_of_a_wrong_file_is_refused(tmp_path, release_folder, manifest):
    _upstream_tree(tmp_path / "upstream", release_folder, manifest)
    wrong = tmp_path / "upstream" / manifest[0].upstream_commit / manifest[0].upstream_path
    wrong.write_text("Category\nnot the release\n", encoding="utf-8")
    with _Upstream(tmp_path / "upstream") as base, pytest.raises(InputError) as info:
        release.fetch(tmp_path / "raw", mirror=None, upstream_base=base, manifest=manifest)
    assert "categories-metadata.csv" in str(info.value) and "checksum mismatch" in str(info.value)
    assert not (tmp_path / "raw" / "categories-metadata.csv").exists()


def test_download_failure_names_the_address(tmp_path, manifest):
    with _Upstream(tmp_path) as base, pytest.raises(InputError) as info:
        release.fetch(tmp_path / "raw", mirror=None, upstream_base=base, manifest=manifest[:1])
    assert f"download from {base}/" in str(info.value) and "404" in str(info.value)
