"""Questions about a paper's record, not its abstract (rag.record): who wrote it, where its code is, how it was decided.

The store holds decisions and links, no authors; an abstract may write a code link. Each question is asked through
the whole path (the real MiniLM reads which field is asked, the real cross-encoder finds the paper), against the
seed store and the 19 real ICLR records of tests/data/iclr_unlearning_sample.jsonl (titles and decisions).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag import Papers
from rag.cli import app
from rag.conversation import PastTurn
from rag.record import holds, not_held, without_names
from rag.types import Source

runner = CliRunner()
SAMPLE = Path(__file__).parent / "data" / "iclr_unlearning_sample.jsonl"


@pytest.fixture(scope="module")
def sample_only(tmp_path_factory) -> Path:
    """A store of the 19 sample records alone: real titles and every kind of decision."""
    target = tmp_path_factory.mktemp("record-store") / "store"
    result = runner.invoke(app, ["ingest", str(SAMPLE), "--store", str(target)])
    assert result.exit_code == 0, result.output
    return target


def test_who_wrote_a_paper_is_told_the_store_holds_no_authors_with_the_paper_and_its_link(seed_store_dir):
    answer = Papers(store=seed_store_dir).ask("Who wrote DiffSDA, and which lab is it from?")
    assert answer.abstained and answer.citations == []
    # DiffSDA is written by 002-17 only, which the cross-encoder ranks third for "who wrote …": the paper named.
    assert answer.sources[0].id == "002-17"
    assert "no authors or affiliations" in answer.answer and "002-17" in answer.answer
    assert "https://openreview.net/forum?id=tooDJHBSvO" in answer.answer
    assert "\n" not in answer.answer


def test_a_decision_is_answered_from_the_record_citing_the_paper(seed_store_dir):
    answer = Papers(store=seed_store_dir).ask("was DiVeQ an oral or a poster?")
    assert not answer.abstained
    assert answer.citations == ["000-01"]
    assert answer.answer.startswith("[000-01] was accepted as a poster at ICLR 2026.")


def test_a_code_link_the_abstract_writes_is_quoted(seed_store_dir):
    answer = Papers(store=seed_store_dir).ask("where can I find the code for SelKD?")
    assert answer.citations == ["004-14"]
    assert "https://github.com/machoshi/SelKD" in answer.answer


def test_a_code_link_no_abstract_writes_is_refused_with_the_papers_page(seed_store_dir):
    answer = Papers(store=seed_store_dir).ask("is there a github link for the FeDaL code?")
    assert answer.abstained and answer.citations == []
    assert "the abstract of 000-11 gives no code link" in answer.answer
    assert "https://openreview.net/forum?id=HK6t5x5gJq" in answer.answer


def test_a_code_link_asked_by_a_name_other_abstracts_write_is_asked_of_the_named_paper(seed_store_dir):
    """The name "GitHub" is written by every abstract giving a link: the paper asked about is the one writing
    "FeDaL", ranked below the five shown, not the closest paper with a GitHub link (whose link was given as FeDaL's)."""
    answer = Papers(store=seed_store_dir).ask("is there a GitHub link for the FeDaL code?")
    assert answer.abstained and answer.citations == [] and answer.sources[0].id == "000-11"
    assert "the abstract of 000-11 gives no code link" in answer.answer and "github.com" not in answer.answer


def test_how_to_cite_a_paper_is_answered_with_its_bibtex_entry_citing_it(seed_store_dir):
    """It quoted the paper's method ("DiffSDA leverages a new probabilistic modeling …")."""
    answer = Papers(store=seed_store_dir).ask("how do I cite the DiffSDA paper?")
    assert answer.query.asks_record == "bibtex" and not answer.abstained
    assert answer.citations == ["002-17"] and answer.answer.startswith("BibTeX for [002-17]:")
    assert "@inproceedings{" in answer.answer
    assert "url       = {https://openreview.net/forum?id=tooDJHBSvO}" in answer.answer


def test_a_paper_named_below_the_shown_ones_is_still_the_one_asked_of(seed_store_dir):
    """ "bibtex for PURGE": the topic is "bibtex", which no abstract writes, and the cross-encoder reading it ranks
    PURGE's paper below k; the paper the question names by a word only it writes is the one cited."""
    answer = Papers(store=seed_store_dir).ask("bibtex for PURGE")
    assert answer.citations == ["001-02"] and answer.sources[0].id == "001-02"
    assert "@inproceedings{paper2026-001-02," in answer.answer


@pytest.mark.parametrize(
    ("question", "paper", "field"),
    [
        ("who wrote SelKD, the selective distillation method built on inverse optimal transport?", "004-14", "authors"),
        ("is TRACE (instance edges from text-to-image diffusion) on github?", "001-04", "code"),
    ],
)
def test_a_request_beside_a_description_of_its_paper_is_read_from_its_own_clause(
    seed_store_dir, question, paper, field
):
    """Read whole, the description drowns the request (cosine under the bar): the field was not read."""
    answer = Papers(store=seed_store_dir).ask(question)
    assert answer.query.asks_record == field and answer.sources[0].id == paper


def test_a_link_asked_for_is_the_papers_page(seed_store_dir):
    answer = Papers(store=seed_store_dir).ask("pdf of DiVeQ please")
    assert answer.query.asks_record == "link" and answer.citations == ["000-01"]
    assert answer.answer == "[000-01] (ICLR 2026): https://openreview.net/forum?id=KRVnpTbx7R"


@pytest.mark.parametrize(
    "question",
    [
        "which papers study unlearning?",
        "what is DiVeQ?",
        "for DemoGrasp and FSD, what real-world robot results do the authors report?",
        "How many lines of code do you have to change in the standard LlamaAttention implementation to apply "
        "ZeroTuning?",
        "Which multi-view clustering papers were accepted at ICLR 2026?",
        "which papers in this collection are from ICLR 2025?",
        # Close to "who wrote it?" by meaning (0.53), but no paper is named: papers are asked for.
        "who has published on machine unlearning?",
        # "LLMs" is written by many papers: it names none of them.
        "who has written about LLMs?",
    ],
)
def test_questions_about_what_abstracts_say_are_not_read_as_record_questions(seed_store_dir, question):
    answer = Papers(store=seed_store_dir).ask(question)
    assert answer.query.asks_record is None
    assert "no authors" not in answer.answer and "no code link" not in answer.answer


def test_a_titled_store_answers_each_decision_and_names_the_title(sample_only):
    papers = Papers(store=sample_only)
    poster = papers.ask("was MUSE an oral or a poster?")
    assert poster.citations == ["TArmA033BU"] and "was accepted as a poster" in poster.answer
    rejected = papers.ask("was MU-Bench accepted as an oral or a poster?")  # desk rejected
    assert rejected.citations == ["O9W9DesXid"] and "was rejected" in rejected.answer
    unknown = papers.ask("was the PII regurgitation paper an oral or a poster?")
    assert unknown.abstained and "the store holds no decision for 5sq3T1as2g" in unknown.answer
    authors = papers.ask("who are the authors of MUSE?")
    assert authors.abstained and "“MUSE: Machine Unlearning Six-Way Evaluation for Language Models”" in authors.answer


@pytest.mark.parametrize(
    ("question", "paper", "said"),
    [
        ("Was 'Machine Unlearning via Simulated Oracle Matching' an oral or a poster?", "3vXpZpOn29", "a poster"),
        (
            "what was the decision on Improved Localized Machine Unlearning Through the Lens of Memorization?",
            "2m5XI3nM46",
            "was rejected",
        ),
        ("who wrote unlearning-based neural interpretations", "PBjCTeDL6o", "no authors or affiliations"),
    ],
)
def test_a_paper_named_by_its_title_is_asked_its_record(sample_only, question, paper, said):
    answer = Papers(store=sample_only).ask(question)
    assert answer.sources[0].id == paper and said in answer.answer


def test_a_question_about_what_a_titled_paper_says_is_not_a_record_question(sample_only):
    answer = Papers(store=sample_only).ask("what does 'Data Unlearning in Diffusion Models' propose?")
    assert answer.query.asks_record is None and "SuHScQv5gP" in answer.citations


def test_a_follow_up_asks_the_record_of_the_paper_in_focus(seed_store_dir):
    papers = Papers(store=seed_store_dir)
    first = papers.ask("what is DiVeQ?")
    history = [PastTurn("what is DiVeQ?", first.answer)]
    authors = papers.ask("who wrote it?", history=history)
    assert authors.abstained and "no authors or affiliations; the paper asked about is 000-01" in authors.answer
    decided = papers.ask("was it an oral or a poster?", history=history)
    assert decided.citations == ["000-01"] and "accepted as a poster" in decided.answer
    # The follow-up's standalone wording is "and a link to this paper?": read as the user wrote it, "it".
    linked = papers.ask("and a link to it?", history=history)
    assert linked.query.asks_record == "link" and linked.citations == ["000-01"]
    assert "https://openreview.net/forum?id=" in linked.answer


def test_a_record_answer_needs_no_llm(seed_store_dir, monkeypatch):
    # An endpoint nothing listens on: the decision is the store's, so the answer neither calls it nor warns.
    monkeypatch.setenv("RAG_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    answer = Papers(store=seed_store_dir).ask("was DiVeQ an oral or a poster?", backend="openai")
    assert answer.citations == ["000-01"] and answer.warnings == []


def test_the_asked_field_is_read_without_the_papers_own_names():
    paper = Source("x", None, 2026, "ICLR", 0.5, "", abstract="We propose DiVeQ, a quantizer.", status="unknown")
    assert without_names("Who wrote DiVeQ? Is it on GitHub?", paper.text) == "Who wrote it? Is it on GitHub?"
    assert not holds("decision", paper) and not holds("code", paper) and not holds("authors", paper)
    assert holds("bibtex", paper) and not holds("link", paper)  # an entry is written from any record; no url here
    title = "Machine Unlearning via Simulated Oracle Matching"
    asked = "was 'machine unlearning via simulated oracle matching' accepted?"
    assert without_names(asked, "", title, 4) == "was 'it' accepted?"
    assert (
        without_names("which papers study machine unlearning?", "", title, 4)
        == "which papers study machine unlearning?"
    )


def test_authors_asked_of_a_paper_not_found_still_say_no_store_holds_authors():
    said = not_held("authors", None, ("PURGE",))
    assert said == "they hold no authors or affiliations, and no paper found writes PURGE."
