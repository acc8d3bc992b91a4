"""train.abstention_bar: the abstention bar re-chosen on a dump of natural questions (no torch needed)."""

from __future__ import annotations

from train.abstention_bar import sweep, utility


def row(gold, reason, relevance, *, abstained, citations=(), candidates=(), defined=False):
    return {
        "gold": list(gold),
        "reason": reason,
        "relevance": relevance,
        "abstained": abstained,
        "citations": list(citations),
        "candidates": list(candidates) or [("a", relevance, True)],
        "defined": defined,
    }


def test_a_question_refused_for_relevance_is_answered_by_its_best_paper_under_a_lower_bar():
    refused = row(["a"], "relevance", 0.2, abstained=True, candidates=[("b", 0.1, True), ("a", 0.2, True)])
    assert utility(refused, 0.3, 0.3) == 0.0  # still refused
    assert utility(refused, 0.15, 0.3) == 1.0  # answered by "a", its gold
    unanswerable = row([], "relevance", 0.2, abstained=True)
    assert (utility(unanswerable, 0.3, 0.3), utility(unanswerable, 0.15, 0.3)) == (1.0, 0.0)


def test_a_higher_bar_refuses_weak_answers_but_not_a_named_definition():
    weak = row([], "evidence", 0.35, abstained=False, citations=["a"])
    assert (utility(weak, 0.3, 0.3), utility(weak, 0.4, 0.3)) == (0.0, 1.0)
    named = row(["a"], "evidence", 0.25, abstained=False, citations=["a"], defined=True)
    assert utility(named, 0.4, 0.3) == 1.0
    # A refusal by another rule (a facet the paper lacks) is not the bar's to undo.
    facet = row(["a"], "topic", 0.9, abstained=True)
    assert utility(facet, 0.05, 0.3) == 0.0


def test_the_sweep_scores_every_bar_on_the_named_sets_only():
    run = {
        "calibrate": [row(["a"], "relevance", 0.22, abstained=True)],
        "report": [row([], "relevance", 0.22, abstained=True)],
    }
    on = sweep(run, ["calibrate"], 0.3)
    assert on[0.2] == 1.0 and on[0.25] == 0.0
    assert sweep(run, ["report"], 0.3)[0.2] == 0.0
