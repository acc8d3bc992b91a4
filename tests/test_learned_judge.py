"""The learned judge (rag.judge.learned_verdict with rag/models/judge/judge.json), on hand-built candidates: it
answers a right paper whatever the request words around the topic, lists every likely paper (also below k),
refuses when no candidate is likely and says why in one line, and the rules judge is unchanged when it is off."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag.config import Settings
from rag.judge import evidence_rows, judge, refusal
from rag.policy import EVIDENCE, Policy, load_judge_model
from rag.query import parse
from rag.terms import term_evidence, term_stats
from rag.types import Source

LEARNED = Policy.from_settings(Settings(judge="learned"))
RULES = Policy.from_settings(Settings(judge="rules"))
MODEL = LEARNED.judge_model
assert MODEL is not None and RULES.judge_model is None
LEAD = "The indexed abstracts don't answer this: "

UNLEARNING = (
    "We study machine unlearning for large language models: removing the influence of forget data while keeping "
    "utility. Our unlearning method improves forgetting on two benchmarks."
)
CLUSTERING = "We propose a fast k-means clustering algorithm. It clusters millions of points in seconds."


def paper(pid: str, relevance: float, abstract: str) -> Source:
    return Source(pid, None, 2026, "ICLR 2026", 0.5, abstract, abstract, relevance=relevance)


def candidates(*papers: Source, query=None) -> list[Source]:
    """The candidates as the pipeline hands them over: with the facet shares of a topic question."""
    from rag.facets import facet_shares
    from rag.lexical import LexicalIndex

    if query is not None and query.is_topic:
        index = LexicalIndex.build(
            [p.id for p in papers], [p.text for p in papers], [{"paper_id": p.id} for p in papers], "t"
        )
        for source, shares in zip(
            papers, facet_shares(query.search, [p.text for p in papers], index, 1 / 3), strict=True
        ):
            source.facet_shares = shares
    return list(papers)


def test_the_packaged_model_is_over_the_evidence_the_judge_computes():
    assert MODEL.features == EVIDENCE
    assert 0 < MODEL.member_bar <= MODEL.answer_bar < 1
    with pytest.raises(Exception, match="malformed"):
        load_judge_model(features=("something", "else"))


@pytest.mark.parametrize(
    "question",
    [
        "which papers study machine unlearning?",
        "quick one: which papers here are about machine unlearning?",
        "hey, anything in this collection on machine unlearning? need it for a survey",
    ],
)
def test_a_right_paper_is_answered_whatever_the_words_around_the_topic(question):
    query = parse(question)
    found = candidates(paper("u", 0.93, UNLEARNING), paper("c", 0.02, CLUSTERING), query=query)
    verdict = judge(query, found, LEARNED)
    assert verdict.answers and verdict.members is not None and verdict.members[0] == "u"
    assert "c" not in verdict.members


def test_request_words_weigh_little_and_topic_words_much():
    stats = term_stats()
    assert all(stats.topicality(w) < 0.5 for w in ("quick", "here", "need", "studi", "show"))
    assert all(stats.topicality(w) > 2.0 for w in ("unlearn", "cluster", "graph", "robot"))
    (right,), (wrong,) = (term_evidence("quick one: papers on unlearning?", [t]) for t in (UNLEARNING, CLUSTERING))
    assert right.topic_held > 0.8 > 0.2 > wrong.topic_held
    assert wrong.missing == "unlearn"


def test_a_list_cites_every_likely_paper_and_not_the_unlikely_ones():
    query = parse("which papers study machine unlearning?")
    others = [paper(f"u{i}", 0.9 - 0.05 * i, UNLEARNING.replace("two", f"{i + 3}")) for i in range(8)]
    found = candidates(*others, paper("c", 0.01, CLUSTERING), query=query)
    verdict = judge(query, found, LEARNED)
    assert verdict.answers and set(verdict.members) == {p.id for p in others}  # 8 members: more than k=5


def test_no_likely_candidate_is_refused_in_one_line_naming_the_closest_and_why():
    query = parse("which papers study protein folding with diffusion models?")
    found = candidates(paper("c", 0.03, CLUSTERING), paper("u", 0.02, UNLEARNING), query=query)
    verdict = judge(query, found, LEARNED)
    assert not verdict.answers and verdict.reason == "judged" and verdict.closest is not None
    text = refusal(verdict, query, LEARNED)
    assert text.startswith(LEAD) and "\n" not in text
    assert f"({verdict.closest.id}, relevance" in text and f"under the bar {MODEL.answer_bar:g}" in text


def test_the_evidence_rows_have_one_value_per_feature_and_track_the_topic():
    query = parse("which papers study machine unlearning?")
    rows = evidence_rows(query, candidates(paper("u", 0.9, UNLEARNING), paper("c", 0.1, CLUSTERING)), LEARNED)
    assert all(len(row) == len(EVIDENCE) for row in rows)
    held = EVIDENCE.index("topic_held")
    assert rows[0][held] > rows[1][held]
    assert MODEL.probability(rows[0]) > MODEL.probability(rows[1])


def test_with_the_rules_the_verdict_has_no_members_and_the_rules_decide():
    query = parse("which papers study machine unlearning?")
    verdict = judge(query, [paper("u", 0.93, UNLEARNING)], RULES)
    assert verdict.answers and verdict.members is None and verdict.reason == "evidence"
    assert not judge(query, [paper("u", 0.01, UNLEARNING)], replace(RULES)).answers


def test_an_extractive_list_quotes_the_first_members_and_lists_the_rest_by_title_and_id():
    from rag.backends.extractive import ExtractiveBackend
    from rag.embedding import get_embedder
    from rag.llm import drain
    from rag.types import Verdict

    query = parse("which papers study machine unlearning?")
    papers = [paper(f"u{i}", 0.9, UNLEARNING.replace("two", f"{i + 3}")) for i in range(7)]
    verdict = Verdict(True, "evidence", members=tuple(p.id for p in papers), likelihood=0.9)
    backend = ExtractiveBackend(get_embedder(Settings()), LEARNED)
    text = drain(backend.generate(query, papers, verdict, stream=False)).text
    lines = text.splitlines()
    assert lines[0] == "7 papers match:" and len(lines) == 8
    quoted, listed = lines[1 : 1 + LEARNED.quoted_papers], lines[1 + LEARNED.quoted_papers :]
    assert all("unlearning" in line.lower() for line in quoted)
    assert listed == [f"- {p.label} [{p.id}]" for p in papers[LEARNED.quoted_papers :]]


def test_the_term_statistics_are_the_file_their_card_names():
    import hashlib
    import re

    from rag.terms import TERMS_PATH

    card = (TERMS_PATH.parent / "MODEL_CARD.md").read_text(encoding="utf-8")
    (digest,) = re.findall(r"`terms.json.gz` ([0-9a-f]{64})", card)
    assert hashlib.sha256(TERMS_PATH.read_bytes()).hexdigest() == digest
