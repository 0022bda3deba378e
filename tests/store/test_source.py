"""Which study a database file holds (`store.source_of`), read from its `study` and `source` rows."""

import duckdb
import pytest

from analysis import schema, store

TABLES = {t.name: t for t in schema.TABLES}


def _database(path, paper):
    with duckdb.connect(str(path)) as con:
        con.execute(TABLES["study"].ddl())
        con.execute(TABLES["source"].ddl())
        con.execute(
            "INSERT INTO study (name, title, paper, nativqa, language_identification, provider_error_codes) "
            "VALUES ('s', 'S', ?, FALSE, 'study', [])",
            [paper],
        )
        con.execute("INSERT INTO source VALUES ('/studies/s', 'abc123')")
    return path


@pytest.mark.parametrize(("paper", "release"), [("calmqa", True), (None, False)])
def test_a_database_of_the_release_has_a_paper_and_a_study_has_none(tmp_path, paper, release):
    found = store.source_of(_database(tmp_path / "db.duckdb", paper))
    assert (found.study, found.folder, found.fingerprint, found.release) == ("s", "/studies/s", "abc123", release)


def test_a_database_without_a_source_record_belongs_to_no_study(tmp_path):
    path = tmp_path / "db.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(TABLES["study"].ddl())
    assert store.source_of(path) is None
    assert store.source_of(tmp_path / "absent.duckdb") is None
