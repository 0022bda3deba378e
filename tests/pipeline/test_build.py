import hashlib
import json
import shutil
import signal
import subprocess
import sys
import time

import duckdb
import pytest
from tiny_release import write_release

from analysis import cli, schema, store
from analysis.core.errors import InputError
from analysis.io import records
from analysis.pipeline.build import build


def test_tables_and_counts(con):
    counts = {
        t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("languages", "categories", "models", "questions", "answers", "ratings")
    }
    assert counts["languages"] == 23 and counts["categories"] == 12 and counts["models"] == 8
    # ratings in long form: 300 rated answers, each on the paper's four criteria
    assert counts["questions"] == 2644 and counts["ratings"] == 4 * 300
    assert con.execute("SELECT count(DISTINCT rating_id) FROM ratings").fetchone()[0] == 300
    assert 21_000 < counts["answers"] < 23_000
    by_type = dict(con.execute("SELECT question_type, count(*) FROM questions GROUP BY 1").fetchall())
    assert by_type == {"specific": 1471, "agnostic": 1173}
    assert con.execute("SELECT count(DISTINCT question_id) FROM ratings").fetchone()[0] == 100


def test_schema_matches_the_documentation(con):
    for table in schema.TABLES:
        columns = [r[0] for r in con.execute(f"DESCRIBE {table.name}").fetchall()]
        assert columns == table.column_names(), table.name


def test_resource_levels(con):
    levels = dict(con.execute("SELECT resource_level, count(*) FROM languages GROUP BY 1").fetchall())
    assert levels == {"high": 11, "low": 12}


def test_one_model_vocabulary(con):
    models = {r[0] for r in con.execute("SELECT model FROM models").fetchall()}
    assert {r[0] for r in con.execute("SELECT DISTINCT model FROM answers WHERE NOT is_human").fetchall()} == models
    assert {r[0] for r in con.execute("SELECT DISTINCT model FROM ratings").fetchall()} <= models
    assert con.execute("SELECT count(*) FROM answers WHERE is_human AND model IS NOT NULL").fetchone()[0] == 0


def test_every_answer_and_rating_points_at_a_question(con):
    assert con.execute("SELECT count(*) FROM answers a ANTI JOIN questions q USING (question_id)").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM ratings r ANTI JOIN questions q USING (question_id)").fetchone()[0] == 0


def test_keys_follow_the_documented_order(con):
    # The build numbers each dataset file on its own, taking the files in this order
    # (pipeline/release.py): the ids must come out as if the whole release had been sorted at once.
    name_index = "coalesce(try_cast(regexp_extract(name, ':([0-9]+)$', 1) AS BIGINT), -1)"
    assert (
        con.execute(f"""
        SELECT count(*) FROM (SELECT question_id,
            row_number() OVER (ORDER BY language, question_type DESC, {name_index}, name) AS expected FROM questions)
        WHERE question_id <> expected""").fetchone()[0]
        == 0
    )
    assert (
        con.execute("""
        SELECT count(*) FROM (SELECT answer_id,
            row_number() OVER (ORDER BY question_id, is_human DESC, model NULLS LAST, name) AS expected FROM answers)
        WHERE answer_id <> expected""").fetchone()[0]
        == 0
    )


def test_notebooks_can_only_read(database):
    with store.connect(database) as con, pytest.raises(duckdb.Error):
        con.execute("CREATE TABLE scratch (x INTEGER)")


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_failed_build_leaves_the_previous_database_byte_identical(tmp_path, release_folder, database):
    target = tmp_path / "calmqa.duckdb"
    shutil.copy(database, target)
    before = _digest(target)
    corrupted = tmp_path / "corrupted"
    shutil.copytree(release_folder, corrupted)
    victim = sorted((corrupted / "datasets").iterdir())[3]
    victim.write_bytes(victim.read_bytes()[:-200])
    with pytest.raises(InputError) as info:
        build(corrupted, target)
    assert victim.name in str(info.value)
    assert _digest(target) == before
    # nothing beside it but its lock file, when the build got as far as taking it (a file that cannot be read
    # stops it before: the build fingerprints the files first)
    assert {p.name for p in tmp_path.iterdir() if p.is_file()} - {"calmqa.duckdb.lock"} == {"calmqa.duckdb"}


def test_unverified_build_of_own_files(tmp_path, small_language_identification):
    source = write_release(tmp_path / "release")
    with pytest.raises(InputError, match="checksum mismatch"):
        build(source, tmp_path / "own.duckdb")
    counts = build(source, tmp_path / "own.duckdb", verify=False)
    assert counts["questions"] == 4 and counts["ratings"] == 4  # one rated answer, four criteria


@pytest.mark.slow
def test_two_builds_give_identical_tables(tmp_path, small_language_identification):
    source = write_release(tmp_path / "release")
    first, second = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    build(source, first, verify=False)
    build(source, second, verify=False)
    with store.connect(first) as a, store.connect(second) as b:
        for table in schema.TABLES:
            query = f"SELECT * FROM {table.name} ORDER BY ALL"
            assert a.execute(query).fetchall() == b.execute(query).fetchall(), table.name


def test_killed_build_leaves_the_previous_database_byte_identical(tmp_path, release_folder, database):
    target = tmp_path / "calmqa.duckdb"
    shutil.copy(database, target)
    before = _digest(target)
    code = f"from analysis.pipeline.build import build; build({str(release_folder)!r}, {str(target)!r})"
    process = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".calmqa.duckdb.tmp-*")) and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert _digest(target) == before
    # the next build clears what the killed one left behind and succeeds
    build(release_folder, target)
    assert not list(tmp_path.glob(".calmqa.duckdb.tmp-*"))


@pytest.mark.slow
def test_an_answer_at_the_text_limit_builds_and_one_over_it_is_refused(tmp_path, small_language_identification, capsys):
    source = write_release(tmp_path / "release", gzip_files=False)
    path = source / "datasets" / "dataset-specific-german.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    answer = data["entries"][0]["answers"][1]["translations"]["German"]
    answer["text"] = ("Wort " * (records.MAX_FIELD // 5 + 1))[: records.MAX_FIELD]
    path.write_text(json.dumps(data), encoding="utf-8")
    build(source, tmp_path / "big.duckdb", verify=False)
    with store.connect(tmp_path / "big.duckdb") as con:
        assert con.execute("SELECT max(n_bytes) FROM answers").fetchone()[0] == records.MAX_FIELD
    before = _digest(tmp_path / "big.duckdb")
    answer["text"] += "!"
    path.write_text(json.dumps(data), encoding="utf-8")
    status = cli.main(["build-db", "--source", str(source), "--db", str(tmp_path / "big.duckdb"), "--no-verify"])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert "answer 1 (german:0:language.german:claude opus), field 'translations.German.text'" in err
    assert "is 1,048,577 characters long; a text field has at most 1,048,576 characters" in err
    assert _digest(tmp_path / "big.duckdb") == before
