"""The third hostile round (issue 27): one generated case per input of the ten classes of defects it
found, run through the command line as a user runs it (`python -m analysis ...`, here `cli.main`
in-process; Make's own arguments through `make`).

Every case asserts the exit status, the message (the place and the reason), that no traceback reaches
stdout or stderr, and that the database is byte-identical (the file a link names, for a link) unless
the case is one that must succeed; then what the class needs besides (a link still a link, the
committed changes of a write-ahead log kept, the manifest agreeing with the database...). The classes:

1. user text is inert in Markdown and HTML;  2. a stale write-ahead log;  3. the kept imports and the
database change together;  4. `DB=` a symbolic link;  5. `x.duckdb` and `x.db` keep their imports
apart;  6. many models (tests at the end: `make figures` with 300 imported models);  7. special files;
8. identity rules;  9. surprises (read-only files, imports that change nothing, the paper's numbers,
size limits, Make's arguments, paths of notebooks, deep JSON, another schema, interruptions);
10. validation linear in the input (a test at the end).
"""

import concurrent.futures
import contextlib
import hashlib
import html
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl
import pytest
from tiny_release import write_release

from analysis import cli, store
from analysis.analyses import answer_verdicts, dimensions, surface
from analysis.core import paths
from analysis.core.errors import Problems
from analysis.core.text import inert
from analysis.io import bench, records
from analysis.pipeline import imports
from analysis.pipeline.build import build
from analysis.reporting import html as report_html
from analysis.reporting import run

CLAUDE = "german:0:language.german:claude opus"
ANSWERS_CSV = "question,language,model,answer,display_name\n"
RELEASE_QUESTIONS = (("german:0", "German"), ("german:1", "German"), ("non_cultural:0", "German"))


# ------------------------------------------------------------------------------------------ helpers


@dataclass
class Run:
    status: int
    out: str
    err: str


def run_cli(argv: list, capsys) -> Run:
    capsys.readouterr()
    status = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return Run(status, captured.out, captured.err)


def digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def rows(db: Path, sql: str) -> list[tuple]:
    with store.connect(db) as con:
        return con.execute(sql).fetchall()


def jsonl(*lines: dict) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


@dataclass
class Work:
    """A case's folder with its own copy of the tiny database (`db`), the file the case watches
    (`watched`: the database, or the file a link names) and what the case keeps for its checks."""

    root: Path
    db: Path
    tiny: Path
    watched: Path | None = None
    kept: dict = field(default_factory=dict)

    def file(self, name: str, content: str | bytes) -> Path:
        path = self.root / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def database(self, name: str) -> Path:
        """Another copy of the tiny database, in the case's database folder."""
        path = self.db.parent / name
        shutil.copyfile(self.tiny, path)
        return path

    @property
    def release(self) -> Path:
        folder = self.root / "release"
        if not folder.exists():
            write_release(folder, gzip_files=False)
        return folder

    def beside(self) -> list[str]:
        """What is beside the database besides itself and its lock."""
        target = self.watched or self.db
        return sorted(p.name for p in target.parent.iterdir() if p.name not in (target.name, target.name + ".lock"))


@dataclass
class Case:
    """`prepare(work)` writes the input and returns the command's arguments (or runs it and returns a
    `Run`); the message holds every fragment of `expect`; `unchanged` says the watched file must stay
    byte-identical; `check(work, run)` asserts what the class needs besides."""

    kind: int
    prepare: Callable[[Work], list | Run]
    expect: tuple[str, ...]
    status: int = 2
    unchanged: bool = True
    check: Callable[[Work, Run], None] | None = None


CASES: dict[str, Case] = {}


def case(
    kind: int,
    name: str,
    prepare,
    *expect: str,
    status: int = 2,
    unchanged: bool | None = None,
    check=None,
):
    key = f"{kind}: {name}"
    assert key not in CASES, key
    CASES[key] = Case(kind, prepare, expect, status, status != 0 if unchanged is None else unchanged, check)


def import_answers(content: str, name: str = "answers.csv", kind: str = "answers"):
    def prepare(work: Work):
        return [f"import-{kind}", work.file(name, content), "--db", work.db]

    return prepare


# -------------------------------------------------------------- 1. user text inert in Markdown and HTML

# Each display name would be markup if it reached Markdown as it is: a link, a remote image (which a
# report would load), an autolink, a tag, emphasis, a heading, code, an e-mail link.
HOSTILE_NAMES = {
    "a Markdown link": "[x](https://example.org) model",
    "a remote image": "![p](http://127.0.0.1:9/p.png) model",
    "a link and an image, as found": "[x](https://example.org) ![p](http://127.0.0.1:9/p.png)",
    "a bare URL": "https://example.org/model",
    "a www autolink": "www.example.org model",
    "an angle-bracket autolink": "<https://example.org>",
    "an HTML tag": "<b>bold</b> <img src=x>",
    "emphasis and strong": "**strong** and _em_ model",
    "a heading": "# Heading model",
    "a code span": "`code` model",
    "an e-mail address": "me@example.org model",
    "a reference-style link": "[x][1] [1]: https://example.org",
}


def english_answers(name: str) -> str:
    """A model that answers every German question in English, with the display name `name`: the summary
    of answers in English (report 09) names it as the model that answers in English most often."""
    text = "This answer is written in English, although the question was asked in German, as this model does."
    return jsonl(
        *(
            {"question": q, "language": lang, "model": "hostile-model", "answer": text, "display_name": name}
            for q, lang in RELEASE_QUESTIONS
        )
    )


def rendered_summary(work: Work) -> str:
    with store.connect(work.db) as con:
        summary = answer_verdicts.english_summary(answer_verdicts.english_answer_cells(con))
    return report_html.markdown_to_html(summary)


