"""A study's tables in memory, for fast tests of what reads them."""

import duckdb

from analysis import schema, store
from analysis.io import study as study_folder
from analysis.pipeline.language_routing import Routing
from analysis.pipeline.study import load_study


def study_database(folder):
    """The tables a build's first stage writes from a study folder, in memory, and empty verdict tables:
    enough for what reads the study's questions, answers and orders."""
    con = duckdb.connect(":memory:")
    study = study_folder.read(folder)
    # every language routed to the n-gram engine from 20 characters: identified, as a build makes the
    # languages the evaluation measured
    routing = Routing(
        [
            {"route": "auto", "iso_code": code, "from_chars": 20, "engine": "ngram", "margin": 0.0}
            | {"screen_margin": None, "pct_correct": None}
            for code in study.languages["iso_code"].unique().to_list()
        ],
        "auto",
    )
    load_study(con, study, routing)
    # The tables a build's later stages write (the verdicts), empty: the drill-down needs none of their rows.
    for table in schema.TABLES:
        if not store.table_exists(con, table.name):
            con.execute(table.ddl())
    store.create_definitions(con)
    return con
