"""Hostile faults, Make arguments and races (issue 17), the other half of the corpus of
test_bad_input_corpus.py: an import killed with SIGKILL, a read-only file system, a full disk (a small
tmpfs), an unreadable file (the command run as another user), names Make cannot carry or that hold
shell syntax, an import waiting while the database is rebuilt, two imports at once, and a report
whose database changes while its notebook runs.

Each case asserts what test_bad_input_corpus.py does: the exit status, the message naming the place, no
traceback, the database byte-identical with nothing left beside it. Where the machine does not permit
a fault (mounting a tmpfs needs root), the test is skipped with the reason.
"""

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from tiny_release import agnostic, write_release

from analysis import cli, store
from analysis.core import files, paths
from analysis.pipeline import imports
from analysis.pipeline.build import build
from analysis.reporting import provenance, run

CLAUDE = "german:0:language.german:claude opus"
ANSWERS = "question,language,model,answer\n"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows(db: Path, sql: str) -> list[tuple]:
    with store.connect(db) as con:
        return con.execute(sql).fetchall()


def beside(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if p.name not in (db.name, db.name + ".lock"))


def assert_refused(status: int, out: str, err: str, *fragments: str, expected: int = 2) -> None:
    text = out + err
    assert "Traceback" not in text, text
    assert status == expected, f"exit status {status}, expected {expected}:\n{text}"
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in:\n{text}"


def cli_run(argv, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    status = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def db(tmp_path, tiny_database) -> Path:
    (tmp_path / "db").mkdir()
    path = tmp_path / "db" / "calmqa.duckdb"
    shutil.copyfile(tiny_database, path)
    return path


# ------------------------------------------------------------------------------------- a killed import


def many_answers(path: Path, n: int) -> Path:
    with open(path, "w", encoding="utf-8") as out:
        out.write(ANSWERS)
        for i in range(n):
            out.write(f"german:{i % 2},German,bulk-{i},Eine Antwort mit einigen Wörtern: Nummer {i}.\n")
    return path


@pytest.mark.slow
def test_a_killed_import_leaves_the_database_and_the_next_write_removes_its_temporary(db, tmp_path, capsys):
    before = digest(db)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "analysis",
            "import-answers",
            str(many_answers(tmp_path / "answers.csv", 2_000)),
            "--db",
            str(db),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not list(db.parent.glob(".calmqa.duckdb.tmp-*")) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert process.poll() is None, "the import ended before it wrote its temporary database"
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert digest(db) == before
    left = beside(db)
    assert left and all(name.startswith(".calmqa.duckdb.tmp-") for name in left), left
    # the next import (here one that is refused) removes what the killed one left, under the lock
    status, out, err = cli_run(["import-metrics", tmp_path / "nothing.csv", "--db", db], capsys)
    assert_refused(status, out, err, "nothing.csv", "no such file")
    assert beside(db) == [] and digest(db) == before


def test_a_temporary_of_a_process_that_is_gone_is_removed_by_the_next_write_of_its_target(tmp_path):
    target = tmp_path / "model.npz"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    ).stdout.strip()
    stale = tmp_path / f".model.npz.tmp-{dead}.npz"
    stale.write_bytes(b"half a model")
    running = files.temporary_name(target)  # this process's own: a write under way
    with files.atomic_write(target) as tmp:
        tmp.write_bytes(b"a model")
        assert tmp == running and not stale.exists()
    assert target.read_bytes() == b"a model" and sorted(p.name for p in tmp_path.iterdir()) == ["model.npz"]
    # a folder a killed run was filling (a notebook's figures), and one a running process fills
    stale_folder, live_folder = tmp_path / f".figures.tmp-{dead}", tmp_path / f".figures.tmp-{os.getpid()}"
    for folder in (stale_folder, live_folder):
        folder.mkdir()
        (folder / "a.png").write_bytes(b"png")
    assert files.remove_stale(tmp_path / "figures") == [stale_folder]
    assert live_folder.is_dir() and not stale_folder.exists()


