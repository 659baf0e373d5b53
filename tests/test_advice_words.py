"""The advice's words: a saving is said only where the one rule called it, a cost as a
cost, and one figure per configuration."""

from __future__ import annotations

from jitmagic.model.advice import Advice, Candidate
from jitmagic.render.attribution import conclusion, saving_words


def _advice(**fields) -> Advice:
    ranked = (Candidate("layer", 16, 0.0557, None, 0.09, False),)
    base = dict(flat_cold_s=0.7, noise_s=0.09, ranked=ranked, recommended=(),
                recommended_saving_s=None, all_nested_saving_s=0.0557, not_tried=(),
                runs=3, wall_s=4.0, everything=("layer", "bias"),
                all_nested_kind="inconclusive")
    return Advice(**{**base, **fields})


def test_a_saving_the_rule_did_not_call_is_not_said_as_one():
    said = " ".join(conclusion(_advice()))
    assert "no helper saves measurably on its own" in said
    assert "nesting every helper: cold start 55.7 ms shorter (not significant)" in said
    assert "saves 55.7" not in said


def test_a_negative_saving_is_a_cost():
    assert saving_words("nesting every helper", -0.34, "slower") == \
        "nesting every helper costs 340 ms"
    assert saving_words("--nest layer", -0.34, "inconclusive") == \
        "--nest layer: cold start 340 ms longer (not significant)"
    assert "saves -" not in saving_words("x", -0.34, None)


def test_a_decided_saving_is_said():
    said = " ".join(conclusion(_advice(recommended=("layer",), recommended_saving_s=0.41,
                                       recommended_kind="faster", all_nested_kind="faster",
                                       all_nested_saving_s=0.45)))
    assert "recommended: --nest layer saves 410 ms; nesting every helper saves 450 ms" in said


def test_with_one_helper_every_helper_is_that_helper_one_figure():
    said = " ".join(conclusion(_advice(everything=("layer",), all_nested_kind="faster")))
    assert said.strip() == "no helper saves measurably on its own"


def test_the_noisy_line_names_the_cold_start_its_share_is_of():
    """A new user found '48% of the cold start' matched no cold start the report showed:
    it is of the advice's own flat runs' median, which the line now gives."""
    from jitmagic.render.attribution import advice_lines

    (noisy,) = [x for x in advice_lines(_advice(noise_s=0.35)) if "noisy:" in x]
    assert "about 50% of the flat cold start (700 ms, the median of the advice's own flat " \
           "runs, which its candidates are judged against)" in noisy
