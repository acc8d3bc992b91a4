"""Follow-up resolution in `rag chat`, as pure functions: cases the mutation check (tests/mutate.py) found that
no test guarded. What a follow-up resolves to is what the chat prints ("↳ searching: …") and searches."""

from __future__ import annotations

import pytest

from rag.followups import (
    HISTORY_TURNS,
    ChatState,
    Resolution,
    ResolveError,
    apply_condensed,
    candidate_ids,
    mentions,
    parse_condensed,
    remember,
    resolve,
)
from rag.query import parse
from rag.types import Answer, Source

LISTED = ["001-02", "001-18", "001-15"]  # "which papers study unlearning?", as listed
KNOWN = {"001-02", "003-04", "KRVnpTbx7R", "QzPqLmN8sT"}  # ids the store holds


def conversation(**changes) -> ChatState:
    """After "which papers study unlearning?" listed and cited three papers."""
    state = ChatState(k=5, backend="extractive", topic="which papers study unlearning?")
    state.listing, state.focus = list(LISTED), list(LISTED)
    for name, value in changes.items():
        setattr(state, name, value)
    return state


def answered(cited: list[str], shown: list[str] | None = None) -> Answer:
    sources = [Source(pid, None, 2026, None, 0.5, "snippet", "Abstract.") for pid in shown or cited]
    return Answer(parse("q"), " ".join(f"[{pid}]" for pid in cited), cited, sources, not cited, "extractive")


# -- ids -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("question", ["what datasets does [001-02] use?", "what datasets does 001-02 use?"])
def test_an_id_in_a_question_becomes_this_paper_in_the_search(question):
    resolution = resolve(question, conversation(), KNOWN)
    assert resolution == Resolution("what datasets does this paper use?", ("001-02",), None, opens_topic=False)


def test_two_ids_become_these_papers_once():
    resolution = resolve("which datasets do [001-02] and [003-04] use?", conversation(), KNOWN)
    assert resolution.query == "which datasets do these papers use?"
    assert resolution.paper_ids == ("001-02", "003-04")


def test_ids_glued_to_a_bracket_are_both_found():
    assert resolve("compare [001-02]003-04", conversation(), KNOWN).paper_ids == ("001-02", "003-04")
    assert resolve("compare 003-04[001-02]", conversation(), KNOWN).paper_ids == ("003-04", "001-02")


def test_openreview_ids_are_references_not_topic_words():
    # "KRVnpTbx7R" reads as a word; it must not turn "tell me more" into a search for that word.
    more = resolve("tell me more about KRVnpTbx7R", conversation(), KNOWN)
    assert more == Resolution("main contribution and results", ("KRVnpTbx7R",), None, True, False)
    both = resolve("compare KRVnpTbx7R and QzPqLmN8sT", conversation(), KNOWN)
    assert both.paper_ids == ("KRVnpTbx7R", "QzPqLmN8sT") and both.about_papers


def test_a_bracketed_id_without_a_digit_is_still_looked_up():
    assert candidate_ids("what does [HxnNwPqLzA] claim?") == ["HxnNwPqLzA"]


def test_an_unknown_bracketed_id_is_an_error_and_bracketed_words_are_not_ids():
    with pytest.raises(ResolveError, match="no paper with id 'KRVnpTbx7R' in the store"):
        resolve("tell me about [KRVnpTbx7R]", conversation(), set())
    resolution = resolve("what is [the benchmark] they use?", conversation(), set())
    assert resolution.paper_ids == tuple(LISTED)


# -- ordinals, pronouns, "compare", "why?" -----------------------------------------------------------------


def test_an_ordinal_range_with_a_question_becomes_these_papers():
    resolution = resolve("what datasets do the first two use?", conversation())
    assert resolution == Resolution("what datasets do these papers use?", ("001-02", "001-18"), None, False, False)


def test_a_number_after_an_ordinal_is_not_a_second_reference():
    # "paper 2" would read as "#2", but "the third paper" already took those words
    resolution = resolve("is the third paper 2 years older?", conversation())
    assert resolution == Resolution("is this paper 2 years older?", ("001-15",), None, False, False)