# ------------------------------------------------------------------- a read-only and a full file system


@contextlib.contextmanager
def tmpfs(size: str):
    """A tmpfs of `size` mounted on a fresh folder; the test is skipped where mounting is not permitted."""
    folder = Path(tempfile.mkdtemp(prefix="calmqa-tmpfs-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        folder.rmdir()
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
        folder.rmdir()


def test_an_import_into_a_read_only_file_system(db, tmp_path, capsys):
    answers = tmp_path / "answers.csv"
    answers.write_text(ANSWERS + "german:0,German,my-model,Antwort.\n", encoding="utf-8")
    with tmpfs("64m") as mount:
        target = mount / "calmqa.duckdb"
        shutil.copyfile(db, target)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        before = digest(target)
        status, out, err = cli_run(["import-answers", answers, "--db", target], capsys)
        assert_refused(status, out, err, str(mount), "the file system is read-only")
        assert digest(target) == before and beside(target) == []


@pytest.mark.slow
def test_an_import_and_a_build_on_a_full_disk(db, tmp_path, capsys):
    answers = tmp_path / "answers.csv"
    answers.write_text(ANSWERS + "german:0,German,my-model,Antwort.\n", encoding="utf-8")
    size = db.stat().st_size
    with tmpfs(f"{size + 2 * 1024 * 1024}") as mount:
        target = mount / "calmqa.duckdb"
        shutil.copyfile(db, target)
        before = digest(target)
        status, out, err = cli_run(["import-answers", answers, "--db", target], capsys)
        assert_refused(status, out, err, "calmqa.duckdb", "the disk is full")
        assert digest(target) == before and beside(target) == []
        source = write_release(tmp_path / "release", gzip_files=False)
        status, out, err = cli_run(["build-db", "--source", source, "--db", target, "--no-verify"], capsys)
        assert_refused(status, out, err, "calmqa.duckdb", "could not be written")
        assert digest(target) == before and beside(target) == []


@pytest.mark.slow
def test_an_unreadable_file_and_an_unwritable_folder(db, tmp_path):
    """Run as another user (root reads and writes everything): the reason, not a PermissionError."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to run the command as another user")
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m", "analysis"]
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    open_to_all, closed = Path(tempfile.mkdtemp(prefix="calmqa-perm-")), Path(tempfile.mkdtemp(prefix="calmqa-perm-"))
    try:
        open_to_all.chmod(0o777)
        closed.chmod(0o755)  # root's: another user may read it, not write in it
        for folder, mode in ((open_to_all, 0o666), (closed, 0o644)):
            shutil.copyfile(db, folder / "calmqa.duckdb")
            (folder / "calmqa.duckdb").chmod(mode)
        secret = open_to_all / "answers.csv"
        secret.write_text(ANSWERS + "german:0,German,my-model,Antwort.\n", encoding="utf-8")
        secret.chmod(0o000)
        readable = open_to_all / "readable.csv"
        readable.write_text(ANSWERS + "german:0,German,my-model,Antwort.\n", encoding="utf-8")
        readable.chmod(0o644)
        before = digest(db)
        for argv, fragments in (
            (["import-answers", secret, open_to_all / "calmqa.duckdb"], ("answers.csv", "permission denied")),
            (["import-answers", readable, closed / "calmqa.duckdb"], (str(closed), "permission denied")),
        ):
            done = subprocess.run(
                as_nobody + [str(argv[0]), str(argv[1]), "--db", str(argv[2])],
                capture_output=True,
                text=True,
                env=environment,
                cwd=paths.ROOT,
            )
            assert_refused(done.returncode, done.stdout, done.stderr, *fragments)
            assert digest(argv[2]) == before
    finally:
        shutil.rmtree(open_to_all)
        shutil.rmtree(closed)


# ------------------------------------------------------------------------------ names Make cannot carry


def make(*arguments: str, cwd: Path = paths.ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "--no-print-directory", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "MAKEFLAGS": ""},
    )


@pytest.mark.parametrize(
    "variable, value, reason",
    [
        ("DB", "data/my db.duckdb", "Make splits names at spaces"),
        ("DB", "data/a:b.duckdb", "cannot carry the character(s) :"),
        ("DB", "data/x`touch${IFS}INJECTED`.duckdb", "cannot carry the character(s) $ `"),
        ("DB", "data/$(shell touch INJECTED).duckdb", "DB='data/$(shell touch INJECTED).duckdb'"),
        ("SOURCE", "/tmp/x;touch${IFS}INJECTED", "cannot carry the character(s) $ ;"),
        ("SOURCE", "/tmp/x#y", "cannot carry the character(s) #"),
        ("VERIFY", "$(shell touch INJECTED)", "expected yes or no"),
        ("OUT", "my figures/", "Make splits names at spaces"),
        ("OUT", "x;touch${IFS}INJECTED/", "cannot carry the character(s) $ ;"),
    ],
)
def test_make_refuses_a_name_it_cannot_carry_and_says_why(variable, value, reason, tmp_path):
    done = make("-n", "db", f"{variable}={value}")
    assert done.returncode == 2 and reason in done.stderr, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert not (paths.ROOT / "INJECTED").exists() and not Path("INJECTED").exists()


@pytest.mark.slow
def test_make_carries_any_file_name_to_an_import_quoted(db, tmp_path):
    """FILE and VERIFICATION reach the command single-quoted: backticks, `$(...)`, spaces and colons are
    part of the name, nothing runs."""
    injected = tmp_path / "INJECTED"
    hostile = tmp_path / f"m`touch {injected}`$(shell touch {injected}) 'v2': x.csv"
    done = make("import-metrics", f"FILE={hostile}", f"DB={db}")
    assert done.returncode == 2 and "no such file" in done.stderr and str(hostile) in done.stderr, done.stderr
    assert not injected.exists()
    spaced = tmp_path / "my metrics: v2.csv"
    spaced.write_text(f"answer,relevant\n{CLAUDE},yes\n", encoding="utf-8")
    done = make("import-metrics", f"FILE={spaced}", f"DB={db}")
    assert done.returncode == 0, done.stderr
    assert rows(db, "SELECT a.name, m.relevant, m.source FROM answer_metrics m JOIN answers a USING (answer_id)") == [
        (CLAUDE, True, "my metrics: v2.csv")
    ]
    missing = make("import-questions")
    assert missing.returncode == 2 and "FILE= names the file to import" in missing.stderr


# --------------------------------------------------------------------------------------------- races


@pytest.mark.slow
def test_an_import_waiting_for_a_rebuild_resolves_its_ids_in_the_rebuilt_database(db, tmp_path, capsys):
    """The import validates and resolves names under the lock that writes: a rebuild that holds the lock
    and renumbers the questions (a language added before German) comes first, and the answer lands on
    its own question."""
    other = write_release(tmp_path / "other", gzip_files=False)
    (other / "datasets" / "dataset-agnostic-afar.json").write_text(json.dumps(agnostic("Afar")), encoding="utf-8")
    rebuilt = tmp_path / "rebuilt.duckdb"
    build(other, rebuilt, verify=False, progress=False)
    german_0 = "SELECT question_id FROM questions WHERE name = 'german:0' AND language = 'German'"
    assert rows(rebuilt, german_0) != rows(db, german_0)
    answers = tmp_path / "answers.csv"
    answers.write_text(ANSWERS + "german:0,German,my-model,Eine Antwort.\n", encoding="utf-8")
    outcome = {}
    with files.lock(db):  # as a build holds it
        worker = threading.Thread(
            target=lambda: outcome.setdefault("summary", imports.import_file("answers", answers, db))
        )
        worker.start()
        time.sleep(0.5)
        assert worker.is_alive() and "summary" not in outcome  # waiting for the lock
        os.replace(rebuilt, db)  # the build's result takes the database's place
    worker.join(timeout=60)
    assert outcome["summary"].added == 1
    assert rows(
        db, "SELECT q.name, q.language FROM answers a JOIN questions q USING (question_id) WHERE a.model = 'my-model'"
    ) == [("german:0", "German")]
    assert rows(db, "SELECT count(*) FROM questions WHERE language = 'Afar'") == [(1,)]


def test_two_imports_at_once_are_both_kept(db, tmp_path):
    files_ = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.csv"
        path.write_text(ANSWERS + f"german:0,German,model-{name},Antwort {name}.\n", encoding="utf-8")
        files_.append(path)
    results = {}
    workers = [
        threading.Thread(target=lambda p=p: results.setdefault(p.name, imports.import_file("answers", p, db)))
        for p in files_
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert sorted(r.added for r in results.values()) == [1, 1]
    assert rows(db, "SELECT model FROM answers WHERE model LIKE 'model-%' ORDER BY 1") == [("model-a",), ("model-b",)]
    assert rows(db, "SELECT position, file FROM applied_imports ORDER BY 1") in (
        [(1, "a.csv"), (2, "b.csv")],
        [(1, "b.csv"), (2, "a.csv")],
    )


READING_NOTEBOOK = {
    "cells": [
        {
            "id": "parameters",
            "cell_type": "code",
            "metadata": {"tags": ["parameters"]},
            "execution_count": None,
            "outputs": [],
            "source": "db_path = ''\noutput_dir = ''\nreplacement = ''",
        },
        {
            "id": "reads",
            "cell_type": "code",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": "import os\nfrom analysis import store\ncon = store.connect(db_path)\n"
            "n = con.execute('SELECT count(*) FROM answers').fetchall()[0][0]\ncon.close()\n"
            "os.replace(replacement, db_path)  # a rebuild lands while the notebook runs\nprint(n)",
        },
        {"id": "title", "cell_type": "markdown", "metadata": {}, "source": "# Reads the database"},
    ],
    "metadata": {"kernelspec": {"name": paths.KERNEL_NAME, "display_name": "Python", "language": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@pytest.mark.slow
def test_a_report_records_the_database_it_read_and_make_sees_it_stale(db, tmp_path):
    """The database is replaced while the notebook runs: the report carries the sha256 of the state it
    read, not of the new one, and is dated to that state, so that Make builds it again."""
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    (notebooks / "90_reads.ipynb").write_text(json.dumps(READING_NOTEBOOK), encoding="utf-8")
    replacement = tmp_path / "replacement.duckdb"
    shutil.copyfile(db, replacement)
    with store.writing(replacement) as writing, writing.modifying() as con:
        con.execute("DELETE FROM answer_metrics")  # another state of the database: other bytes
        con.execute("CREATE TABLE marker AS SELECT 1 AS x")
    read_state = digest(db)
    assert digest(replacement) != read_state
    report = run.run_notebook(
        "90_reads",
        db_path=db,
        figures_root=tmp_path / "figures",
        reports_root=tmp_path / "reports",
        build_root=tmp_path / "build",
        notebooks_root=notebooks,
        parameters={"replacement": str(replacement)},
    )
    record = provenance.read(report)
    assert record["database_sha256"] == read_state != digest(db)
    assert report.stat().st_mtime_ns < db.stat().st_mtime_ns  # Make: the database is newer, rebuild
    # a run during which the database stays as it is gives a report newer than it
    shutil.copyfile(db, replacement)
    report = run.run_notebook(
        "90_reads",
        db_path=db,
        figures_root=tmp_path / "figures",
        reports_root=tmp_path / "reports",
        build_root=tmp_path / "build",
        notebooks_root=notebooks,
        parameters={"replacement": str(replacement)},
    )
    assert provenance.read(report)["database_sha256"] == digest(db)
    assert report.stat().st_mtime_ns > db.stat().st_mtime_ns
