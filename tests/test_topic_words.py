"""The topic a facet is cut from (rag.terms.topic_words): the question's words from its first to its last word that
authors' keywords name topics with, read from the shipped keyword statistics (train.keyword_uses)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace

import pytest

from rag.terms import KEYWORD_USES_PATH, keyword_uses, topic_words

from .helpers import ask


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("hi could u pls show me papers on spiking neural networks asap", "spiking neural networks"),
        ("For my thesis background chapter I need solid citations on machine unlearning", "machine unlearning"),
        ("disentangled representation learning as the main goal", "disentangled representation learning"),
        # inner words stay, whatever they are: a topic's parts are joined by them
        ("adversarial robustness of graph neural networks", "adversarial robustness of graph neural networks"),
        ("please help, thanks", "please help, thanks"),  # no topic word: nothing is cut
    ],
)
def test_the_words_around_a_topic_fall_away_and_the_topic_stays(text, topic):
    assert topic_words(text, 10) == topic


def test_request_words_are_in_no_keyword_and_topic_words_in_many():
    uses = keyword_uses()
    assert all(uses.get(stem, 0) == 0 for stem in ("thesi", "asap", "pls", "advisor", "citat"))
    assert all(uses[stem] >= 100 for stem in ("unlearn", "cluster", "diffus", "graph"))


def test_the_keyword_statistics_are_the_file_their_card_names():
    card = (KEYWORD_USES_PATH.parent / "KEYWORD_USES.md").read_text(encoding="utf-8")
    (digest,) = re.findall(r"`keyword_uses.json.gz` ([0-9a-f]{64})", card)
    assert hashlib.sha256(KEYWORD_USES_PATH.read_bytes()).hexdigest() == digest


def test_a_topic_wrapped_in_scope_words_is_answered_and_was_refused_without_the_cut(seed_store, seed_settings):
    """dev3's "as the main goal" used to be read as a part of the topic no paper holds (the facet rule refused a
    paper at relevance 0.98); with the cut, the disentanglement papers are listed."""
    from rag.pipeline import Pipeline, answer_of
    from rag.query import parse

    store, embedder = seed_store
    question = "which papers have disentangled representation learning as the main goal?"
    answer = ask(question, store, embedder, seed_settings)
    assert not answer.abstained and {"000-14", "000-09"} <= set(answer.citations)
    pipeline = Pipeline(store, embedder, seed_settings)
    uncut = answer_of(pipeline.run(parse(question), policy=replace(pipeline.policy, topic_word_uses=0), stream=False))
    assert uncut.abstained and "covers “disentangled representation learning as the main goal”" in uncut.answer
