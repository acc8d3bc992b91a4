"""Names a question gives in ordinary capitalized words (rag.terms.proper_names): read from how the corpus's abstracts
capitalize each word (train.proper_names), and what the judge does with them (a near-miss detail gets a specific no)."""

from __future__ import annotations

import hashlib
import re

import pytest

from rag.config import Settings
from rag.judge import judge, refusal
from rag.policy import Policy
from rag.query import parse
from rag.terms import PROPER_NAMES_PATH, proper_names
from rag.types import Source

from .helpers import ask

POLICY = Policy.from_settings(Settings())


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("How much does TRACE improve instance segmentation on Cityscapes?", ["Cityscapes"]),
        ("DemoGrasp success rate with the Allegro hand?", ["Allegro"]),
        # a run of capitalized words is one name, the ordinary word inside it too
        ("does it beat baselines on Google Research Football?", ["Google Research Football"]),
        ("the Chebyshev-based activation paper", ["Chebyshev"]),  # a hyphen's tail is cut
        ("an Adam-like optimizer for Gaussian processes", ["Adam", "Gaussian"]),
        # ordinary words capitalized: a heading's Title Case, a question word, a coined name's first letters
        ("What Does Research Show About Reinforcement Learning?", []),
        ("How is InfoNCE related to UniCon?", []),
        # a sentence's first word is capitalized by its place: a name only if no English word ("Hi" is one)
        ("Hi, what does DiVeQ reach on Kodak?", ["Kodak"]),
        ("Cityscapes results of TRACE?", ["Cityscapes"]),
        ("Anything on unlearning?", []),
        ("what does Zorblax do?", ["Zorblax"]),  # no corpus word, no English word: a new name
    ],
)
def test_the_names_a_question_writes_in_capitalized_words(text, names):
    assert proper_names(text) == names


def test_the_proper_names_are_the_file_their_card_names():
    card = (PROPER_NAMES_PATH.parent / "PROPER_NAMES.md").read_text(encoding="utf-8")
    (digest,) = re.findall(r"`proper_names.json.gz` ([0-9a-f]{64})", card)
    assert hashlib.sha256(PROPER_NAMES_PATH.read_bytes()).hexdigest() == digest


TRACE = (
    "We propose TRACE, which turns tags into instance masks. On the COCO benchmark, TRACE improves unsupervised "
    "instance segmentation by +5.1 AP."
)


def source(pid: str, abstract: str, relevance: float) -> Source:
    return Source(pid, None, 2026, "ICLR 2026", 0.6, abstract, abstract, relevance=relevance)


def test_a_dataset_named_in_a_capitalized_word_the_paper_never_writes_is_a_detail_it_does_not_report():
    query = parse("How much does TRACE improve unsupervised instance segmentation on Cityscapes?")
    verdict = judge(query, [source("trace", TRACE, 0.9), source("other", "We study graphs.", 0.1)], POLICY)
    assert not verdict.answers and verdict.reason == "detail"
    assert verdict.named == ("TRACE",) and verdict.unnamed == ("Cityscapes",)
    text = refusal(verdict, query, POLICY)
    assert "the paper that writes TRACE (trace, relevance 0.90) never mentions Cityscapes" in text
    assert "what it does report: “On the COCO benchmark, TRACE improves unsupervised instance segmentation" in text


@pytest.mark.parametrize(
    "question",
    [
        "How much does TRACE improve unsupervised instance segmentation on COCO?",  # written: answered
        "How Much Does TRACE Improve Instance Segmentation?",  # Title Case names nothing more
        "Hi, how much does TRACE improve instance segmentation?",  # a greeting is no name
    ],
)
def test_a_question_whose_capitalized_words_are_written_or_ordinary_is_answered(question):
    verdict = judge(parse(question), [source("trace", TRACE, 0.9)], POLICY)
    assert verdict.answers, verdict


def test_a_robot_hand_the_seed_paper_never_names_gets_a_specific_no(seed_store, seed_settings):
    """DemoGrasp's abstract (001-11) reports the Shadow Hand and an average over hand embodiments, never the Allegro
    hand: the answer says so and quotes what it reports, instead of quoting the average as the answer."""
    store, embedder = seed_store
    missed = ask("What success rate does DemoGrasp get on the Allegro hand?", store, embedder, seed_settings)
    assert missed.abstained and missed.citations == []
    assert "the paper that writes DemoGrasp (001-11, relevance" in missed.answer
    assert "never mentions Allegro; what it does report: “" in missed.answer
    reported = ask("What success rate does DemoGrasp get on the Shadow Hand?", store, embedder, seed_settings)
    assert not reported.abstained and reported.citations[0] == "001-11"


def test_the_corpus_counts_a_word_capitalized_only_inside_a_sentence():
    from train.proper_names import capitalized_uses

    capitalized, lowercase = capitalized_uses(
        ["Results on Cityscapes improve. Research shows gains on Cityscapes and on research data: Kodak (Cityscapes)."]
    )
    assert capitalized["cityscapes"] == 2  # the third follows a bracket: capitalized by its place
    assert capitalized["research"] == 0 and lowercase["research"] == 1  # a sentence's first word is not counted
    assert capitalized["results"] == 0 and capitalized["kodak"] == 0  # first words, of a sentence and after a colon
