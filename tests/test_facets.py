"""The facet rule: a paper answers a topic only when it holds every part of it (rag/facets.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag.backends.extractive import ExtractiveBackend
from rag.config import Settings
from rag.embedding import get_embedder
from rag.evidence import Selector
from rag.facets import facet_shares, facets, gives_count, holds_topic, missing_text
from rag.judge import judge
from rag.lexical import LexicalIndex
from rag.pipeline import facet_focus
from rag.policy import Policy, load_calibration
from rag.query import parse
from rag.types import Source

from .helpers import answer_from, ask, retrieve

POLICY = Policy.from_settings(Settings())
BAR = POLICY.facet_bar
LIGHT = POLICY.light_facet
WINDOW = POLICY.count_window

# A small corpus of its own: the IDF weights come from these texts.
TEXTS = {
    "gnn": "Graph neural networks are expressive. We study message passing in graph neural networks.",
    "robust": "Adversarial robustness of image classifiers under attacks, with certified defenses.",
    "both": "We study the adversarial robustness of graph neural networks against structure attacks.",
    "federated": "Federated learning across hospitals with communication-efficient aggregation.",
    "unlearning": "Machine unlearning removes the influence of forgotten samples from a trained model.",
    "llm": "We probe large language models for knowledge about medicine.",
    "reps": "Representation learning with contrastive objectives for images.",
    "labels": "Learning from noisy labels for image classification with a robust loss.",
    "other1": "A benchmark for tabular prediction with gradient boosting baselines.",
    "other2": "Diffusion models for image generation with fast samplers.",
}


@pytest.fixture(scope="module")
def index() -> LexicalIndex:
    ids = list(TEXTS)
    return LexicalIndex.build(ids, list(TEXTS.values()), [{"paper_id": i} for i in ids], "g1")


def shares_of(topic: str, names: list[str], index: LexicalIndex) -> list[tuple[tuple[str, float], ...]]:
    return facet_shares(topic, [TEXTS[n] for n in names], index, LIGHT)


def test_a_topic_is_cut_at_the_words_that_join_two_things():
    assert [f.text for f in facets("adversarial robustness of graph neural networks")] == [
        "adversarial robustness",
        "graph neural networks",
    ]
    assert [f.text for f in facets("diffusion models for image generation")] == ["diffusion models", "image generation"]
    # alternatives stay one facet: "A or B", "A / B", "A (B)"
    (either,) = facets("PDEs or physics-informed neural nets")
    assert len(either.alternatives) == 2
    assert len(facets("test-time compute / inference scaling for llms")) == 2
    # words naming the research act, not its topic, are no facet: "prove results in a linear regression setting"
    assert [f.text for f in facets("prove results in a linear regression setting")] == ["a linear regression setting"]
    assert [f.text for f in facets("clustering papers")] == ["clustering papers"]
    assert facets("clustering papers")[0].alternatives == (frozenset({"cluster"}),)
    assert facets("papers") == ()


def test_a_bracketed_list_names_instances_of_its_part_not_parts_of_its_own(index):
    # "learning from weak labels (noisy labels, label proportions)": a paper on noisy labels holds the topic; the
    # list's commas join alternatives, not parts every paper must hold.
    topic = "classification with weak labels (noisy labels, label proportions, positive-unlabeled data)"
    assert [f.text for f in facets(topic)] == [
        "classification",
        "weak labels (noisy labels, label proportions, positive-unlabeled data",
    ]
    (labels,) = shares_of(topic, ["labels"], index)
    assert holds_topic(labels, BAR), labels
    # unclosed (the question's closing bracket went with its "?"), and the part outside still an alternative
    (weak,) = facets("weak labels (noisy labels, label proportions")
    assert len(weak.alternatives) == 3


def test_a_paper_holding_half_of_a_compound_topic_does_not_answer_it(index):
    gnn, robust, both = shares_of("adversarial robustness of graph neural networks", ["gnn", "robust", "both"], index)
    assert dict(gnn)["graph neural networks"] == 1.0 and dict(gnn)["adversarial robustness"] == 0.0
    assert dict(robust)["adversarial robustness"] == 1.0 and dict(robust)["graph neural networks"] == 0.0
    assert not holds_topic(gnn, BAR) and not holds_topic(robust, BAR) and holds_topic(both, BAR)
    assert missing_text(gnn, BAR) == "covers “graph neural networks” but not “adversarial robustness”"
    assert missing_text(both, BAR) == ""  # nothing lacking: no message


def test_a_facets_share_is_weighed_by_how_rare_its_words_are(index):
    # "federated unlearning" is one facet; "federated" and "unlearning" are each in one text of ten, "learning"
    # would be in many: each paper holds about half, under the bar.
    federated, unlearning = shares_of("federated unlearning", ["federated", "unlearning"], index)
    assert 0.3 < federated[0][1] < BAR and 0.3 < unlearning[0][1] < BAR
    # a common word weighs less than a rare one: "image" (4 texts) against "classifiers" (1)
    (image_only,) = shares_of("image classifiers", ["other2"], index)
    assert image_only[0][1] < 0.5


def test_an_acronym_is_held_by_the_words_it_abbreviates(index):
    (llm,) = shares_of("knowledge probing of llms", ["llm"], index)
    assert dict(llm)["llms"] == 1.0  # "large language models"
    (gnn,) = shares_of("gnns for molecules", ["gnn"], index)
    assert dict(gnn)["gnns"] == 1.0
    # every letter counts, the last one too: "rlhf" is not "reinforcement learning with human preferences"
    rlhf = facet_shares(
        "rlhf",
        ["Reinforcement learning from human feedback.", "Reinforcement learning with human preferences."],
        index,
        LIGHT,
    )
    assert [dict(shares)["rlhf"] for shares in rlhf] == [1.0, 0.0]
    # a three-letter word ending in "s" is an acronym whole, not a plural: "gps"
    (gps,) = facet_shares("gps traces", ["Global positioning system traces of vehicles."], index, LIGHT)
    assert dict(gps)["gps traces"] == 1.0
    # two letters are too few: "rl" would be "representation learning"
    (reps,) = shares_of("contrastive objectives for rl", ["reps"], index)
    assert dict(reps)["rl"] == 0.0


def test_a_hyphenated_word_holds_its_closed_up_form(index):
    (pre,) = facet_shares("pretrained encoders", ["We adapt pre-trained encoders to new tasks."], index, LIGHT)
    assert pre[0][1] == 1.0
    (neither,) = facet_shares("pretrained encoders", ["We adapt trained encoders to new tasks."], index, LIGHT)
    assert neither[0][1] < 1.0


def test_a_word_used_once_when_used_weighs_little_in_a_facet_and_a_topic_word_keeps_its_weight(index):
    # The pipeline weighs a facet's terms by IDF times the corpus burstiness (Policy.facet_focus): "quick" and
    # "generic" are in no text here, so by IDF alone they are the heaviest part of the facet and the unlearning
    # paper fails it.
    focus = facet_focus(POLICY.facet_focus)
    unlearning = [TEXTS["unlearning"]]
    (plain,) = facet_shares("quick generic machine unlearning", unlearning, index, LIGHT)
    (focused,) = facet_shares("quick generic machine unlearning", unlearning, index, LIGHT, focus)
    assert plain[0][1] < BAR <= focused[0][1]
    # a facet of request words alone: at focus 1 it falls under the light-facet cut; at the shipped 0.5 it can stay
    # a facet of its own (docs/EVALUATION.md)
    (alone,) = facet_shares("unlearning, anyone here interested", unlearning, index, LIGHT, facet_focus(1.0))
    assert holds_topic(alone, BAR)
    # words naming a topic keep their weight: the federated learning paper still lacks "unlearning"
    (federated,) = facet_shares("federated unlearning", [TEXTS["federated"]], index, LIGHT, focus)
    assert federated[0][1] < BAR
    # a coined name the corpus never uses keeps its weight: the paper naming "Zorblax" holds "Zorblax classifiers",
    # the classifier paper that never names it does not
    named, other = facet_shares(
        "zorblax classifiers",
        ["We introduce Zorblax, a tokenizer.", "Image classifiers under attacks."],
        index,
        LIGHT,
        focus,
    )
    assert holds_topic(named, BAR) and not holds_topic(other, BAR)
    assert facet_focus(0) is None  # IDF alone


def test_a_topic_with_no_facet_holds_nothing_back(index):
    # "which papers study methods?": every word is the research act's, so there is no condition to hold
    assert facet_shares("methods", [TEXTS["gnn"], TEXTS["robust"]], index, LIGHT) == [(), ()]
    assert facet_shares("graph neural networks", [], index, LIGHT) == []
    assert holds_topic((), BAR)
    # the bar is inclusive
    assert holds_topic((("a", BAR), ("b", 1.0)), BAR) and not holds_topic((("a", BAR - 0.01), ("b", 1.0)), BAR)


def test_a_facet_too_light_to_carry_a_topic_is_no_condition(index):
    (labels,) = shares_of("learning with noisy labels for classification", ["labels"], index)
    assert [text for text, _ in labels] == ["noisy labels", "classification"]  # "learning" left out
    assert holds_topic(labels, BAR)


def paper(pid: str, relevance: float, shares: tuple[tuple[str, float], ...] | None, text: str = "") -> Source:
    abstract = text or f"We study the topic of paper {pid}. It has results."
    return Source(pid, None, 2026, "ICLR 2026", 0.5, abstract, abstract, relevance=relevance, facet_shares=shares)


HALF = (("adversarial robustness", 0.0), ("graph neural networks", 1.0))
FULL = (("adversarial robustness", 1.0), ("graph neural networks", 1.0))
TOPIC = "which papers study adversarial robustness of graph neural networks?"


def weak_evidence(sources: list[Source], policy: Policy, question: str) -> bool:
    """Whether the judge refuses to answer `question` from `sources` under `policy`."""
    return not judge(parse(question), sources, policy).answers


def test_a_topic_question_is_abstained_on_when_no_paper_holds_every_facet():
    policy = POLICY
    assert weak_evidence([paper("a", 0.99, HALF), paper("b", 0.9, HALF)], policy, TOPIC)
    assert not weak_evidence([paper("a", 0.99, HALF), paper("b", 0.9, FULL)], policy, TOPIC)
    # a question about a detail is phrased in words the abstract need not use: the rule does not apply
    assert not parse("how robust are graph neural networks to adversarial attacks?").is_topic
    assert not weak_evidence([paper("a", 0.99, None)], policy, "how robust are graph neural networks to attacks?")
    # "which paper says …" asks about one paper's detail, though its scaffolding ("which paper") is stripped
    assert not parse("which paper says to cite 999-99 in every sentence?").is_topic
    assert parse("which papers study federated unlearning?").is_topic and parse("federated unlearning").is_topic
    # a bare phrase of 8 words names a topic; of 9, it describes a paper
    assert parse("test-time adaptation for image classifiers under common corruptions").is_topic
    assert not parse("test-time adaptation for image classifiers under common natural corruptions").is_topic
    described = "speeding up lloyd iterations without approximation by exploiting directions between samples"
    assert not parse(described).is_topic  # a paper described in other words (more than 8 words): no facet rule
    # papers the user chose (a chat follow-up), or the bars set to 0 (min_score 0): no evidence bar
    assert not weak_evidence([paper("a", 0.99, HALF)], replace(policy, papers_chosen=True), TOPIC)
    assert not weak_evidence([paper("a", 0.99, HALF)], replace(policy, min_score=0.0), TOPIC)


def test_the_abstention_says_which_part_of_the_topic_is_missing():
    extractive = ExtractiveBackend(get_embedder(Settings()), POLICY)
    answer = answer_from(TOPIC, [paper("a", 0.97, HALF), paper("b", 0.5, HALF)], extractive, POLICY)
    assert answer.abstained and answer.citations == []
    assert answer.answer == (
        "The indexed abstracts don't answer this: no paper found covers all of “adversarial robustness of graph "
        "neural networks”; the closest (a, relevance 0.97) covers “graph neural networks” but not “adversarial "
        "robustness”."
    )


def test_a_list_answer_cites_only_papers_holding_every_facet():
    selector = Selector(get_embedder(Settings()), POLICY)
    query = parse(TOPIC)
    sources = [
        paper("a", 0.99, HALF, "Graph neural networks are expressive message passers."),
        paper("b", 0.95, FULL, "We attack graph neural networks and study their adversarial robustness."),
        paper("c", 0.90, HALF, "We train graph neural networks on molecules with message passing."),
    ]
    kept, _ = selector.select(query, sources, judge(query, sources, POLICY))
    assert [s.id for s, _ in kept] == ["b"]  # the reranker's first, half a match, is not quoted
    # without facets (not a topic question's sources) the reranker's choice stands
    plain = [replace(s, facet_shares=None) for s in sources]
    assert [s.id for s, _ in selector.select(query, plain, judge(query, plain, POLICY))[0]][:1] == ["a"]


def test_the_seed_store_abstains_on_a_compound_topic_and_answers_each_half(seed_store, seed_settings):
    store, embedder = seed_store
    for settings in (seed_settings, replace(seed_settings, reranker=False)):
        asked = ask("graph neural networks for drug discovery", store, embedder, settings)
        assert asked.abstained and asked.citations == []
        assert "covers “graph neural networks” but not “drug discovery”" in asked.answer
        assert not ask("graph neural networks", store, embedder, settings).abstained
    # a year restricts the search: the message says so ("no paper from 2025"), and a one-word topic is "covered"
    restricted = ask("which 2025 papers study unlearning?", store, embedder, seed_settings)
    assert restricted.abstained and "no paper from 2025 found covers “unlearning”" in restricted.answer
    # retrieval records the facets of a topic question on every source, and none for a question about a detail
    found = retrieve("which papers study conformal prediction?", store, embedder, seed_settings, k=3)
    assert all(s.facet_shares and s.facet_shares[0][0] == "conformal prediction" for s in found.sources)
    assert holds_topic(found.sources[0].facet_shares, BAR)
    detail = retrieve("what does PURGE reach on RWKU?", store, embedder, seed_settings, k=3)
    assert all(s.facet_shares is None for s in detail.sources)


def test_a_count_question_names_what_it_counts():
    assert parse("how many baselines was FeDaL compared against?").counts == "baselines"
    assert parse("how many PU methods and total evaluations does PU-Bench include?").counts == "methods"
    assert parse("on how many tabular datasets was NCA evaluated?").counts == "datasets"
    # the first plural is what is counted, though a verb follows it unmarked
    assert parse("how many benchmarks evaluate the saliency-aware clustering of FedSal?").counts == "benchmarks"
    assert parse("how many MCP servers does MCP-Flow collect data from?").counts == "servers"
    assert parse("how many people took part?").counts == "people"
    assert parse("how much does TRACE improve on COCO?").counts is None
    assert parse("which papers study unlearning?").counts is None


def test_a_count_is_a_number_followed_closely_by_what_is_counted():
    assert gives_count("baselines", "It was evaluated against 54 baselines.", WINDOW)
    assert gives_count("methods", "an integrated framework of 18 state-of-the-art PU methods; and", WINDOW)
    assert gives_count("evaluations", "on 8 diverse datasets (**2,880** evaluations in total)", WINDOW)
    assert gives_count("tasks", "datasets spanning eight tasks", WINDOW)
    assert gives_count(
        "benchmarks", "experiments on thirteen molecular, protein, and social-network benchmarks", WINDOW
    )
    # a share, a ratio or a number far from the noun is no count of it
    assert not gives_count("parameters", "improves accuracy by 5% with fewer parameters", WINDOW)
    assert not gives_count("games", "a suite of Atari games running 14x faster", WINDOW)
    assert not gives_count("parameters", "a 3-fold reduction in the parameters", WINDOW)
    assert not gives_count("games", "In 2024 we released a new suite of classic arcade games", WINDOW)


def test_a_count_question_no_relevant_paper_counts_is_abstained_on():
    policy = POLICY
    question = "how many games does Octax ship with?"
    octax = paper("octax", 0.9, None, "Octax is a suite of classic arcade games in JAX. It runs games fast.")
    counted = paper("octax", 0.9, None, "Octax ships 21 classic arcade games in JAX. It runs them fast.")
    # a paper of low relevance counting other games ("two-player games") does not answer for Octax
    other = paper("theory", 0.05, None, "We study equilibria of two-player games. We prove convergence.")
    assert weak_evidence([octax, other], policy, question)
    assert not weak_evidence([counted, other], policy, question)
    # relevant means at the bar or above: a counting paper exactly at it answers, one just under does not
    bar = load_calibration().relevance_bar
    assert not weak_evidence([octax, replace(counted, id="c", relevance=bar)], policy, question)
    assert weak_evidence([octax, replace(counted, id="c", relevance=bar - 0.01)], policy, question)
    # the whole abstract is read, not only the best chunk shown as the snippet
    assert not weak_evidence([replace(counted, snippet="Octax is a suite of games.")], policy, question)
    extractive = ExtractiveBackend(get_embedder(Settings()), policy)
    answer = answer_from(question, [octax, other], extractive, policy)
    assert answer.abstained and "none of the papers found gives a number of games" in answer.answer
    answered = answer_from(question, [counted, other], extractive, policy)
    assert answered.citations == ["octax"] and "21 classic arcade games" in answered.answer


def test_the_seed_store_abstains_on_a_count_its_abstracts_do_not_give(seed_store, seed_settings):
    store, embedder = seed_store
    asked = ask("how many games does Octax ship with?", store, embedder, seed_settings)
    assert asked.abstained and "gives a number of games" in asked.answer
    counted = ask("how many baselines was FeDaL compared against?", store, embedder, seed_settings)
    assert not counted.abstained and counted.citations == ["000-11"] and "54 baselines" in counted.answer
