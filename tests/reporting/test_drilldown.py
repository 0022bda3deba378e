"""The reports' drill-down data (`reporting.drilldown`): what travels with the reports folder."""

import json
import re
import shutil

import polars as pl
from study_tables import study_database

from analysis.core import paths
from analysis.reporting import drilldown

EXAMPLE = paths.ROOT / "data" / "examples" / "study"


def _calls(path, function):
    """The arguments of the `calmqaAnswers.<function>(...)` call a drill-down file makes."""
    text = path.read_text(encoding="utf-8")
    match = re.fullmatch(rf"calmqaAnswers\.{function}\((.*)\);\n", text, flags=re.DOTALL)
    assert match, f"{path.name} is not one call of calmqaAnswers.{function}"
    return json.loads(f"[{match.group(1)}]")


def test_every_question_is_in_one_page_of_its_language_and_type(tmp_path):
    con = study_database(EXAMPLE)
    out = drilldown.write(tmp_path, con)
    index = _calls(out / drilldown.INDEX_FILE, "index")[0]
    questions = pl.read_csv(EXAMPLE / "questions.csv")
    answers = pl.read_csv(EXAMPLE / "answers.csv")
    expected = questions.group_by("language", "question_type").len()
    assert len(index["groups"]) == expected.height
    seen = []
    for group in index["groups"]:
        n = expected.filter(
            (pl.col("language") == group["language"]) & (pl.col("question_type") == group["questionType"])
        )["len"][0]
        assert group["questions"] == n and group["pages"] == -(-n // drilldown.QUESTIONS_PER_PAGE)
        for page in range(group["pages"]):
            file, number, shown = _calls(out / f"{group['file']}-{page}.js", "page")
            assert (file, number) == (group["file"], page)
            seen += re.findall(r'<div class="calmqa-meta">[^<]*· ([^<·]+)</div>', "".join(shown))
    assert sorted(seen) == sorted(questions["question_id"].cast(pl.String).to_list())
    # Each question shows every model's answer to it.
    page = "".join(_calls(out / "g0-0.js", "page")[2])
    first = re.findall(r'<div class="calmqa-meta">[^<]*· ([^<·]+)</div>', page)[0]
    models = answers.filter(pl.col("question_id").cast(pl.String) == first).height
    block = page.split('<div class="calmqa-question">')[1]
    assert block.count('data-model="') == models
    # No value of the data names a file.
    assert all(re.fullmatch(r"(index|g\d+-\d+)\.js", p.name) for p in out.glob("*.js"))


def test_text_from_the_data_stays_text_in_the_drill_down(tmp_path):
    folder = tmp_path / "study"
    shutil.copytree(EXAMPLE, folder)
    payload = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"
    answers = pl.read_csv(folder / "answers.csv")
    answers.with_columns(answer=pl.lit(payload)).write_csv(folder / "answers.csv")
    out = drilldown.write(tmp_path / "reports", study_database(folder))
    raw = (out / "g0-0.js").read_text(encoding="utf-8")
    assert "</script>" not in raw and "<img" not in raw, "a file's text could end its script or add markup"
    shown = "".join(_calls(out / "g0-0.js", "page")[2])
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in shown and "<img" not in shown
