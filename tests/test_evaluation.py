"""The eval harness: each metric on small hand-computed cases, and `rag eval` end to end on the seeds."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from rag.cli import app
from rag.errors import InputError
from rag.evaluation.metrics import (
    answer_claims,
    citation_scores,
    groundedness,
    mention_coverage,
    ndcg_at,
    percentile,
    recall_at,
    reciprocal_rank,
    score_question,
)
from rag.evaluation.questions import (
    Question,
    default_questions_file,
    default_split_file,
    load_questions,
    load_split,
    make_split,
    select_split,
)
from rag.evaluation.report import check_floors, parse_floor
from rag.evaluation.run import parse_judgement

from .llm_server import ScriptedLLM

runner = CliRunner()


# -- retrieval metrics ----------------------------------------------------------------------------------


def test_recall_at_n_counts_gold_papers_in_the_top_n():
    ranked = ["a", "x", "b", "y", "c"]
    assert recall_at(ranked, ["a", "b", "c", "d"], 1) == 0.25
    assert recall_at(ranked, ["a", "b", "c", "d"], 3) == 0.5
    assert recall_at(ranked, ["a", "b", "c", "d"], 10) == 0.75
    assert recall_at(["a", "a", "b"], ["b"], 2) == 1.0  # a repeated paper takes one rank
    assert recall_at(ranked, [], 5) is None  # undefined for unanswerable questions


def test_reciprocal_rank_of_the_first_gold_paper():
    assert reciprocal_rank(["x", "y", "b", "a"], ["a", "b"]) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x"], ["a"]) == 0.0
    assert reciprocal_rank([], ["a"]) == 0.0
    assert reciprocal_rank(["a"], []) is None


def test_ndcg_binary_relevance_by_hand():
    # gold a, b; ranked a at 1, b at 3: DCG = 1 + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3)
    assert ndcg_at(["a", "x", "b"], ["a", "b"], 10) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert ndcg_at(["a", "b"], ["a", "b"], 10) == 1.0
    assert ndcg_at(["x", "y"], ["a"], 10) == 0.0
    assert ndcg_at(["x", "a"], ["a"], 1) == 0.0  # outside the cut-off
    assert ndcg_at(["a"], [], 10) is None


# -- citations, coverage, abstention ------------------------------------------------------------------------


def test_citation_precision_recall_f1_by_hand():
    p, r, f = citation_scores(["a", "x"], ["a", "b", "c"])
    assert (p, r) == (0.5, pytest.approx(1 / 3)) and f == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))


def test_duplicate_citations_count_once():
    assert citation_scores(["a", "a", "a"], ["a", "b"]) == (1.0, 0.5, pytest.approx(2 / 3))


def test_empty_answer_and_empty_gold_edge_cases():
    assert citation_scores([], ["a"]) == (None, 0.0, 0.0)  # nothing cited: no precision, zero recall and F1
    assert citation_scores(["a"], []) == (0.0, None, None)  # citing on an unanswerable question
    assert citation_scores([], []) == (None, None, None)


def test_must_mention_matching_ignores_case_and_latex():
    answer = "PURGE reaches 11% unlearning effectiveness on RWKU — with **SF-DiVeQ**."
    assert mention_coverage(answer, ["11\\%", "rwku", "$\\textbf{SF-DiVeQ}$", "GDPR"]) == 0.75
    assert mention_coverage("", ["x"]) == 0.0
    assert mention_coverage("anything", []) is None


def test_score_question_abstention_and_false_abstention():
    unanswerable = Question("u", "unanswerable", "q?", ())
    answerable = Question("a", "fact", "q?", ("p1",), ("42",))
    abstained = score_question(unanswerable, ["p1"], "The indexed abstracts don't answer this.", [], [], True, {}, None)
    assert abstained["abstention_accuracy"] == 1.0 and abstained["false_abstain_rate"] is None
    assert abstained["recall@5"] is None and abstained["citation_f1"] is None
    wrong = score_question(answerable, ["p1"], "", [], [], True, {}, None)
    assert wrong["false_abstain_rate"] == 1.0 and wrong["abstention_accuracy"] is None
    assert wrong["citation_recall"] == 0.0 and wrong["must_mention"] == 0.0


def test_dropped_rate_counts_removed_citations():
    q = Question("a", "fact", "q?", ("p1",))
    metrics = score_question(q, ["p1"], "x [p1]", ["p1"], ["zz", "yy", "zz"], False, {"p1": "x"}, None)
    assert metrics["dropped_rate"] == pytest.approx(2 / 3)


# -- groundedness --------------------------------------------------------------------------------------------


def test_answer_claims_carry_a_line_citation_back_over_its_sentences():
    answer = "2 papers match:\n- First claim here. Second claim here. [p1]\n- Third claim, uncited."
    assert answer_claims(answer) == [
        ("First claim here.", ["p1"]),
        ("Second claim here.", ["p1"]),
        ("Third claim, uncited.", []),
    ]


def test_groundedness_supported_unsupported_and_uncited(seed_store):
    _, embedder = seed_store
    abstracts = {"p1": "We propose DiVeQ, which treats quantization as adding an error vector."}
    assert (
        groundedness("We propose DiVeQ, which treats quantization as adding an error vector. [p1]", abstracts, embedder)
        == 1.0
    )
    assert groundedness("Bread rises with yeast and warm water overnight. [p1]", abstracts, embedder) == 0.0
    assert groundedness("DiVeQ treats quantization as adding an error vector.", abstracts, embedder) == 0.0
    assert groundedness("DiVeQ adds an error vector [p1]. Bread needs yeast [p1].", abstracts, embedder) == 0.5


# -- odds and ends -------------------------------------------------------------------------------------------


def test_percentile_nearest_rank():
    assert percentile([5, 1, 3, 2, 4], 50) == 3
    assert percentile(list(range(1, 101)), 95) == 95
    assert percentile([], 50) is None


def test_floors_parse_and_check():
    assert parse_floor("recall@5=0.8") == ("recall@5", None, 0.8)
    assert parse_floor("topic:citation_f1=0.5") == ("citation_f1", "topic", 0.5)
    with pytest.raises(InputError, match="unknown metric 'recal@5'"):
        parse_floor("recal@5=0.8")
    with pytest.raises(InputError, match="expected METRIC=VALUE"):
        parse_floor("recall@5")
    run = {"overall": {"recall@5": 0.9, "dropped_rate": 0.2}, "by_type": {"topic": {"citation_f1": 0.4}}}
    floors = [parse_floor(s) for s in ("recall@5=0.8", "topic:citation_f1=0.5", "dropped_rate=0.1", "mrr=0.1")]
    assert check_floors(run, floors) == [
        "topic:citation_f1 0.400 < 0.5",
        "dropped_rate 0.200 > 0.1",
        "mrr was not measured",
    ]


def test_judge_reply_parsing():
    assert parse_judgement('Sure: {"faithfulness": 0.9, "correctness": 1.4}') == {
        "judge_faithfulness": 0.9,
        "judge_correctness": 1.0,
    }
    assert parse_judgement("no json here") == {"judge_faithfulness": None, "judge_correctness": None}


def test_bad_question_file_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"qid": "a", "type": "fact", "question": "x?", "gold_ids": []}\n{"qid": "b", "type": "fact"}\n')
    with pytest.raises(InputError, match=r"q\.jsonl:2: missing 'question'"):
        load_questions([path])


def test_team_question_set_is_well_formed(seed_papers):
    questions = load_questions([default_questions_file()])
    ids = {p.id for p in seed_papers}
    assert len(questions) >= 60
    counts = {t: sum(q.type == t for q in questions) for t in {q.type for q in questions}}
    assert counts["topic"] >= 15 and counts["fact"] >= 15 and counts["paraphrase"] >= 8
    assert counts["multi"] >= 6 and counts["unanswerable"] >= 6 and counts["venue"] >= 4
    assert all(set(q.gold_ids) <= ids for q in questions)
    assert all(not q.gold_ids for q in questions if q.type == "unanswerable")


def test_heldout_question_set_is_well_formed(seed_papers):
    """evals/heldout.jsonl: same schema and types as the team set, gold ids that exist, no question shared."""
    from pathlib import Path

    evals = Path(__file__).resolve().parent.parent / "evals"
    questions = load_questions([evals / "heldout.jsonl"])
    team = {q.question.lower() for q in load_questions([evals / "questions.jsonl"])}
    ids = {p.id for p in seed_papers}
    assert len(questions) >= 60 and all(q.qid.startswith("h") for q in questions)
    assert {q.type for q in questions} <= {"topic", "fact", "paraphrase", "multi", "unanswerable", "venue"}
    assert all(set(q.gold_ids) <= ids for q in questions)
    assert all(not q.gold_ids for q in questions if q.type == "unanswerable")
    assert all(q.gold_ids and q.rationale for q in questions if q.type != "unanswerable")
    assert not {q.question.lower() for q in questions} & team


def test_second_dev_set_is_well_formed_and_shares_nothing_with_the_reported_sets(seed_papers):
    """evals/dev2.jsonl (calibration only): the same schema, gold ids that exist, no question or qid of
    questions.jsonl or heldout.jsonl in it."""
    from pathlib import Path

    evals = Path(__file__).resolve().parent.parent / "evals"
    questions = load_questions([evals / "dev2.jsonl"])
    reported = load_questions([evals / "questions.jsonl", evals / "heldout.jsonl"])
    ids = {p.id for p in seed_papers}
    assert len(questions) >= 60 and all(q.qid.startswith("c") for q in questions)
    assert len({q.qid for q in questions}) == len(questions)
    assert {q.type for q in questions} == {"topic", "fact", "paraphrase", "multi", "unanswerable", "venue"}
    assert all(set(q.gold_ids) <= ids for q in questions)
    assert all(not q.gold_ids for q in questions if q.type == "unanswerable")
    assert all(q.gold_ids and q.rationale for q in questions if q.type != "unanswerable")
    assert not {q.question.lower() for q in questions} & {q.question.lower() for q in reported}
    assert not {q.qid for q in questions} & {q.qid for q in reported}


def test_third_dev_set_is_well_formed_and_shares_nothing_with_the_reported_sets(seed_papers):
    """evals/dev3.jsonl (calibration only, by a helper shown no code or eval file): the same schema."""
    from pathlib import Path

    evals = Path(__file__).resolve().parent.parent / "evals"
    questions = load_questions([evals / "dev3.jsonl"])
    reported = load_questions([evals / f for f in ("questions.jsonl", "heldout.jsonl", "sealed.jsonl")])
    ids = {p.id for p in seed_papers}
    assert len(questions) >= 60 and all(q.qid.startswith("d3-") for q in questions)
    assert {q.type for q in questions} == {"topic", "fact", "paraphrase", "multi", "unanswerable", "venue"}
    assert all(set(q.gold_ids) <= ids for q in questions)
    assert all(q.gold_ids and q.rationale for q in questions if q.type != "unanswerable")
    assert not {q.question.lower() for q in questions} & {q.question.lower() for q in reported}


def test_fourth_dev_set_is_mostly_unanswerable_near_misses_and_shares_nothing_with_the_reported_sets(seed_papers):
    """evals/dev4.jsonl (calibration only, by a helper shown no code or eval file): the same schema, most of it
    unanswerable, each unanswerable question with a rationale naming what the nearest paper lacks."""
    from pathlib import Path

    evals = Path(__file__).resolve().parent.parent / "evals"
    questions = load_questions([evals / "dev4.jsonl"])
    reported = load_questions([evals / f for f in ("questions.jsonl", "heldout.jsonl", "sealed.jsonl")])
    ids = {p.id for p in seed_papers}
    assert len(questions) == 110 and all(q.qid.startswith("d4-") for q in questions)
    assert len({q.qid for q in questions}) == len(questions)
    assert sum(q.type == "unanswerable" for q in questions) == 60
    assert all(set(q.gold_ids) <= ids for q in questions)
    assert all(bool(q.gold_ids) == (q.type != "unanswerable") and q.rationale for q in questions)
    assert not {q.question.lower() for q in questions} & {q.question.lower() for q in reported}


def test_sealed_set_is_well_formed_with_ids_the_store_gives(seed_papers):
    """evals/sealed.jsonl (read once, after every choice): gold ids the seeds' numbering gives (01 first, so
    no "-00"), the six types, nothing shared with the other sets. Structure only: no answer is scored here."""
    from pathlib import Path

    evals = Path(__file__).resolve().parent.parent / "evals"
    questions = load_questions([evals / "sealed.jsonl"])
    others = load_questions([evals / "questions.jsonl", evals / "heldout.jsonl", evals / "dev2.jsonl"])
    ids = {p.id for p in seed_papers}
    assert len(questions) >= 60 and len({q.qid for q in questions}) == len(questions)
    assert {q.type for q in questions} == {"topic", "fact", "paraphrase", "multi", "unanswerable", "venue"}
    assert all(set(q.gold_ids) <= ids for q in questions)
    assert all(q.gold_ids and q.rationale for q in questions if q.type != "unanswerable")
    # Two short queries ("2026 multi-view clustering papers") were written word for word by both authors.
    assert len({q.question.lower() for q in questions} & {q.question.lower() for q in others}) <= 2


# Each later sealed set, with the sets written before it (a question they share word for word is allowed twice:
# short ones such as "robot manipulation papers?" were written by more than one author).
LATER_SEALED = {
    "sealed2": ("questions", "heldout", "dev2", "sealed"),
    "sealed3": ("questions", "heldout", "dev2", "sealed", "sealed2"),
    "sealed4": ("questions", "heldout", "dev2", "dev3", "dev4", "sealed", "sealed2", "sealed3"),
    "sealed5": ("questions", "heldout", "dev2", "dev3", "dev4", "sealed", "sealed2", "sealed3", "sealed4"),
    "sealed6": ("questions", "heldout", "dev2", "dev3", "dev4", "sealed", "sealed2", "sealed3", "sealed4", "sealed5"),
    "sealed7": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", 2, 3, 4, 5, 6))),
    "sealed8": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", 2, 3, 4, 5, 6, 7))),
    "sealed9": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", 2, 3, 4, 5, 6, 7, 8))),
    "sealed10": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 10)))),
    "sealed11": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 11)))),
    "sealed12": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 12)))),
    "sealed13": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 13)))),
    "sealed14": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 14)))),
    "sealed15": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 15)))),
    "sealed16": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 16)))),
    "sealed17": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 17)))),
    "sealed18": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 18)))),
    "sealed19": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 19)))),
    "sealed20": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 20)))),
    "sealed21": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 21)))),
    "sealed22": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 22)))),
    "sealed23": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 23)))),
    "sealed24": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 24)))),
    "sealed25": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 25)))),
    "sealed26": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 26)))),
    "sealed27": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 27)))),
    "sealed28": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 28)))),
    "sealed29": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 29)))),
    "sealed30": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 30)))),
    "sealed31": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 31)))),
    "sealed32": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 32)))),
    "sealed33": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 33)))),
    "sealed34": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 34)))),
    "sealed35": ("questions", "heldout", "dev2", "dev3", "dev4", *(f"sealed{n}" for n in ("", *range(2, 35)))),
}


@pytest.mark.parametrize("name", list(LATER_SEALED))
def test_each_later_sealed_set_is_well_formed_with_ids_the_store_gives(seed_papers, name):
    """evals/sealed2-35.jsonl (each by a helper shown no code and no eval file, for the choices after the previous
    sealed set's read): the same schema and six types, gold ids the seeds give. Structure only: nothing scored."""
    from pathlib import Path

    evals = Path(__file__).resolve().parent.parent / "evals"
    questions = load_questions([evals / f"{name}.jsonl"])
    others = load_questions([evals / f"{earlier}.jsonl" for earlier in LATER_SEALED[name]])
    ids = {p.id for p in seed_papers}
    assert len(questions) >= 60 and all(q.qid.startswith(f"s{name.removeprefix('sealed')}-") for q in questions)
    assert len({q.qid for q in questions}) == len(questions)
    assert {q.type for q in questions} == {"topic", "fact", "paraphrase", "multi", "unanswerable", "venue"}
    assert all(set(q.gold_ids) <= ids for q in questions)
    assert all(bool(q.gold_ids) == (q.type != "unanswerable") and q.rationale for q in questions)
    assert len({q.question.lower() for q in questions} & {q.question.lower() for q in others}) <= 2


def test_each_phrasing_file_asks_for_one_topic_per_line():
    """evals/phrasings_*.txt (evals/phrasings.py fills each line's {topic}): one placeholder a line, and at most
    four lines an earlier file wrote, and a restriction after a TAB only from the script's words. Counts only in the
    message: an unread set must not be printed."""
    from pathlib import Path

    from evals.phrasings import read_requests

    seen: set[str] = set()

    def written_order(path: Path) -> tuple[int, int]:  # dev, heldout, heldout2, …, heldout16
        number = path.stem.removeprefix("phrasings_heldout")
        return (0, 0) if path.stem == "phrasings_dev" else (1, int(number) if number.isdigit() else 1)

    files = (Path(__file__).resolve().parent.parent / "evals").glob("phrasings_*.txt")
    for path in sorted(files, key=written_order):
        lines = [request.template for request in read_requests(path)]  # exits on an unknown restriction
        written = {line.lower() for line in lines}
        not_one_placeholder = sum(line.count("{topic}") != 1 for line in lines)
        repeated = len(written & seen)  # short requests were written by more than one author
        assert (len(lines) >= 20, not_one_placeholder, repeated <= 4) == (True, 0, True), path.name
        seen |= written


# -- the dev/test split of evals/questions.jsonl ------------------------------------------------------------


def test_split_covers_every_qid_once_and_is_stratified_by_type():
    questions = load_questions([default_questions_file()])
    split = load_split(default_split_file())
    dev, test = split["dev"], split["test"]
    assert not dev & test and dev | test == {q.qid for q in questions}
    for qtype in {q.type for q in questions}:
        qids = {q.qid for q in questions if q.type == qtype}
        assert len(qids) < 2 or (qids & dev and qids & test), qtype
        assert abs(len(qids & dev) - len(qids & test)) <= 1, qtype


def test_split_file_is_the_documented_rule_and_stable():
    """evals/split.json is what the rule makes (docs/EVALUATION.md), and the rule ignores the file's order."""
    questions = load_questions([default_questions_file()])
    stored = json.loads(default_split_file().read_text())
    assert stored == make_split(questions) == make_split(list(reversed(questions)))


def test_split_refuses_questions_it_does_not_know(tmp_path):
    split = {"dev": frozenset({"a"}), "test": frozenset({"b"})}
    rows = [Question("a", "fact", "x?", ()), Question("b", "fact", "y?", ())]
    assert [q.qid for q in select_split(rows, "test", split)] == ["b"]
    with pytest.raises(InputError, match=r"not in evals/split\.json \(first: c\)"):
        select_split([*rows, Question("c", "fact", "z?", ())], "dev", split)
    with pytest.raises(InputError, match="--split must be one of dev, test"):
        select_split(rows, "train", split)
    bad = tmp_path / "split.json"
    bad.write_text('{"dev": ["a"], "test": ["a"]}')
    with pytest.raises(InputError, match="in both dev and test"):
        load_split(bad)


def test_eval_split_scores_only_that_part(seed_store_dir, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    result = runner.invoke(app, ["eval", "--split", "test", "--type", "multi", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    scored = {q["qid"] for q in payload["runs"][0]["questions"]}
    test = load_split(default_split_file())["test"]
    multi = {q.qid for q in load_questions([default_questions_file()]) if q.type == "multi"}
    assert scored == test & multi and payload["meta"]["split"] == "test"


def test_eval_split_with_another_question_file_is_one_line(small_set):
    result = runner.invoke(app, ["eval", str(small_set), "--split", "dev"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --split works on the bundled evals/questions.jsonl; 3 qids are not in evals/split.json (first: f1)"
    ]


# -- the command --------------------------------------------------------------------------------------------


@pytest.fixture()
def small_set(tmp_path):
    rows = [
        {
            "qid": "f1",
            "type": "fact",
            "question": "what unlearning effectiveness does PURGE reach on RWKU?",
            "gold_ids": ["001-02"],
            "must_mention": ["11%"],
        },
        {
            "qid": "t1",
            "type": "topic",
            "question": "which papers study unlearning?",
            "gold_ids": ["001-02", "001-15", "001-18"],
            "must_mention": [],
        },
        {
            "qid": "u1",
            "type": "unanswerable",
            "question": "how do I bake sourdough bread?",
            "gold_ids": [],
            "must_mention": [],
        },
    ]
    path = tmp_path / "small.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_eval_command_writes_results_report_and_chart(small_set, seed_store_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    out = tmp_path / "out"
    result = runner.invoke(app, ["eval", str(small_set), "--out", str(out), "--fail-under", "recall@5=0.9"])
    assert result.exit_code == 0, result.output
    assert "| hybrid | extractive | 3 |" in result.stdout
    payload = json.loads((out / "results.json").read_text())
    (run,) = payload["runs"]
    assert run["overall"]["recall@5"] == 1.0 and run["by_type"]["unanswerable"]["abstention_accuracy"] == 1.0
    assert run["by_type"]["fact"]["must_mention"] == 1.0 and run["by_type"]["fact"]["citation_precision"] == 1.0
    assert [q["qid"] for q in run["questions"]] == ["f1", "t1", "u1"]
    assert run["latency_ms"]["total"]["p50"] > 0
    report = (out / "report.md").read_text()
    assert "## By type" in report and "### u1 (unanswerable)" in report
    assert (out / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_fails_under_a_floor_with_exit_3(small_set, seed_store_dir, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    result = runner.invoke(app, ["eval", str(small_set), "--type", "fact", "--fail-under", "fact:recall@1=1.01"])
    assert result.exit_code == 3
    assert result.stderr.splitlines()[-1] == "error: below the floor: fact:recall@1 1.000 < 1.01"


def test_eval_json_and_compare(small_set, seed_store_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    # Without the reranker k caps a list (with it, a list names its members below k: tests/test_list_beyond.py).
    monkeypatch.setenv("RAG_RERANKER", "off")
    a, b = tmp_path / "k1", tmp_path / "k5"
    assert runner.invoke(app, ["eval", str(small_set), "-k", "1", "--out", str(a)]).exit_code == 0
    assert runner.invoke(app, ["eval", str(small_set), "-k", "5", "--out", str(b)]).exit_code == 0
    shown = runner.invoke(app, ["eval", "--compare", str(a / "results.json"), "--compare", str(b / "results.json")])
    assert shown.exit_code == 0
    row = next(line for line in shown.stdout.splitlines() if line.startswith("| citation_recall |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[2]) > float(cells[1]) and cells[3].endswith("▲")  # k=5 cites more of the gold
    payload = json.loads(runner.invoke(app, ["eval", str(small_set), "--json", "--type", "fact"]).stdout)
    assert payload["meta"]["n_questions"] == 1 and payload["runs"][0]["questions"][0]["citations"] == ["001-02"]


def test_eval_with_an_llm_backend_records_tokens_and_judge_scores(small_set, seed_store_dir, monkeypatch):
    with ScriptedLLM() as llm:
        monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
        monkeypatch.setenv("RAG_LLM_BASE_URL", llm.url)
        monkeypatch.setenv("RAG_LLM_MODEL", "normal")
        result = runner.invoke(app, ["eval", str(small_set), "--json", "--type", "fact"])
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)["runs"][0]
    assert run["backend"] == "openai" and run["tokens"]["total"] == 120
    assert run["overall"]["judge_faithfulness"] == 0.75 and run["overall"]["judge_correctness"] == 0.5
    assert any(str(r["messages"][0]["content"]).startswith("You grade") for r in llm.requests)


def test_the_off_domain_questions_are_split_into_a_fit_half_and_a_report_half():
    """train/data/off_domain_fit.jsonl (read by train.calibrate) and evals/off_domain.jsonl (reported, never fitted):
    160 questions outside the field by a helper shown no code, alternate lines to each half. No question is in both
    halves, and none is in an eval set of the seeds: a fitted question must not be scored."""
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    fit = load_questions([repo / "train" / "data" / "off_domain_fit.jsonl"])
    report = load_questions([repo / "evals" / "off_domain.jsonl"])
    scored = load_questions(
        sorted(p for p in (repo / "evals").glob("*.jsonl") if p.stem.startswith(("sealed", "dev")))
        + [repo / "evals" / name for name in ("questions.jsonl", "heldout.jsonl")]
    )
    assert (len(fit), len(report)) == (80, 80)
    assert all(q.type == "unanswerable" and not q.gold_ids for q in fit + report)
    fitted = {q.question.lower() for q in fit}
    assert not fitted & {q.question.lower() for q in report + scored}


def test_the_off_domain_training_questions_are_in_no_scored_or_fitted_set():
    """train/data/off_domain_train.jsonl: 239 questions outside the field by a helper shown no code, half of them
    using a word of the field in its everyday sense ("a transformer on the pole"), the negatives for the
    cross-encoder's next training (train/README.md). None is in an eval set, the reported off-domain half or the
    calibration's fit half."""
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    train = load_questions([repo / "train" / "data" / "off_domain_train.jsonl"])
    others = load_questions(
        sorted(p for p in (repo / "evals").glob("*.jsonl") if p.stem.startswith(("sealed", "dev")))
        + [repo / "evals" / name for name in ("questions.jsonl", "heldout.jsonl", "off_domain.jsonl")]
        + [repo / "train" / "data" / "off_domain_fit.jsonl"]
    )
    assert len(train) == 239 and all(q.type == "unanswerable" and not q.gold_ids for q in train)
    assert len({q.question.lower() for q in train}) == len(train)
    assert not {q.question.lower() for q in train} & {q.question.lower() for q in others}


def test_a_phrasing_restriction_is_read_and_keeps_only_its_papers(tmp_path):
    """A request asking for "accepted ICLR 2025 papers on X" is scored against the canonical answer's 2025 accepted
    papers, not all of them (evals/phrasings.py)."""
    from evals.phrasings import read_requests
    from rag.corpus import Paper
    from rag.query import parse

    path = tmp_path / "phrasings_x.txt"
    path.write_text("accepted ICLR 2025 papers on {topic}\tyear=2025,accepted\npapers on {topic}\n", encoding="utf-8")
    restricted, plain = read_requests(path)
    oral_2025, poster_2026 = Paper("a", "x", year=2025, status="oral"), Paper("b", "x", year=2026, status="poster")
    rejected_2025 = Paper("c", "x", year=2025, status="reject")
    assert [restricted.admits(p) for p in (oral_2025, poster_2026, rejected_2025)] == [True, False, False]
    assert all(plain.admits(p) for p in (oral_2025, poster_2026, rejected_2025))
    assert restricted.read_as_asked(parse(restricted.template.replace("{topic}", "unlearning")))
    assert not restricted.read_as_asked(parse("papers on unlearning"))
    path.write_text("papers on {topic}\tyear=2025,best-paper\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="unknown restriction"):
        read_requests(path)
