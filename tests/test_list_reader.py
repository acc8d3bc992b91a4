"""The list reader (rag/models/list_reader, `python -m train.fit_list_reader`): whether a question asks for the
papers on a topic or about one paper, read by one model from the question's MiniLM vector. Hand-built questions
in wordings no request-word rule reads, through the model alone and through the whole pipeline on the seeds."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from rag.config import Settings
from rag.embedding import OnnxMiniLM
from rag.errors import ModelError
from rag.policy import LIST_READER_DIR, Policy, load_list_reader
from rag.query import LIST_EVIDENCE, clean_question, list_evidence, parse

READER = load_list_reader()


def reads_as_list(question: str) -> bool:
    text = clean_question(question)
    return READER.asks_for_list([*OnnxMiniLM().embed([text])[0], *list_evidence(text)])


@pytest.mark.parametrize(
    "question",
    [
        "lit search: hyperbolic embeddings",
        "who has published on federated learning?",
        "anything here about graph neural networks and adversarial robustness?",
    ],
)
def test_a_request_for_the_papers_on_a_topic_is_a_list_however_it_is_worded(question):
    assert not parse(question).wants_list  # no request word of rag.query's rules is in it
    assert reads_as_list(question)


@pytest.mark.parametrize(
    "question",
    [
        "I remember a paper where a robot hand learns to grasp from a single demonstration, which one was it?",
        "what FID does DiVeQ reach on ImageNet?",
        "how do PURGE and Sharp MinMax differ?",
        "what is CAMEL?",
    ],
)
def test_a_question_about_one_paper_or_named_papers_is_no_list(question):
    assert not reads_as_list(question)


def test_the_rules_setting_reads_lists_by_the_request_words():
    assert Policy.from_settings(Settings(list_reader="rules")).list_reader is None
    assert Policy.from_settings(Settings()).list_reader is not None


def test_a_malformed_reader_file_is_one_line_naming_it(tmp_path):
    data = json.loads((LIST_READER_DIR / "list_reader.json").read_text(encoding="utf-8"))
    del data["bias"]
    (tmp_path / "list_reader.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ModelError, match=r"list_reader\.json is malformed") as caught:
        load_list_reader(tmp_path)
    assert "\n" not in str(caught.value)
    with pytest.raises(ModelError, match="RAG_LIST_READER=rules"):
        load_list_reader(tmp_path / "missing")


def test_the_reader_was_fitted_on_spent_sets_only():
    data = json.loads((LIST_READER_DIR / "list_reader.json").read_text(encoding="utf-8"))
    fitted = set(data["fitted_on"])
    assert not fitted & {"heldout.jsonl", "sealed11.jsonl", "phrasings_heldout9.txt"}
    assert len(data["weights"]) == OnnxMiniLM.dimension + len(LIST_EVIDENCE)
    # Each set was predicted by a model fitted on the others; the rules' reading of the same questions is kept.
    assert min(data["by_set"].values()) > 0.8
    assert sum(data["by_set"].values()) > sum(data["rules_by_set"].values())


def test_a_topic_asked_without_request_words_is_answered_as_a_list(seed_settings):
    from rag import Papers

    question = "who has published on machine unlearning?"
    by_model = Papers(settings=seed_settings).ask(question)
    by_rules = Papers(settings=replace(seed_settings, list_reader="rules")).ask(question)
    assert by_model.query.wants_list and not by_rules.query.wants_list
    assert by_model.answer.startswith(f"{len(by_model.citations)} papers match")
    # The three unlearning papers of the seeds; read as about one paper, the rules' answer quotes two.
    assert {"001-02", "001-15", "001-18"} <= set(by_model.citations)


def test_the_model_card_names_the_packaged_file():
    import hashlib

    card = (LIST_READER_DIR / "MODEL_CARD.md").read_text(encoding="utf-8")
    digest = hashlib.sha256((LIST_READER_DIR / "list_reader.json").read_bytes()).hexdigest()
    assert f"`{digest}`" in card
