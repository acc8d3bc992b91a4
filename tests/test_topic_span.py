"""The topic reader (rag.topic_span): which words of a request name its topic, read by the packaged model from each
word in its context. Requests here are written for these tests, not taken from a phrasing set."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from dataclasses import replace

import pytest

from rag.errors import ModelError
from rag.terms import topic_words
from rag.topic_span import TOPIC_SPAN_PATH, load_topic_reader, topic_run


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        # wrapping words the field's keywords also use ("search", "group", "table", "set") are read by where they stand
        ("search: federated learning", "federated learning"),
        ("for a baseline table: every paper on speculative decoding", "speculative decoding"),
        ("gimme the speculative decoding papers", "speculative decoding"),
        ("is anybody in this set working on protein structure prediction?", "protein structure prediction"),
        # a joining word inside the topic stays
        ("papers on learning with noisy labels please", "learning with noisy labels"),
        # a name the corpus has never seen is the topic
        ("anything about the Zorblax optimizer?", "Zorblax optimizer"),
        # the topic alone is the topic
        ("neural architecture search", "neural architecture search"),
    ],
)
def test_the_reader_keeps_the_topic_and_drops_the_words_around_it(text, topic):
    assert load_topic_reader().span(text) == topic


def test_a_reading_group_is_no_part_of_the_topic():
    assert load_topic_reader().span("graph neural networks stuff for our reading group on friday") == (
        "graph neural networks"
    )


def test_the_keyword_rule_kept_the_wrapping_words_the_reader_drops():
    """What the reader changes: the first-to-last keyword-word cut keeps "search" and "reading group"."""
    assert topic_words("search: federated learning", 10) == "search: federated learning"
    assert load_topic_reader().span("search: federated learning") == "federated learning"


def test_a_request_with_no_topic_word_has_no_span():
    assert load_topic_reader().span("hi, thanks a lot") is None


@pytest.mark.parametrize(
    ("scores", "span"),
    [
        ([-1.0, 2.0, 1.5, -3.0], (1, 3)),
        ([2.0, -5.0, 1.0], (0, 3)),  # the words between two topic words stay: "X (Y, Z)", "X or Y"
        ([-2.0, 0.5, -1.0, -1.0], (1, 2)),
        ([-1.0, -0.2], None),
        ([], None),
    ],
)
def test_the_topic_runs_from_the_first_to_the_last_word_read_as_topic(scores, span):
    assert topic_run(scores) == span


def test_a_long_description_keeps_its_parts():
    """Its joins ("(", "or", "e.g.") sit between topic words: the whole description is the topic."""
    text = "learning from noisy labels (label proportions, positive-unlabeled data or partial labels)"
    span = load_topic_reader().span(text)
    assert span is not None and span.endswith("partial labels") and "noisy labels" in span


def test_a_missing_or_broken_model_is_a_one_line_error(tmp_path):
    load_topic_reader.cache_clear()
    try:
        with pytest.raises(ModelError, match="RAG_TOPIC_CUT=keywords"):
            load_topic_reader(tmp_path / "absent.json.gz")
        broken = tmp_path / "broken.json.gz"
        broken.write_bytes(gzip.compress(b'{"weights": 3}'))
        with pytest.raises(ModelError, match="cannot read"):
            load_topic_reader(broken)
    finally:
        load_topic_reader.cache_clear()


def test_the_model_is_the_file_its_card_names_and_says_how_it_was_fitted():
    card = (TOPIC_SPAN_PATH.parent / "MODEL_CARD.md").read_text(encoding="utf-8")
    (digest,) = re.findall(r"`topic_span.json.gz` ([0-9a-f]{64})", card)
    assert hashlib.sha256(TOPIC_SPAN_PATH.read_bytes()).hexdigest() == digest
    with gzip.open(TOPIC_SPAN_PATH, "rt", encoding="utf-8") as f:
        data = json.load(f)
    # Fitted on the spent phrasing sets, never on the one it is reported on (evals/phrasings.py).
    fitted = {f.rsplit("/", 1)[-1] for f in data["fitted_on"]}
    assert "phrasings_heldout28.txt" in fitted
    assert not {"phrasings_heldout29.txt", "phrasings_heldout30.txt"} & fitted


def test_the_pipeline_judges_a_wrapped_request_on_the_topic_the_reader_finds(seed_store, seed_settings):
    """ "search: X" was judged on "search: X" (a paper had to hold "search"); the reader's topic is X, and
    RAG_TOPIC_CUT=keywords is the old cut."""
    from rag.pipeline import Pipeline
    from rag.query import parse

    store, embedder = seed_store
    pipeline = Pipeline(store, embedder, seed_settings)
    question = "search: spiking neural networks"
    assert pipeline.retrieve(parse(question)).query.topic == "spiking neural networks"
    rules = replace(pipeline.policy, topic_reader=False)
    assert pipeline.retrieve(parse(question), policy=rules).query.topic == "search: spiking neural networks"


def test_the_setting_chooses_the_cut():
    from rag.config import Settings
    from rag.policy import Policy

    assert Policy.from_settings(Settings(reranker=False)).topic_reader
    assert not Policy.from_settings(Settings(reranker=False, topic_cut="keywords")).topic_reader
