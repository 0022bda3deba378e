"""`Orders.without`: a language left out of the orders is left out of the languages a chart draws
(`drawn_languages`) too, the others drawn as before; orders that draw every language still draw every one."""

from analysis.analyses.dimensions import Orders


def orders(drawn_languages: list[str] | None) -> Orders:
    """Four languages on two resource levels (high: German, Hindi; low: Fijian, Yoruba), labelled by their
    name with a mark, of which a chart draws `drawn_languages` (None: all)."""
    return Orders(
        models=["M1", "M2"],
        languages=["German", "Hindi", "Fijian", "Yoruba"],
        labels=["German*", "Hindi*", "Fijian*", "Yoruba*"],
        level_starts=("Fijian",),
        resource_levels=("high", "low"),
        levels_of={"German": "high", "Hindi": "high", "Fijian": "low", "Yoruba": "low"},
        drawn_languages=drawn_languages,
    )


def test_a_drawn_language_left_out_is_no_longer_drawn_and_the_others_still_are():
    without = orders(["German", "Fijian", "Yoruba"]).without("Fijian")
    assert without.drawn_languages == ["German", "Yoruba"]
    # The rest of the orders, by hand: Fijian's place and label gone, the low level now starts at Yoruba.
    assert without.languages == ["German", "Hindi", "Yoruba"]
    assert without.labels == ["German*", "Hindi*", "Yoruba*"]
    assert without.level_starts == ("Yoruba",)


def test_leaving_out_a_language_that_is_not_drawn_keeps_the_drawn_ones():
    without = orders(["German", "Fijian"]).without("Hindi")
    assert without.drawn_languages == ["German", "Fijian"]
    assert without.languages == ["German", "Fijian", "Yoruba"]


def test_leaving_out_the_only_drawn_language_draws_none():
    """Not None (which would draw every language): the chart that drew only German draws nothing."""
    assert orders(["German"]).without("German").drawn_languages == []


def test_orders_that_draw_every_language_still_draw_every_one():
    without = orders(None).without("German")
    assert without.drawn_languages is None
    assert without.languages == ["Hindi", "Fijian", "Yoruba"]


def test_the_orders_left_out_of_are_unchanged():
    drawn = ["German", "Fijian", "Yoruba"]
    before = orders(drawn)
    before.without("Fijian")
    assert before.drawn_languages == ["German", "Fijian", "Yoruba"]
    assert before.languages == ["German", "Hindi", "Fijian", "Yoruba"]