for label, hostile_name in HOSTILE_NAMES.items():

    def inert_in_the_summary(work: Work, result: Run, name=hostile_name) -> None:
        page = rendered_summary(work)
        # shown as the characters it is (escaped for HTML), and as nothing else
        assert html.escape(name, quote=False) in page, page
        assert "<a " not in page and "<img" not in page and "<strong>strong" not in page and "<h1" not in page
        assert "<code>" not in page and "<em>em" not in page, page

    case(
        1,
        f"a display name with {label}",
        import_answers(english_answers(hostile_name), "answers.jsonl"),
        "3 answers added",
        status=0,
        check=inert_in_the_summary,
    )


def test_inert_text_is_the_characters_it_is_in_markdown_and_in_html():
    for name in HOSTILE_NAMES.values():
        page = report_html.markdown_to_html(f"Model {inert(name)} is best.")
        assert page == f"<p>Model {html.escape(name, quote=False)} is best.</p>\n", page
        assert inert(name, "html") == html.escape(name)
    assert inert("two\nlines") == "two lines"  # inside a sentence: a line break would end a paragraph
    with pytest.raises(ValueError, match="markup is 'rtf'"):
        inert("x", "rtf")


# ---------------------------------------------------------------------------- 2. a stale write-ahead log


def leave_a_write_ahead_log(db: Path, sql: str) -> None:
    """A writer that commits `sql` and exits without a checkpoint: its changes are in `<db>.wal` only."""
    code = (
        "import duckdb, os, sys\n"
        "con = duckdb.connect(sys.argv[1])\n"
        "con.execute(\"SET wal_autocheckpoint = '1GB'\")\n"
        f"con.execute({sql!r})\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(db)], check=True)
    assert store.write_ahead_log(db).is_file()


RENAME_CLAUDE = "UPDATE models SET display_name = 'Claude (committed in the log)' WHERE model = 'claude-3-opus'"
NEW_MODEL_ANSWERS = ANSWERS_CSV + "german:0,German,my-model,Eine Antwort.,My Model\n"


def log_then(argv: Callable[[Work], list]):
    def prepare(work: Work):
        leave_a_write_ahead_log(work.db, RENAME_CLAUDE)
        return argv(work)

    return prepare


def the_logged_change_is_kept(work: Work, result: Run) -> None:
    assert not store.write_ahead_log(work.db).exists(), "the log was left beside the new database"
    assert rows(work.db, "SELECT display_name FROM models WHERE model = 'claude-3-opus'") == [
        ("Claude (committed in the log)",)
    ]


case(
    2,
    "an import keeps what a writer left in the log",
    log_then(lambda w: ["import-answers", w.file("a.csv", NEW_MODEL_ANSWERS), "--db", w.db]),
    "1 answers added",
    status=0,
    check=the_logged_change_is_kept,
)
case(
    2,
    "an import that changes nothing keeps what a writer left in the log",
    log_then(lambda w: ["import-answers", w.file("a.csv", ANSWERS_CSV), "--db", w.db]),
    "changes nothing",
    status=0,
    unchanged=False,  # the log is checkpointed into the file: the same content, other bytes
    check=the_logged_change_is_kept,
)


def log_left_and_database_unchanged(work: Work, result: Run) -> None:
    assert store.write_ahead_log(work.db).is_file(), "a refused import removed the log"


case(
    2,
    "a refused import leaves the database and its log as they were",
    log_then(lambda w: ["import-answers", w.file("a.csv", ANSWERS_CSV + "german:99,German,m,x,\n"), "--db", w.db]),
    "no question 'german:99'",
    check=log_left_and_database_unchanged,
)


def a_build_with_a_log(work: Work):
    leave_a_write_ahead_log(work.db, RENAME_CLAUDE)
    return ["build-db", "--source", work.release, "--db", work.db, "--no-verify"]


def the_new_database_opens(work: Work, result: Run) -> None:
    assert not store.write_ahead_log(work.db).exists(), "the old log was left beside the new database"
    assert rows(work.db, "SELECT display_name FROM models WHERE model = 'claude-3-opus'") == [("Claude 3 Opus",)]


case(
    2,
    "a build replaces the database and its log",
    a_build_with_a_log,
    "built",
    status=0,
    check=the_new_database_opens,
)


def log_of_an_older_file(work: Work):
    """The log of a database that was replaced since (what an earlier version of the suite left)."""
    older = work.database("older.duckdb")
    leave_a_write_ahead_log(older, RENAME_CLAUDE)
    with duckdb.connect(str(work.db)) as con:
        con.execute("CHECKPOINT")
    shutil.copyfile(store.write_ahead_log(older), store.write_ahead_log(work.db))
    older.unlink()
    store.write_ahead_log(older).unlink()
    return ["import-answers", work.file("a.csv", NEW_MODEL_ANSWERS), "--db", work.db]


def mismatched_log(work: Work):
    """The database replaced after the log was written (a copy of the file without its log)."""
    leave_a_write_ahead_log(work.db, RENAME_CLAUDE)
    log = store.write_ahead_log(work.db).read_bytes()
    shutil.copyfile(work.tiny, work.db)
    with duckdb.connect(str(work.db)) as con:
        con.execute("CREATE TABLE scratch (x INTEGER)")
        con.execute("DROP TABLE scratch")
    store.write_ahead_log(work.db).write_bytes(log)
    return ["import-answers", work.file("a.csv", NEW_MODEL_ANSWERS), "--db", work.db]


case(
    2,
    "a log written for another version of the file",
    mismatched_log,
    "calmqa.duckdb",
    check=log_left_and_database_unchanged,
)
case(
    2,
    "a build over a log written for another version of the file",
    lambda w: (mismatched_log(w), ["build-db", "--source", w.release, "--db", w.db, "--no-verify"])[1],
    "calmqa.duckdb",
    check=log_left_and_database_unchanged,
)


@contextlib.contextmanager
def held_for_writing(db: Path):
    """Another process with the database open for writing."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); print('open', flush=True); time.sleep(120)",
            str(db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        yield
    finally:
        holder.kill()
        holder.wait()


def import_while_held(work: Work) -> Run:
    with held_for_writing(work.db):
        return run_cli(["import-answers", work.file("a.csv", NEW_MODEL_ANSWERS), "--db", work.db], work.kept["capsys"])


def build_while_held(work: Work) -> Run:
    leave_a_write_ahead_log(work.db, RENAME_CLAUDE)
    with held_for_writing(work.db):
        argv = ["build-db", "--source", work.release, "--db", work.db, "--no-verify"]
        return run_cli(argv, work.kept["capsys"])


case(2, "an import while another program has the database open for writing", import_while_held, "lock")
case(
    2,
    "a build while another program holds the database and its log",
    build_while_held,
    "is open in another program",
    check=log_left_and_database_unchanged,
)


def test_a_copy_of_a_database_takes_the_changes_of_its_log(tmp_path, tiny_database):
    source = tmp_path / "a" / "calmqa.duckdb"
    source.parent.mkdir()
    shutil.copyfile(tiny_database, source)
    leave_a_write_ahead_log(source, RENAME_CLAUDE)
    copied = imports.copy_database(source, tmp_path / "b" / "calmqa.duckdb")
    assert not store.write_ahead_log(copied).exists()
    assert rows(copied, "SELECT display_name FROM models WHERE model = 'claude-3-opus'") == [
        ("Claude (committed in the log)",)
    ]


# ------------------------------------------------------------ 3. kept imports and the database together


def interrupted_at(work: Work, where: str):
    """Run an import that is interrupted (as by Ctrl-C, or a kill) `where`: when the database is about to
    be replaced (`replace`), or once it is, before the manifest is written (`manifest`)."""
    capsys, monkeypatch = work.kept["capsys"], work.kept["monkeypatch"]
    real_replace = os.replace

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    if where == "replace":
        monkeypatch.setattr(
            "analysis.core.files.os.replace",
            lambda source, target: stop() if Path(target) == work.db else real_replace(source, target),
        )
    else:
        monkeypatch.setattr(imports, "write_manifest", stop)
    result = run_cli(["import-answers", work.file("a.csv", NEW_MODEL_ANSWERS), "--db", work.db], capsys)
    monkeypatch.undo()
    return result


def kept_imports(db: Path) -> list[str]:
    folder = paths.imports_folder(db)
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def replayed_by_a_build(work: Work) -> int:
    return build(work.release, work.db, verify=False, progress=False)["imports"]


def killed_before_the_database(work: Work, result: Run) -> None:
    # the file was kept, no database records it: a build does not replay it, a retry takes its place
    assert kept_imports(work.db) == ["0001"] and rows(work.db, "SELECT count(*) FROM applied_imports") == [(0,)]
    assert replayed_by_a_build(work) == 0
    again = imports.import_file("answers", work.root / "in" / "a.csv", work.db)
    assert again.kept == paths.imports_folder(work.db) / "0001"
    assert kept_imports(work.db) == ["0001", "manifest.csv"]
    assert [k.position for k in imports.imports.read_manifest(paths.imports_folder(work.db), Problems())] == [1]


def killed_before_the_manifest(work: Work, result: Run) -> None:
    # the database holds the import; a build replays it and writes the manifest; the next import is the 2nd
    assert rows(work.db, "SELECT position FROM applied_imports") == [(1,)]
    assert not (paths.imports_folder(work.db) / "manifest.csv").exists()
    assert replayed_by_a_build(work) == 1
    assert [k.position for k in imports.imports.read_manifest(paths.imports_folder(work.db), Problems())] == [1]
    metrics = work.file("m.csv", "question,language,model,relevant\ngerman:0,German,my-model,yes\n")
    assert imports.import_file("metrics", metrics, work.db).kept == paths.imports_folder(work.db) / "0002"


case(
    3,
    "an import interrupted as the database is replaced",
    lambda w: interrupted_at(w, "replace"),
    "interrupted",
    status=130,
    check=killed_before_the_database,
)
case(
    3,
    "an import interrupted before its manifest is written",
    lambda w: interrupted_at(w, "manifest"),
    "interrupted",
    status=130,
    unchanged=False,  # the database was replaced: the import had succeeded
    check=killed_before_the_manifest,
)


def manifest_ahead_of_the_database(work: Work):
    """What a kill left with an earlier version of the suite: the manifest lists an import the database
    does not hold."""
    folder = paths.imports_folder(work.db)
    (folder / "0001").mkdir(parents=True)
    kept = folder / "0001" / "answers.csv"
    kept.write_text(NEW_MODEL_ANSWERS, encoding="utf-8")
    imports.imports.write_manifest(folder, [imports.KeptImport(folder, 1, "answers", "answers.csv", digest(kept))])
    return ["build-db", "--source", work.release, "--db", work.db, "--no-verify"]


def nothing_replayed(work: Work, result: Run) -> None:
    assert "replayed" not in result.out and rows(work.db, "SELECT count(*) FROM models WHERE model = 'my-model'") == [
        (0,)
    ]
    assert (paths.imports_folder(work.db) / "manifest.csv").read_text(encoding="utf-8").count("\n") == 1


case(
    3,
    "a manifest that lists an import the database does not hold",
    manifest_ahead_of_the_database,
    "built",
    status=0,
    check=nothing_replayed,
)


def manifest_behind_the_database(work: Work):
    imports.import_file("answers", work.file("a.csv", NEW_MODEL_ANSWERS), work.db)
    (paths.imports_folder(work.db) / "manifest.csv").write_text(
        ",".join(imports.imports.MANIFEST_COLUMNS) + "\n", encoding="utf-8"
    )
    return ["import-answers", work.root / "in" / "a.csv", "--db", work.db]


def manifest_written_again(work: Work, result: Run) -> None:
    listed = imports.imports.read_manifest(paths.imports_folder(work.db), Problems())
    assert [k.position for k in listed] == [1]


case(
    3,
    "a manifest behind its database is written again by the next import",
    manifest_behind_the_database,
    "changes nothing",
    status=0,
    check=manifest_written_again,
)


def kept_file_missing(work: Work):
    imports.import_file("answers", work.file("a.csv", NEW_MODEL_ANSWERS), work.db)
    shutil.rmtree(paths.imports_folder(work.db) / "0001")
    return ["build-db", "--source", work.release, "--db", work.db, "--no-verify"]


case(
    3,
    "a build whose database holds an import whose file is gone",
    kept_file_missing,
    "calmqa.duckdb: ",
    "does not keep the imports 1",
)


# ------------------------------------------------------------------------------ 4. DB= a symbolic link


def through_a_link(argv: Callable[[Work, Path], list]):
    def prepare(work: Work):
        real = work.db.parent / "real" / "calmqa.duckdb"
        real.parent.mkdir()
        shutil.move(work.db, real)
        link = work.db.parent / "link.duckdb"
        link.symlink_to(real)
        work.watched = real
        work.kept["link"] = link
        return argv(work, link)

    return prepare


def link_kept_and_target_written(work: Work, result: Run) -> None:
    link = work.kept["link"]
    assert link.is_symlink() and link.resolve() == work.watched
    assert rows(link, "SELECT count(*) FROM models WHERE model = 'my-model'") == [(1,)]
    assert kept_imports(work.watched) == ["0001", "manifest.csv"]  # beside the file, not the link
    assert not paths.imports_folder(link).exists()


case(
    4,
    "an import through a link writes the file it names",
    through_a_link(lambda w, link: ["import-answers", w.file("a.csv", NEW_MODEL_ANSWERS), "--db", link]),
    "1 answers added",
    str(Path("real") / "calmqa.duckdb-imports"),
    status=0,
    check=link_kept_and_target_written,
)


def link_kept(work: Work, result: Run) -> None:
    assert work.kept["link"].is_symlink() and work.kept["link"].resolve() == work.watched


case(
    4,
    "a build through a link replaces the file it names",
    through_a_link(lambda w, link: ["build-db", "--source", w.release, "--db", link, "--no-verify"]),
    "built",
    status=0,
    check=link_kept,
)
case(
    4,
    "a refused import through a link",
    through_a_link(
        lambda w, link: ["import-answers", w.file("a.csv", ANSWERS_CSV + "german:99,German,m,x,\n"), "--db", link]
    ),
    "no question 'german:99'",
    check=link_kept,
)


def link_to(target: Callable[[Work], Path], command: str = "import"):
    def prepare(work: Work):
        link = work.db.parent / "link.duckdb"
        link.symlink_to(target(work))
        if command == "build":
            return ["build-db", "--source", work.release, "--db", link, "--no-verify"]
        return ["import-answers", work.file("a.csv", NEW_MODEL_ANSWERS), "--db", link]

    return prepare


def a_folder(work: Work) -> Path:
    folder = work.db.parent / "folder"
    folder.mkdir()
    return folder


def a_loop(work: Work) -> Path:
    (work.db.parent / "loop-b").symlink_to(work.db.parent / "link.duckdb")
    return work.db.parent / "loop-b"


case(4, "a link to a folder", link_to(a_folder), "link.duckdb (-> ", "is a folder")
case(4, "a build through a link to a folder", link_to(a_folder, "build"), "is a folder")
case(4, "a loop of links", link_to(a_loop), "link.duckdb", "cannot be used as a database")
case(4, "a build through a loop of links", link_to(a_loop, "build"), "cannot be used as a database")


def read_only_target(work: Work) -> Path:
    work.db.chmod(0o444)
    return work.db


case(4, "a link to a read-only database", link_to(read_only_target), "is read-only")


# ---------------------------------------------------------------- 5. x.duckdb and x.db keep their imports


def two_databases(work: Work):
    other = work.database("calmqa.db")
    imports.import_file("answers", work.file("a.csv", NEW_MODEL_ANSWERS), other)
    work.kept["other"] = other
    return ["build-db", "--source", work.release, "--db", work.db, "--no-verify"]


def none_of_the_other(work: Work, result: Run) -> None:
    assert "replayed" not in result.out
    assert rows(work.db, "SELECT count(*) FROM models WHERE model = 'my-model'") == [(0,)]
    assert (work.db.parent / "calmqa.db-imports" / "0001" / "a.csv").is_file()
    assert not (work.db.parent / "calmqa.duckdb-imports").exists()


case(
    5,
    "rebuilding x.duckdb does not replay the imports of x.db",
    two_databases,
    "built",
    status=0,
    check=none_of_the_other,
)


def rebuild_the_other(work: Work):
    two_databases(work)
    work.watched = work.kept["other"]
    return ["build-db", "--source", work.release, "--db", work.kept["other"], "--no-verify"]


def its_own_replayed(work: Work, result: Run) -> None:
    assert "1 kept import replayed" in result.out
    assert rows(work.kept["other"], "SELECT count(*) FROM models WHERE model = 'my-model'") == [(1,)]


case(
    5,
    "rebuilding x.db replays its own imports",
    rebuild_the_other,
    "built",
    status=0,
    check=its_own_replayed,
)


def imports_into_both(work: Work):
    other = work.database("calmqa.db")
    imports.import_file("answers", work.file("a.csv", NEW_MODEL_ANSWERS), other)
    return ["import-answers", work.file("b.csv", ANSWERS_CSV + "german:1,German,mine,Antwort.,Mine\n"), "--db", work.db]


def numbered_apart(work: Work, result: Run) -> None:
    assert kept_imports(work.db) == ["0001", "manifest.csv"]
    assert (work.db.parent / "calmqa.db-imports" / "0001" / "a.csv").is_file()
    assert (work.db.parent / "calmqa.duckdb-imports" / "0001" / "b.csv").is_file()


case(
    5,
    "imports into x.duckdb and x.db are numbered apart",
    imports_into_both,
    "1 answers added",
    status=0,
    check=numbered_apart,
)


# ---------------------------------------------------------------------------------- 7. special files


def special_database(make: Callable[[Path], None], command: str = "import"):
    def prepare(work: Work):
        target = work.db.parent / "special.duckdb"
        make(target)
        work.watched = None
        work.kept["special"] = target
        if command == "build":
            return ["build-db", "--source", work.release, "--db", target, "--no-verify"]
        if command == "expected-counts":
            return ["expected-counts", "--db", target]
        return ["import-answers", work.file("a.csv", NEW_MODEL_ANSWERS), "--db", target]

    return prepare


def fifo(path: Path) -> None:
    os.mkfifo(path)


def unix_socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.close()


def null_device(path: Path) -> None:
    path.symlink_to("/dev/null")


def still_special(work: Work, result: Run) -> None:
    mode = os.stat(work.kept["special"]).st_mode
    assert stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


for label, make, what in (
    ("a FIFO", fifo, "is a FIFO (named pipe)"),
    ("a socket", unix_socket, "is a socket"),
    ("a character device (/dev/null)", null_device, "is a character device"),
):
    for command in ("import", "build", "expected-counts"):
        case(
            7,
            f"{command} with DB= {label}",
            special_database(make, command),
            "special.duckdb",
            what,
            "not a database file",
            check=still_special,
        )


def fifo_input(name: str, kind: str = "answers"):
    def prepare(work: Work):
        path = work.root / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        return [f"import-{kind}", path, "--db", work.db]

    return prepare


case(
    7, "an answers file that is a FIFO", fifo_input("answers.csv"), "answers.csv", "is a FIFO (named pipe), not a file"
)
case(
    7,
    "a release-format answers file that is a FIFO",
    fifo_input("dataset-specific-german.json"),
    "dataset-specific-german.json",
    "is a FIFO",
)
case(7, "a questions file that is a FIFO", fifo_input("questions.jsonl", "questions"), "questions.jsonl", "is a FIFO")


# ---------------------------------------------------------------------------------- 8. identity rules


def answers_with(model: str = "my-model", display_name: str | None = None, question: str = "german:0") -> str:
    line = {"question": question, "language": "German", "model": model, "answer": "Eine Antwort."}
    if display_name is not None:
        line["display_name"] = display_name
    return jsonl(line)


for label, model, fragment in (
    ("ending in a newline", "my-model\n", "is 'my-model\\n'; a model key is"),
    ("ending in a carriage return", "my-model\r", "a model key is"),
    ("starting with a dash", "-model", "a model key is"),
    ("'human'", "human", "names the human reference answers"),
    ("'human-dot-points'", "human-dot-points", "names the human reference answers"),
    ("of the release, on a release question", "gpt-4o", "is gpt-4o, a model of the release"),
    ("of the release with its display name", "claude-3-opus", "its answers to the release's questions are the paper's"),
):
    case(
        8,
        f"a model key {label}",
        import_answers(answers_with(model), "answers.jsonl"),
        "line 1, field 'model'",
        fragment,
    )

for label, name, fragment in (
    ("with a Cyrillic look-alike letter", "GPT-4\u043e", "mixes Cyrillic and Latin letters"),
    ("with a Cyrillic capital", "\u0421laude 3 Opus", "mixes Cyrillic and Latin letters"),
    ("with a Greek look-alike letter", "Gemm\u03b1 7B", "mixes Greek and Latin letters"),
    ("with a zero-width space", "GPT\u200b-4o", "U+200B (ZERO WIDTH SPACE)"),
    ("with a right-to-left override", "\u202eGPT-4o", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    ("with a zero-width joiner", "Gemma\u200d 7B", "U+200D"),
    ("in full-width letters", "\uff27\uff30\uff34-4o", "is already gpt-4o's"),
    ("with an en dash", "GPT\u20134o", "is already gpt-4o's"),
    ("with a non-breaking space", "Claude\u00a03 Opus", "is already claude-3-opus's"),
    ("of the human answers, in capitals", "HUMAN", "the name figures give the human reference answers"),
    ("of the human answers, in full width", "\uff28uman", "the name figures give the human reference answers"),
    ("of 81 characters", "M" * 81, "is 81 characters long; a display name has at most 80"),
):
    case(
        8,
        f"a display name {label}",
        import_answers(answers_with(display_name=name), "answers.jsonl"),
        "line 1, field 'display_name'",
        fragment,
    )

case(
    8,
    "two new models whose display names differ as NFC and NFD",
    import_answers(
        jsonl(
            {"question": "german:0", "language": "German", "model": "a", "answer": "x", "display_name": "Caf\u00e9"},
            {"question": "german:0", "language": "German", "model": "b", "answer": "y", "display_name": "Cafe\u0301"},
        ),
        "answers.jsonl",
    ),
    "line 2, field 'display_name'",
    "already a's",
)


def release_format(model_name: str, entry_text: str | None = None) -> str:
    entry = {
        "question": {
            "name": "german:0",
            "type": 5,
            "language": "German",
            "source": "x",
            "collector": "x",
            "human_evaluated": False,
            "category": "other",
            "translations": {"German": {"language": "German", "text": "?"}},
        },
        "answers": [
            {
                "name": f"german:0:language.german:{model_name.lower()}",
                "language": "German",
                "translations": {"German": {"language": "German", "text": "Eine neue Antwort."}},
                "prompting_state": {"model_name": model_name},
            }
        ],
    }
    return entry_text or json.dumps({"entries": [entry]})


case(
    8,
    "a release-format file of a release model",
    import_answers(release_format("GPT 4o"), "dataset-specific-german.json"),
    "field 'model'",
    "a model of the release",
)
case(
    8,
    "a release-format file of the human answers only",
    import_answers(release_format("Human"), "dataset-specific-german.json"),
    "holds human answers only (1), which an import never adds",  # issue 38: it exited 0 and said nothing of them
)
case(
    8,
    "a release-format file with a key twice in one object",
    import_answers(
        release_format("New LLM").replace('"type": 5,', '"type": 5, "type": 6,'), "dataset-specific-german.json"
    ),
    "invalid JSON",
    "the key(s) 'type' appear twice in one object",
)


def release_edit(change: Callable[[str], str]):
    def prepare(work: Work):
        path = work.release / "datasets" / "dataset-specific-german.json"
        path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")
        return ["build-db", "--source", work.release, "--db", work.db, "--no-verify"]

    return prepare


case(
    8,
    "a release file with a key twice in one object",
    release_edit(lambda text: text.replace('"type": 5,', '"type": 5, "type": 6,', 1)),
    "dataset-specific-german.json",
    "appear twice in one object",
)
for label, name in (
    ("an Arabic-Indic digit", "german:\u0663"),
    ("a final newline", "german:1\n"),
    ("no number", "german:"),
):
    case(
        8,
        f"a release question named with {label}",
        release_edit(lambda text, name=name: text.replace('"name": "german:1"', f'"name": {json.dumps(name)}', 1)),
        "field 'question.name'",
        "a number of ASCII digits",
    )


# ---------------------------------------------------------------------------------------- 9. surprises


def read_only_database(command: str):
    def prepare(work: Work):
        work.db.chmod(0o444)
        if command == "build":
            return ["build-db", "--source", work.release, "--db", work.db, "--no-verify"]
        return ["import-answers", work.file("a.csv", NEW_MODEL_ANSWERS), "--db", work.db]

    return prepare


def still_read_only(work: Work, result: Run) -> None:
    assert stat.S_IMODE(os.stat(work.db).st_mode) == 0o444


case(9, "an import into a read-only database", read_only_database("import"), "is read-only", check=still_read_only)
case(9, "a build over a read-only database", read_only_database("build"), "is read-only", check=still_read_only)


def unchanged_import(work: Work):
    imports.import_file("answers", work.file("a.csv", NEW_MODEL_ANSWERS), work.db)
    work.kept["stat"] = os.stat(work.db)
    return ["import-answers", work.root / "in" / "a.csv", "--db", work.db]


def same_time_and_no_new_import(work: Work, result: Run) -> None:
    assert os.stat(work.db).st_mtime_ns == work.kept["stat"].st_mtime_ns
    assert kept_imports(work.db) == ["0001", "manifest.csv"]


case(
    9,
    "an import that changes nothing leaves the database's time",
    unchanged_import,
    "changes nothing, so it is not kept",
    status=0,
    unchanged=False,  # (watched from before the first import: the case checks its own)
    check=same_time_and_no_new_import,
)


def auto_question(work: Work):
    with store.connect(work.db) as con:
        work.kept["table13"] = surface.question_identification_accuracy(con)
        work.kept["overview"] = dimensions.model_order(con)
    question = {"language": "German", "question_type": "specific", "question": "Wie heißt der höchste Berg?"}
    return ["import-questions", work.file("q.jsonl", jsonl({**question, "collection": "human"})), "--db", work.db]


def table13_unchanged(work: Work, result: Run) -> None:
    with store.connect(work.db) as con:
        assert surface.question_identification_accuracy(con).equals(work.kept["table13"])
        assert con.execute("SELECT count(*) FROM questions WHERE import_position = 1").fetchall() == [(1,)]


case(
    9,
    "an imported human-collected question does not enter Table 13",
    auto_question,
    "1 questions added",
    status=0,
    check=table13_unchanged,
)
case(
    9,
    "an answer over the text limit",
    import_answers(
        jsonl({"question": "german:0", "language": "German", "model": "m", "answer": "Wort " * 220_000}), "a.jsonl"
    ),
    "line 1, field 'answer'",
    "is 1,100,000 characters long; a text field has at most 1,048,576 characters",
)
case(
    9,
    "a display name over the text limit",
    import_answers(ANSWERS_CSV + "german:0,German,m,x," + "N" * 1_048_577 + "\n"),
    "line 2",
    "longer than 1,048,576 characters",
)
case(
    9,
    "a question over the text limit",
    import_answers(
        jsonl({"language": "German", "question_type": "specific", "question": "?" * 1_048_577}), "q.jsonl", "questions"
    ),
    "field 'question'",
    "a text field has at most 1,048,576 characters",
)


def over_the_file_limit(work: Work):
    work.kept["monkeypatch"].setattr(records, "MAX_FILE_BYTES", 100)
    return ["import-answers", work.file("a.csv", NEW_MODEL_ANSWERS * 4), "--db", work.db]


case(9, "a file over the file limit", over_the_file_limit, "a.csv", "an input file has at most 100 bytes")


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


case(
    9,
    "a JSONL line nested 100,000 deep",
    import_answers(f'{{"question": {nested(100_000)}}}\n', "a.jsonl"),
    "line 1",
    "nested deeper than",
)
case(
    9,
    "a release-format file nested 100,000 deep",
    import_answers(f'{{"entries": {nested(100_000)}}}', "dataset-specific-german.json"),
    "dataset-specific-german.json",
    "nested deeper than",
)
case(
    9,
    "a release file nested 100,000 deep",
    release_edit(lambda text: f'{{"entries": {nested(100_000)}}}'),
    "dataset-specific-german.json",
    "nested deeper than",
)


def another_schema(command: str):
    def prepare(work: Work):
        with duckdb.connect(str(work.db)) as con:
            con.execute("DROP TABLE applied_imports")
        if command == "expected-counts":
            return ["expected-counts", "--db", work.db]
        return ["import-answers", work.file("a.csv", NEW_MODEL_ANSWERS), "--db", work.db]

    return prepare


def foreign_database(work: Work):
    work.db.unlink()
    with duckdb.connect(str(work.db)) as con:
        con.execute("CREATE TABLE notes (x VARCHAR)")
    return ["import-metrics", work.file("m.csv", f"answer,relevant\n{CLAUDE},1\n"), "--db", work.db]


case(9, "an import into a database of another schema", another_schema("import"), "of another schema", "applied_imports")
case(9, "expected-counts of a database of another schema", another_schema("expected-counts"), "of another schema")
case(9, "an import into a DuckDB file that is not the suite's", foreign_database, "of another schema")


def header_only_claims(work: Work):
    folder = work.root / "claims"
    folder.mkdir()
    (folder / "c.csv").write_text(
        "claim_id,paper,item,row,column,printed,decimals,source,match,value_column,expect,reason\n", encoding="utf-8"
    )
    return ["check-paper", "--claims", folder, "--figures", work.root]


case(9, "a claims file with a header and no rows", header_only_claims, "c.csv", "holds no claim")


def outside_folder(name: str):
    def prepare(work: Work):
        outside = work.root / "x"
        outside.mkdir()
        (outside / "keep.txt").write_text("mine", encoding="utf-8")
        return ["run-notebook", name, "--db", work.db, "--out", work.root / "out"]

    return prepare


def outside_untouched(work: Work, result: Run) -> None:
    assert (work.root / "x" / "keep.txt").read_text(encoding="utf-8") == "mine"


for name in ("../x", "../../x", "01_dataset_overview/../../x", "/tmp"):
    case(
        9,
        f"run-notebook {name!r}",
        outside_folder(name),
        f"no notebook {name!r}",
        "expected one of",
        check=outside_untouched,
    )


def interrupted(error: str):
    def prepare(work: Work):
        def stop(*args, **kwargs):
            raise KeyboardInterrupt if error == "KeyboardInterrupt" else duckdb.InterruptException("INTERRUPT Error")

        work.kept["monkeypatch"].setitem(imports.APPLY, "answers", stop)
        return ["import-answers", work.file("a.csv", NEW_MODEL_ANSWERS), "--db", work.db]

    return prepare


def nothing_kept(work: Work, result: Run) -> None:
    assert kept_imports(work.db) == []


for error in ("KeyboardInterrupt", "duckdb.InterruptException"):
    case(
        9,
        f"Ctrl-C while the database is written ({error})",
        interrupted(error),
        "interrupted; nothing was written",
        status=130,
        check=nothing_kept,
    )


def make_run(*arguments: str) -> Callable[[Work], Run]:
    def prepare(work: Work) -> Run:
        done = subprocess.run(
            ["make", "--no-print-directory", *(a.replace("{db}", str(work.db)) for a in arguments)],
            cwd=paths.ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "MAKEFLAGS": ""},
        )
        return Run(done.returncode, done.stdout, done.stderr)

    return prepare


case(9, "make import-metrics FILE=-h", make_run("import-metrics", "FILE=-h", "DB={db}"), "-h", "no such file")
case(
    9,
    "make import-questions FILE=--help",
    make_run("import-questions", "FILE=--help", "DB={db}"),
    "--help",
    "no such file",
)
case(
    9,
    "make import-metrics VERIFICATION=-h",
    make_run("import-metrics", "FILE=claims.jsonl", "VERIFICATION=-h", "DB={db}"),
    "claims.jsonl",
    "no such file",
)


# -------------------------------------------------------------------------------------------- the test


@pytest.mark.slow  # a hundred commands, many building a database: `make test` runs them, the fast tier does not
@pytest.mark.parametrize("name", CASES, ids=list(CASES))
def test_hostile_input(name, tmp_path, tiny_database, capsys, monkeypatch):
    hostile = CASES[name]
    (tmp_path / "db").mkdir()
    db = tmp_path / "db" / "calmqa.duckdb"
    shutil.copyfile(tiny_database, db)
    work = Work(tmp_path, db, tiny_database, kept={"capsys": capsys, "monkeypatch": monkeypatch})
    try:
        prepared = hostile.prepare(work)
        watched = work.watched if work.watched is not None else (None if "special" in work.kept else db)
        before = digest(watched) if watched is not None and watched.is_file() else None
        result = prepared if isinstance(prepared, Run) else run_cli(prepared, capsys)
    finally:
        monkeypatch.undo()
    text = result.out + result.err
    assert "Traceback" not in text, text
    assert result.status == hostile.status, f"exit status {result.status}, expected {hostile.status}:\n{text}"
    if hostile.status == 2 and not isinstance(prepared, Run):
        assert result.err.startswith("error: "), result.err
    for fragment in hostile.expect:
        assert fragment in text, f"{fragment!r} not in:\n{text}"
    if hostile.unchanged and before is not None:
        assert digest(watched) == before, "the database changed"
        assert not [n for n in work.beside() if n.startswith(".")], f"left beside the database: {work.beside()}"
    if hostile.check is not None:
        hostile.check(work, result)


def test_the_corpus_covers_every_class_with_sixty_cases_or_more():
    kinds = {c.kind for c in CASES.values()}
    assert len(CASES) >= 60, len(CASES)
    # 6 (many models) and 10 (linear validation) are measured by the tests below
    assert kinds >= {1, 2, 3, 4, 5, 7, 8, 9}, kinds


# ------------------------------------------------------------------------- 6. many models, every notebook


def _run_notebook(args) -> str | None:
    name, db_path, root = args
    try:
        run.run_notebook(name, db_path=db_path, **run.output_roots(root))
    except Exception as exc:  # noqa: BLE001 - reported by the test
        return f"{type(exc).__name__}: {exc}"
    return None


@pytest.mark.slow
def test_make_figures_with_300_imported_models(database, tmp_path):
    """Every notebook runs with 300 imported models (each answering 40 culturally specific questions);
    the model x language heatmaps draw 20 models and say so, and their CSVs keep all 308."""
    db_path = tmp_path / "calmqa.duckdb"
    shutil.copyfile(database, db_path)
    with store.connect(db_path) as con:
        questions = con.execute(
            "SELECT name, language FROM questions WHERE question_type = 'specific' ORDER BY question_id"
        ).fetchall()
    lines = [
        {
            "question": questions[(i * 37 + m) % len(questions)][0],
            "language": questions[(i * 37 + m) % len(questions)][1],
            "model": f"many-{m:03d}",
            "answer": f"Answer {m}: " + "a few words " * (m % 5 + 1),
        }
        for m in range(300)
        for i in range(40)
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text(jsonl(*lines), encoding="utf-8")
    assert imports.import_file("answers", path, db_path).added == 12_000
    root = tmp_path / "out"
    names = run.notebook_names()
    first = [n for n in names if n != run.REPRODUCTION_NOTEBOOK]
    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        errors = dict(zip(first, pool.map(_run_notebook, [(n, db_path, root) for n in first])))
    errors[run.REPRODUCTION_NOTEBOOK] = _run_notebook((run.REPRODUCTION_NOTEBOOK, db_path, root))
    assert {n: e for n, e in errors.items() if e} == {}
    for figure in ("03_surface_quality/heatmap_pct_correct_language", "09_answer_verdicts/figure16_english_answers"):
        table = pl.read_csv(root / "figures" / f"{figure}.csv")
        assert table["model"].n_unique() == 308, figure
        spec = (root / "figures" / f"{figure}.svg").read_text(encoding="utf-8")
        assert "many-000" in spec and "many-299" not in spec and "288 more models" in spec, figure


# ----------------------------------------------------------------- 10. validation linear in the input


@pytest.mark.slow
def test_100000_new_models_are_validated_in_seconds(tiny_database, tmp_path):
    """The identity checks are one pass over the rows: 100,000 answers of 100,000 new models (a scan of
    every row for each model took minutes)."""
    path = bench.write_new_model_answers(tmp_path / "many.csv", 100_000)
    started = time.perf_counter()
    with store.connect(tiny_database) as con:
        problems = Problems()
        frame = imports.read("answers", path, con, problems)
    seconds = time.perf_counter() - started
    assert not problems.items and frame.height == 100_000 and frame["model"].n_unique() == 100_000
    # 2.4 s on an idle 2-core machine; the quadratic scan took minutes
    assert seconds < 60, f"{seconds:.1f} s"


def test_check_reports_sees_no_request_from_a_hostile_display_name(chromium, tiny_database, tmp_path):
    """A report whose summary names a model called `[x](https://...) ![p](http://...)`, and the index
    that shows the summary, opened as `make check-reports` opens them: no link, no image, no request."""
    import nbformat

    from analysis.reporting import index

    db_path = tmp_path / "calmqa.duckdb"
    shutil.copyfile(tiny_database, db_path)
    name = HOSTILE_NAMES["a link and an image, as found"]
    imports.import_file(
        "answers", Work(tmp_path, db_path, tiny_database).file("a.jsonl", english_answers(name)), db_path
    )
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    probe = nbformat.v4.new_notebook(metadata=nbformat.read(paths.NOTEBOOKS / "09_answer_verdicts.ipynb", 4).metadata)
    probe.cells = [
        nbformat.v4.new_code_cell('db_path = ""\noutput_dir = ""', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            "from analysis import store\n"
            "from analysis.analyses import answer_verdicts\n"
            "from analysis.reporting import notebook\n"
            "notebook.setup()\n"
            "con = store.connect(db_path)\n"
            "notebook.titled('Probe', answer_verdicts.english_summary(answer_verdicts.english_answer_cells(con)))"
        ),
    ]
    nbformat.write(probe, notebooks / "probe.ipynb")
    report = run.run_notebook("probe", db_path=db_path, notebooks_root=notebooks, **run.output_roots(tmp_path / "out"))
    page = index.write_index(tmp_path / "out" / "reports", tmp_path / "out" / "figures")
    for opened in (report, page):
        result = chromium.open(
            opened,
            actions=lambda chrome, session: chrome.evaluate(
                session,
                "({links: document.querySelectorAll('a[href^=\"http\"]').length,"
                " images: document.querySelectorAll('img[src^=\"http\"]').length, text: document.body.innerText})",
            ),
        )
        assert result.requests == [] and result.problems == [], result.problems
        assert result.values["links"] == 0 and result.values["images"] == 0
        assert name in result.values["text"]


@pytest.mark.slow
def test_a_fifo_never_hangs_a_command(tmp_path):
    """A FIFO as DB= or FILE= is refused at once (opening it to read would wait for a writer)."""
    fifo_path = tmp_path / "pipe.duckdb"
    os.mkfifo(fifo_path)
    answers = tmp_path / "answers.csv"
    answers.write_text(NEW_MODEL_ANSWERS, encoding="utf-8")
    done = threading.Event()
    statuses = []

    def call():
        for argv in (
            ["import-answers", answers, "--db", fifo_path],
            ["build-db", "--db", fifo_path],
            ["import-answers", fifo_path, "--db", fifo_path],
        ):
            statuses.append(
                subprocess.run(
                    [sys.executable, "-m", "analysis", *map(str, argv)], capture_output=True, text=True, timeout=60
                ).returncode
            )
        done.set()

    threading.Thread(target=call, daemon=True).start()
    assert done.wait(120), "a command waited on the FIFO"
    assert statuses == [2, 2, 2]