@pytest.mark.parametrize("question", ["tell me about the Second one", "and the SECOND paper?"])
def test_ordinals_in_any_case(question):
    assert resolve(question, conversation()).paper_ids == ("001-18",)


def test_they_means_the_two_papers_in_focus():
    resolution = resolve("what datasets do they use?", conversation(focus=["001-02", "001-18"]))
    assert resolution == Resolution("what datasets do these papers use?", ("001-02", "001-18"), None, False, False)


def test_after_an_abstention_it_means_the_first_closest_paper():
    # An abstention cites nothing (no focus); its closest papers are the list on screen.
    state = conversation(focus=[], listing=["004-01", "004-02"])
    assert resolve("what datasets does it use?", state).paper_ids == ("004-01",)
    assert resolve("why?", state).paper_ids == ("004-01",)
    assert resolve("what is the difference?", state).paper_ids == ("004-01", "004-02")


@pytest.mark.parametrize(
    ("focus", "expected"),
    [
        (["001-18"], tuple(LISTED)),  # one paper in focus: the difference is among the listed papers
        (["001-02", "001-18"], ("001-02", "001-18")),  # several in focus: among those
    ],
)
def test_what_is_the_difference_compares_the_papers_in_focus_or_the_list(focus, expected):
    resolution = resolve("what is the difference?", conversation(focus=focus))
    assert resolution == Resolution("unlearning", expected, None, about_papers=True, opens_topic=False)


def test_a_bare_why_is_about_the_paper_in_focus():
    assert resolve("why?", conversation(focus=["001-18"])) == Resolution(
        "unlearning", ("001-18",), None, about_papers=True, opens_topic=False
    )


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("what's it about?", Resolution("unlearning", ("001-18",), None, True, False)),  # the "s" is no topic
        ("what is its F1?", Resolution("what is this paper's F1?", ("001-18",), None, False, False)),
    ],
)
def test_short_words_count_as_a_question_from_two_letters(question, expected):
    assert resolve(question, conversation(focus=["001-18"])) == expected


# -- years ---------------------------------------------------------------------------------------------------


def test_a_new_subject_with_its_own_year_searches_that_year_without_the_number():
    resolution = resolve("and 2025 diffusion models?", conversation(topic_year=2024))
    assert resolution == Resolution("which papers study diffusion models?", (), 2025, opens_topic=True)


def test_any_year_lifts_the_sticky_year_and_is_not_searched_for():
    state = conversation(year=2025, topic_year=2025)
    assert resolve("and in any year?", state) == Resolution("which papers study unlearning?", (), None)
    subject = resolve("what about diffusion models in any year?", state)
    assert subject.year is None and "diffusion models" in subject.query and "year" not in subject.query


def test_a_follow_up_of_two_years_asks_the_same_question_over_both_and_any_year_lifts_them():
    """It re-asked the topic with no year at all."""
    state = conversation()
    both = resolve("and from 2025 or 2026?", state)
    query = both.to_query()
    assert (query.search, query.year, query.since, query.until) == ("unlearning", None, 2025, 2026)
    state.topic = both.query
    assert resolve("and 2026 only?", state).to_query().year == 2026
    lifted = resolve("and in any year?", state).to_query()
    assert (lifted.year, lifted.since, lifted.until) == (None, None, None) and lifted.search == "unlearning"


def test_a_new_question_with_two_years_is_read_as_both_whatever_year_stuck():
    """It was read as its last year (find_year), over the range the question's own parse gives."""
    state = ChatState(k=5, backend="extractive", year=2025)
    resolution = resolve("which papers study diffusion at ICLR 2025 or 2026?", state)
    query = resolution.to_query()
    assert (resolution.year, query.year, query.since, query.until) == (None, None, 2025, 2026)
    assert resolution.describe() == "↳ searching: diffusion · years 2025-2026"  # the dimmed line says so


def test_a_new_question_with_its_own_year_overrides_the_sticky_year():
    resolution = resolve("which papers study unlearning in 2025?", ChatState(k=5, backend="extractive", year=2026))
    assert resolution.year == 2025


# -- remembering the conversation -----------------------------------------------------------------------------


