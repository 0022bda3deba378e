"""The reports' sentences that state a number about a model, a language or a pair, checked against the
CSVs they come from (tests/sentences.py), on CaLMQA here and on the studies in test_studies.py."""

import polars as pl
import sentences

from analysis.reporting import provenance


def _surface_csv(tmp_path, ok: dict[str, int], n: int = 100):
    folder = tmp_path / "03_surface_quality"
    folder.mkdir()
    pl.DataFrame(
        {
            "model": list(ok),
            "unreliable": [False] * len(ok),
            "n_answers": [n] * len(ok),
            "n_surface_ok": list(ok.values()),
        }
    ).write_csv(folder / "heatmap_pct_surface_ok.csv")
    return tmp_path


def test_a_sentence_with_the_wrong_share_or_direction_is_found(tmp_path):
    figures = _surface_csv(tmp_path, {"Alpha": 97, "Beta": 25, "Gamma": 80})
    right = "Alpha has the fewest answers with a surface issue (3.0%), Beta has the most (75.0%)."
    assert sentences.problems({"03": right}, figures) == ([], 1)
    # the sentence of the suite before issue 36: the worst model's share without an issue as its share with one
    old = "Alpha has the fewest surface issues (97.0% clean), Beta the most (25.0%)."
    found, _ = sentences.problems({"03": old}, figures)
    assert found and "Beta is 25.0 in the sentence, 75.0000 in the CSV" in found[0]
    backwards = "Beta has the fewest answers with a surface issue (75.0%), Alpha has the most (3.0%)."
    found, _ = sentences.problems({"03": backwards}, figures)
    assert any("is not the lowest" in p for p in found) and any("is not the highest" in p for p in found)
    unread = "Alpha has the fewest surface issues of all, Beta the most."
    assert sentences.problems({"03": unread}, figures)[0] == ["03: a sentence on surface issues that no check reads"]


def test_a_name_that_ends_with_a_full_stop_is_read_whole(tmp_path):
    """A generated study's model `ws8f3c.`: its full stop is the name's, not the end of a sentence."""
    figures = _surface_csv(tmp_path, {"ws8f3c.": 90, "xtoxe.e": 50, "t.-": 50})
    said = "Over 3 models. ws8f3c. has the fewest answers with a surface issue (10.0%), t.- and xtoxe.e have the most (50.0%)."
    assert sentences.problems({"03": said}, figures) == ([], 1)


def test_a_model_called_and_is_read_as_a_name(tmp_path):
    """A generated study's model `and`: `a and and and jdfoba` lists three models."""
    figures = _surface_csv(tmp_path, {"a": 90, "and": 90, "jdfoba": 90, "b": 50})
    said = "a and and and jdfoba have the fewest answers with a surface issue (10.0%), b has the most (50.0%)."
    assert sentences.problems({"03": said}, figures) == ([], 1)
    wrong = "a and and and b have the fewest answers with a surface issue (10.0%), jdfoba has the most (50.0%)."
    assert sentences.problems({"03": wrong}, figures)[0]


def test_every_sentence_of_the_calmqa_reports_matches_its_csv(built_reports):
    reports = built_reports / "reports"
    summaries = {p.stem: (provenance.read(p) or {}).get("summary") for p in sorted(reports.glob("[0-9]*.html"))}
    found, checked = sentences.problems(summaries, built_reports / "figures")
    assert not found, found
    # surface issues, S_surf, the similar pairs, English answers, the mean ratings
    assert checked >= 5


def test_a_tie_of_similar_pairs_is_read_and_its_count_checked(tmp_path):
    folder = tmp_path / "02_topic_similarity"
    folder.mkdir()
    (folder / "topic_similarity.csv").write_text(
        "group_a,group_b,bc\nA,B,0.5\nA,C,0.501\nB,C,0.2\nB,A,0.5\nC,A,0.501\nC,B,0.2\n", encoding="utf-8"
    )
    right = "2 pairs tie as the most similar (0.50 each: A and B; A and C); the least similar, B and C (0.20)."
    assert sentences.problems({"02": right}, tmp_path) == ([], 1)
    miscounted = right.replace("2 pairs", "3 pairs")
    assert len(sentences.problems({"02": miscounted}, tmp_path)[0]) == 1
    backwards = (
        "The most similar pair is B and C (0.20); 2 pairs tie as the least similar (0.50 each: A and B; A and C)."
    )
    assert len(sentences.problems({"02": backwards}, tmp_path)[0]) == 2
