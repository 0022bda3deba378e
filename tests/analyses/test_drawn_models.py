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


def _study_of_models(folder, models, answers_each):
    (folder / "study.toml").write_text('name = "many"\ntitle = "Many models"\n', encoding="utf-8")
    questions = "".join(f"q{i},Hausa,Tambaya {i}\n" for i in range(max(answers_each)))
    (folder / "questions.csv").write_text("question_id,language,question\n" + questions, encoding="utf-8")
    rows = "".join(f"q{i},{m},Amsa\n" for m, n in zip(models, answers_each) for i in range(n))
    (folder / "answers.csv").write_text("question_id,model,answer\n" + rows, encoding="utf-8")
    return study_database(folder)


def test_the_study_s_own_models_are_drawn_before_imported_ones_and_those_with_the_most_answers_first(tmp_path):
    models = ["d-model", "c-model", "b-model", "a-model", "e-model"]
    con = _study_of_models(tmp_path, models, [1, 1, 3, 2, 2])
    # b-, a- and e-model stand for imported models (the order of their import: a, e, b); the study's own
    # are d- and c-model, each with fewer answers than any imported one.
    for position, model in enumerate(["a-model", "e-model", "b-model"], start=1):
        con.execute("UPDATE models SET import_position = ?, position = NULL WHERE model = ?", [position, model])
    # chosen: the own models, then the imported with the most answers (b: 3), then a before e (2 each, by name);
    # drawn in the models' order: the own in the study's, the imported by name
    assert dimensions.drawn_models(con, limit=4) == ["d-model", "c-model", "a-model", "b-model"]
    assert set(dimensions.drawn_models(con, limit=4)) == {"d-model", "c-model", "b-model", "a-model"}
    assert set(dimensions.drawn_models(con, limit=2)) == {"d-model", "c-model"}


def test_a_model_of_the_study_without_answers_keeps_its_place_among_the_drawn(tmp_path):
    models = ["c-model", "b-model", "a-model"]
    con = _study_of_models(tmp_path, models, [1, 1, 1])
    con.execute("DELETE FROM answers WHERE model = 'c-model'")
    assert dimensions.drawn_models(con, limit=2) == ["c-model", "b-model"]