def test_a_drill_down_focuses_on_what_its_answer_cited_or_else_on_the_papers_asked_about():
    state = conversation()
    about = Resolution("unlearning", ("001-02", "001-18"), about_papers=True, opens_topic=False)
    remember(state, "compare the first two", about, answered(["001-18"], ["001-02", "001-18"]))
    assert state.focus == ["001-18"]
    remember(state, "compare the first two", about, answered([], ["001-02", "001-18"]))
    assert state.focus == ["001-02", "001-18"]  # an abstention cites nothing: the papers asked about stay


def test_a_first_question_about_a_named_paper_starts_the_list():
    state = ChatState(k=5, backend="extractive")
    drill = Resolution("what does PURGE reach on RWKU?", ("001-02",), opens_topic=False)
    answer = answered(["001-02"])
    remember(state, "what does PURGE reach on RWKU?", drill, answer)
    assert state.listing == ["001-02"]  # "the first one" now has a list to count in
    assert state.last is answer and state.last_query is drill  # what /sources shows


def test_the_conversation_keeps_the_last_exchanges_only():
    state = ChatState(k=5, backend="extractive")
    for n in range(HISTORY_TURNS + 2):
        remember(state, f"question {n}", Resolution(f"question {n}"), answered([f"00{n}-01"]))
    assert [e.question for e in state.history] == [f"question {n}" for n in range(2, HISTORY_TURNS + 2)]


# -- the LLM's rewrite, and whether the named papers speak to the question ----------------------------------


def test_a_rewrite_of_up_to_500_characters_is_used():
    assert parse_condensed("x" * 500) == "x" * 500
    assert parse_condensed("x" * 501) is None


def test_a_rewrite_keeps_the_papers_the_rules_found_and_otherwise_only_changes_the_wording():
    state = conversation()
    # The rules resolved "the second one"; the LLM's rewrite naming another paper does not override them.
    rules = Resolution("unlearning", ("001-18",), about_papers=True, opens_topic=False)
    rewritten = apply_condensed(rules, "What does [001-02] claim?", state)
    assert rewritten == Resolution("What does [001-02] claim?", ("001-18",), None, True, False)
    narrowed = apply_condensed(Resolution("and diffusion?", year=2025), "Which papers study diffusion?", state)
    assert narrowed == Resolution("Which papers study diffusion?", (), 2025, opens_topic=True)


def test_mentions_finds_a_word_or_its_singular():
    abstract = "We evaluate on the RWKU benchmark and two dataset suites."
    assert mentions(["rwku"], abstract) is True
    assert mentions(["datasets"], abstract) is True  # the singular counts
    assert mentions(["imagenet", "results"], abstract) is False


@pytest.mark.parametrize(
    "topic",
    [
        "which papers study unlearning from ICLR 2025 or 2026?",
        "papers on unlearning, 2025 or 2026",
        "between 2025 and 2026, which papers study unlearning?",  # was searched as "between diffusion?"
    ],
)
def test_a_new_subject_after_two_years_keeps_them_unless_it_names_its_own(topic):
    """ "what about diffusion?" after a question over 2025 and 2026 searched diffusion in every year: the range
    lives in the topic's words, and the new subject replaced them."""
    state = ChatState(k=5, backend="extractive", topic=topic, listing=["000-01"])
    kept = resolve("what about diffusion?", state).to_query()
    assert (kept.search, kept.year, kept.since, kept.until) == ("diffusion", None, 2025, 2026)
    own = resolve("what about diffusion in 2026?", state)
    assert (own.to_query().search, own.year, own.to_query().since) == ("diffusion", 2026, None)
    assert "2025" not in own.query and not own.query.endswith((" in", " from"))
    lifted = resolve("what about diffusion in any year?", state).to_query()
    assert (lifted.search, lifted.year, lifted.since, lifted.until) == ("diffusion", None, None, None)


def test_a_clause_leaving_papers_out_narrows_the_previous_question():
    state = conversation(topic="clustering papers")
    assert resolve("but not the multi-view ones", state) == Resolution(
        "clustering papers, but not the multi-view ones", (), None, opens_topic=True
    )
    # A term of the field is no clause: "and skip connections?" is the question asked of a new subject.
    assert resolve("and skip connections?", state).query == "skip connections papers"
