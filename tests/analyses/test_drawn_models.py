"""Which models a model x language chart draws when there are more than it can (`dimensions.drawn_models`)."""

from study_tables import study_database

from analysis.analyses import dimensions


def test_a_study_with_more_models_than_a_chart_draws_draws_its_first_ones_in_its_order(tmp_path):
    """Every model answered every question: no count decides, so the study's order does (the order its
    answers file names them in), never the names' alphabet."""
    models = [f"{letter}-model" for letter in "zyxwvutsrqponmlkjihgfedcba"]  # 26, in reverse alphabetical order
    (tmp_path / "study.toml").write_text('name = "many"\ntitle = "Many models"\n', encoding="utf-8")
    (tmp_path / "questions.csv").write_text("question_id,language,question\nq1,Hausa,Tambaya\n", encoding="utf-8")
    rows = "".join(f"q1,{m},Amsa\n" for m in models)
    (tmp_path / "answers.csv").write_text("question_id,model,answer\n" + rows, encoding="utf-8")
    con = study_database(tmp_path)
    assert dimensions.drawn_models(con) == models[: dimensions.MAX_DRAWN_MODELS]
