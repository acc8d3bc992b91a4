"""train/calibrate.py's choices that need no model: the bar sweeps and the tie rule."""

from __future__ import annotations

from train.calibrate import MAX_FALSE_ABSTAIN, abstention_sweep, middle_of_best


def test_ties_take_the_middle_of_the_best_run():
    assert middle_of_best({0.1: 0.5, 0.2: 0.8, 0.3: 0.8, 0.4: 0.8, 0.5: 0.6}) == 0.3
    assert middle_of_best({0.1: 0.9, 0.2: 0.8}) == 0.1


def test_the_abstention_sweep_counts_both_errors_at_each_bar():
    # two unanswerable questions whose best paper scores 0.2 and 0.6; three answerable at 0.3, 0.7, 0.9
    sweep = abstention_sweep([0.2, 0.6, 0.3, 0.7, 0.9], [False, False, True, True, True])
    assert sweep[0.25] == {"abstention_accuracy": 0.5, "false_abstains": 0.0}
    assert sweep[0.5] == {"abstention_accuracy": 0.5, "false_abstains": round(1 / 3, 4)}
    assert sweep[0.65] == {"abstention_accuracy": 1.0, "false_abstains": round(1 / 3, 4)}
    feasible = {b: s["abstention_accuracy"] for b, s in sweep.items() if s["false_abstains"] <= MAX_FALSE_ABSTAIN}
    assert max(feasible) == 0.3  # abstaining below 0.31 would lose the answerable 0.3
    assert middle_of_best(feasible) == 0.26  # bars 0.21-0.30 all catch one of the two: the upper middle


def test_the_cite_sweep_retrieves_each_question_once_and_answers_as_without_the_memo(seed_store, seed_settings):
    """The sweep varies only the citation bars, so train.calibrate keeps each retrieval; the answers must be the
    ones the real pipeline gives without that memo, run after run."""
    from rag.evaluation.questions import default_questions_file, load_questions
    from rag.evaluation.run import run_eval
    from rag.pipeline import Pipeline
    from train.calibrate import RememberingPipeline

    store, embedder = seed_store
    questions = [q for q in load_questions([default_questions_file()]) if q.qid in {"q002", "q049", "q070"}]
    remembering = RememberingPipeline(store, embedder, seed_settings)

    def run(pipeline):
        return run_eval(questions, store, embedder, seed_settings, "hybrid", "extractive", 5, pipeline=pipeline)

    def answers(result):
        return [(r.qid, r.answer, r.citations, r.abstained) for r in result.questions]

    first, second = run(remembering), run(remembering)
    assert len(remembering.retrieved) == len(questions)
    assert answers(first) == answers(second) == answers(run(Pipeline(store, embedder, seed_settings)))
