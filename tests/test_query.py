"""`rag.query.parse`: what a question asks, decided once (search text, year, venue, list or one, terms, names)."""

from __future__ import annotations

import pytest

from rag.errors import InputError
from rag.query import exclusion, normalize_venue, parse
from rag.terms import keyword_pair
from rag.wire import query_json


@pytest.mark.parametrize(
    ("question", "search", "year", "venue", "wants_list"),
    [
        # The four disagreements the stages used to have: each is now one answer.
        ("papers on diffusion in 2025", "diffusion", 2025, None, True),
        ("list the ICLR 2025 work on unlearning", "unlearning", 2025, "ICLR 2025", True),
        ("which paper studies unlearning?", "unlearning", None, None, False),
        ("which papers study unlearning?", "unlearning", None, None, True),
        # Years and venues written in the question, in any case.
        ("which iclr 2026 papers study clustering?", "clustering", 2026, "ICLR 2026", True),
        ("Which NeurIPS'2025 papers use diffusion?", "diffusion", 2025, "NeurIPS 2025", True),
        ("which ICLR'26 papers study unlearning?", "unlearning", 2026, "ICLR 2026", True),  # the shorthand
        ("iclr ’25 papers on clustering", "clustering", 2025, "ICLR 2025", True),
        ("what does ICLR'26x report?", "what does ICLR'26x report", None, None, False),  # not a year
        ("graph transformers from 2025?", "graph transformers", 2025, None, False),
        ("2025 papers on reinforcement learning", "reinforcement learning", 2025, None, True),
        # "only" with a year, and a year opening or closing the question, restrict too; the words go with it.
        ("which papers study unlearning? only 2025", "unlearning", 2025, None, True),
        ("contrastive learning theory, 2026 only", "contrastive learning theory", 2026, None, False),
        ("2026 multi view clustering papers", "multi view clustering", 2026, None, True),
        ("clustering papers, 2025?", "clustering", 2025, None, True),
        # A year inside a name or a number is not a filter, nor one after a name ("WMT 2014").
        ("which papers report BLEU on WMT 2014?", "report BLEU on WMT 2014", None, None, True),
        ("results on ImageNet 2012", "results on ImageNet 2012", None, None, False),
        ("what does GPT-2025 report?", "what does GPT-2025 report", None, None, False),
        ("results of Model2025 on ImageNet", "results of Model2025 on ImageNet", None, None, False),
        ("accuracy of 2025.5 points", "accuracy of 2025.5 points", None, None, False),
        ("what is ResNet50 used for?", "what is ResNet50 used for", None, None, False),
        # One paper or several.
        ("what benchmark does the brain tumor segmentation paper use?", None, None, None, False),
        ("which datasets does the PURGE paper use?", None, None, None, False),
        ("what methods reduce hallucination?", None, None, None, True),
        ("are there any works on federated unlearning?", None, None, None, True),
        ("show me recent studies of protein design", None, None, None, True),
        ("what is DiVeQ?", "what is DiVeQ", None, None, False),
        ("find the paper that introduces DiVeQ", None, None, None, False),
        ("hyperbolic embeddings papers", "hyperbolic embeddings", None, None, True),
        ("the unlearning paper", None, None, None, False),  # "paper" ending a phrase asks for one
        ("a diffusion paper?", None, None, None, False),
    ],
)
def test_parse(question, search, year, venue, wants_list):
    query = parse(question)
    if search is not None:
        assert query.search == search
    assert (query.year, query.venue, query.wants_list) == (year, venue, wants_list)
    assert query_json(query) == {
        "search": query.search,
        "year": year,
        "since": None,
        "until": None,
        "venue": venue,
        "area": None,
        "status": None,
        "list": wants_list,
        "excluding": None,
        "excluded": [],
    }


def test_flags_win_over_the_question_and_venues_take_the_stored_form():
    query = parse("which ICLR 2025 papers study clustering?", year=2026, venue="iclr 2026")
    assert (query.year, query.venue, query.search) == (2026, "ICLR 2026", "clustering")
    assert normalize_venue("  neurips  2024 ") == "NeurIPS 2024"
    assert normalize_venue("ICML'2023") == "ICML 2023"
    assert normalize_venue("iclr'26") == "ICLR 2026"
    assert normalize_venue("Workshop on  Foo") == "Workshop on Foo"  # unknown venues are kept as written


def test_terms_and_names():
    query = parse("how does SF-DiVeQ compare with PURGE on ImageNet-1k?")
    assert query.names == ("SF-DiVeQ", "PURGE", "ImageNet-1k")
    assert {"sf-diveq", "purge", "imagenet-1k", "compare"} <= query.terms
    assert not {"how", "does", "with", "on"} & query.terms


def test_the_question_is_cleaned_and_an_empty_one_refused():
    assert parse("  which\x00papers\tstudy   unlearning? ").text == "which papers study unlearning?"
    with pytest.raises(InputError, match="the question is empty"):
        parse(" \x00 \n ")


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("what is CAMEL?", "CAMEL"),
        ("What are QUANNs", "QUANNs"),
        ("MinPV principle - what is it", "MinPV"),
        ("what does STOD stand for?", "STOD"),
        ("what is the best optimizer for transformers?", None),  # no coined name
        ("what is PURGE and how does it compare to Sharp MinMax?", None),  # more than the name's meaning
        ("what zero-shot imagenet accuracy does PHyCLIP report?", None),  # a detail, not a definition
    ],
)
def test_a_question_asking_what_a_coined_name_is_says_which_name(question, name):
    assert parse(question).defines == name


@pytest.mark.parametrize(
    "question",
    [
        "is there work on hyperbolic embeddings?",
        "has anyone studied hyperbolic embeddings?",
        "what has been published on hyperbolic embeddings?",
        "I am looking for papers on hyperbolic embeddings",
        "could you recommend some papers on hyperbolic embeddings?",
        "I'm writing a related work section on hyperbolic embeddings, what should I cite?",
        "Give me an overview of the literature on hyperbolic embeddings",
        "hyperbolic embeddings papers pls",
        "do any papers study hyperbolic embeddings?",
    ],
)
def test_a_request_for_papers_in_other_words_is_read_as_which_papers_study(question):
    query = parse(question)
    assert (query.search, query.wants_list, query.is_topic) == ("hyperbolic embeddings", True, True)


@pytest.mark.parametrize(
    ("question", "search"),
    [
        ("papers on kernel methods", "kernel methods"),  # a request word that ends a topic stays
        ("operations research papers", "operations research"),
        ("reading comprehension papers", "reading comprehension"),
        ("papers on neural architecture search", "neural architecture search"),
        ("what is DiVeQ?", "what is DiVeQ"),  # no request for papers: nothing trimmed
        ("does PURGE use RWKU?", "does PURGE use RWKU"),
        # a detail asked about sota models is not a request for papers
        (
            "what balanced accuracy do sota llms get on vulnerability detection",
            "what balanced accuracy do sota llms get on vulnerability detection",
        ),
    ],
)
def test_trimming_a_request_keeps_the_topic_whole(question, search):
    assert parse(question).search == search
    assert not parse(question).wants_list or "papers" in question


def test_a_list_question_names_a_topic_however_many_alternatives_it_lists():
    query = parse(
        "which papers study hyperbolic embeddings, graph transformers, diffusion models, unlearning and clustering?"
    )
    assert len(query.search.split()) > 8 and query.is_topic


@pytest.mark.parametrize(
    ("question", "since", "search"),
    [
        ("what's been published on machine unlearning since 2021?", 2021, "machine unlearning"),
        ("machine unlearning refs, nothing older than 2020 if possible", 2020, "machine unlearning"),
        ("recent unlearning work, 2023 onwards", 2023, "unlearning"),
        ("2024+ papers on unlearning", 2024, "unlearning"),
        ("unlearning papers published after 2024", 2025, "unlearning"),  # after a year: the years after it
    ],
)
def test_a_lower_bound_on_the_year_is_read_as_one_not_as_that_year(question, since, search):
    query = parse(question)
    assert (query.since, query.year) == (since, None) and search in query.search.lower()


@pytest.mark.parametrize(
    ("question", "since", "until", "search"),
    [
        # read as ICLR 2025 alone, a list of the store's two years lost its 2026 papers
        ("any work on machine unlearning from iclr 2025 or 2026?", 2025, 2026, "machine unlearning"),
        ("Are there any ICLR 2025 or 2026 papers on clustering? If so, please list them.", 2025, 2026, "clustering"),
        ("iclr 2025/26 clustering", 2025, 2026, "clustering"),
        ("ICLR 2025 and ICLR 2026 papers on RL", 2025, 2026, "rl"),
        ("papers on diffusion 2024-2026", 2024, 2026, "diffusion"),
        ("between 2024 and 2026, unlearning papers", 2024, 2026, "unlearning"),
        ("2026 or 2025 clustering papers", 2025, 2026, "clustering"),
        ("papers from 2023, 2024 or 2025 on RL", 2023, 2025, "rl"),
        ("ICLR'25/'26 papers on unlearning", 2025, 2026, "unlearning"),  # shorthand years: read as ICLR 2025
        ("unlearning at iclr '25 or '26", 2025, 2026, "unlearning"),
        ("ICLR 2025 + 2026 papers about unlearning", 2025, 2026, "unlearning"),  # read as ICLR 2025
    ],
)
def test_two_years_joined_are_the_years_from_the_first_to_the_last_of_any_venue(question, since, until, search):
    query = parse(question)
    assert (query.year, query.venue, query.since, query.until) == (None, None, since, until)
    assert search in query.search.lower() and not any(ch.isdigit() for ch in query.search)


@pytest.mark.parametrize(
    "question",
    [
        "ImageNet 2012 and 2014 results",  # years of a name
        "in 2019, 20 papers studied pruning",  # a year, then a number
        "models released 2024-05 on the hub",  # a year and a month
        "what did the 2020-2021 pandemic papers find",  # no year phrase: a name for a period
        "embeddings with 2048 or 2049 dims",  # numbers
        "accuracy on 2024, 2025 results",
    ],
)
def test_joined_numbers_that_restrict_no_papers_are_no_range(question):
    query = parse(question)
    assert (query.since, query.until) == (None, None)


@pytest.mark.parametrize("question", ["papers from 2025 on unlearning", "unlearning papers from 2025"])
def test_a_year_with_from_or_on_is_that_year(question):
    assert (parse(question).year, parse(question).since) == (2025, None)


@pytest.mark.parametrize(
    ("question", "venue", "search"),
    [
        ("iclr26 only: which submissions propose multi-view clustering methods?", "ICLR 2026", "multi-view clustering"),
        ("ICLR 25 papers on knowledge distillation", "ICLR 2025", "knowledge distillation"),
        ("unlearning at ICLR'26", "ICLR 2026", "unlearning"),
    ],
)
def test_a_venue_with_a_two_digit_year_glued_or_apart_restricts_the_search(question, venue, search):
    """ "iclr26" was read as a coined name no paper writes, and the question refused (two sealed sets wrote it)."""
    query = parse(question)
    assert (query.venue, query.year) == (venue, int(venue[-4:])) and search in query.search.lower()
    assert not any("26" in name or "25" in name for name in query.specifics)


@pytest.mark.parametrize(
    ("question", "search"),
    [
        ("what's out there on machine unlearning at iclr", "what's out there on machine unlearning"),
        ("whats been published at iclr on spiking neural networks?", "whats been published on spiking neural networks"),
        ("which ICLR papers study unlearning?", "unlearning"),  # "which" asks for the papers: it stays
        ("ICLR's papers on diffusion", "diffusion"),
        ("what's out there on machine unlearning at iclr 2026", "what's out there on machine unlearning"),
    ],
)
def test_a_venue_named_is_read_as_the_venue_not_as_topic_words(question, search):
    """ "iclr" stayed in the search text and a dangling "at" in the topic: the pipeline searched "… unlearning at"."""
    query = parse(question)
    assert query.search == search
    assert (query.venue_named or (query.venue.split()[0],)) == ("ICLR",)


def test_a_venue_inside_a_word_or_given_as_a_flag_is_no_venue_named():
    assert parse("iclr-style reviews of diffusion").venue_named == ()
    assert parse("ICLR papers on diffusion", venue="ICLR 2025").venue_named == ()  # the flag wins
    assert parse("ICLR or NeurIPS papers on diffusion").venue_named == ("ICLR", "NeurIPS")  # either


def test_a_list_is_a_topic_by_its_topic_words_a_question_about_one_paper_by_its_whole_text():
    """rag.query.reads_as_topic: the pipeline gives it the words the corpus reads as the topic (rag.terms)."""
    from rag.query import reads_as_topic

    wrapped = parse("I am putting together a grant proposal and need to show I know the prior work on unlearning")
    assert not wrapped.is_topic and reads_as_topic(wrapped, "prior work on unlearning")
    described = parse("which papers study clustering where views are missing for some samples and labels are noisy?")
    assert described.is_topic and not reads_as_topic(described, described.search)  # 12 topic words
    one = parse("scrubbing banned facts out of a released chatbot with an rl objective that punishes any reference")
    assert not one.is_topic and not reads_as_topic(one, "rl")


@pytest.mark.parametrize(
    ("question", "counted"),
    [
        ("how many gas sensors does the array use?", "sensors"),  # the first plural, not a short word ending in s
        ("how many people took part?", "people"),
        (
            "how many new GPUs does it need?",
            "gpus",
        ),  # a four-letter plural after another word  # no plural: the first word
        ("how many datasets and baselines does PURGE use?", "datasets"),
        ("what does PURGE count?", None),
    ],
)
def test_a_count_question_counts_its_first_plural(question, counted):
    assert parse(question).counts == counted


def test_a_long_description_asked_for_as_work_is_not_a_topic():
    """ "is there work on <a paper described in 25 words>" describes a paper: the facet rule is not for it."""
    query = parse(
        "is there work on replacing plain adding-up or taking-the-max over an order-free bag of elements with a "
        "learned power-mean-like average?"
    )
    assert query.wants_list and not query.is_topic


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What FID does DiVeQ reach on ImageNet-1K?", ["FID", "DiVeQ", "ImageNet-1K"]),
        ("how many env steps per second does Octax reach on a single A100", ["A100"]),  # "Octax": one capital
        ("what macro-F1 does PSDNorm get?", ["macro-F1", "PSDNorm"]),
        ("which papers study machine unlearning in 2025?", []),  # a year is no name
        ("bandit papers with regret bounds (GLM bandits), NOT the game-theory ones", ["GLM"]),  # emphasis, no name
    ],
)
def test_specific_names_are_coined_names_and_words_of_letters_and_digits(question, names):
    from rag.query import coined_names, specific_names

    assert specific_names(question) == names
    assert set(coined_names(question)) <= set(names)


@pytest.mark.parametrize(
    ("name", "text", "written"),
    [
        ("CIFAR-10", "results on CIFAR10 and SVHN", True),  # hyphens, spaces and case aside
        ("ImageNet", "on ImageNet-1K", True),
        ("SAM-based", "sharpness-aware minimization (SAM) for unlearning", True),  # the name it is built on
        ("macro-F1", "an F1 score of 0.8", False),  # a variant of the metric, not the metric
        ("UR5", "a Franka arm", False),
    ],
)
def test_a_name_is_written_leniently(name, text, written):
    from rag.query import mentions

    assert mentions(name, text) is written


@pytest.mark.parametrize(
    ("question", "status", "search"),
    [
        ("accepted orals on diffusion", "oral", "diffusion"),
        ("rejected papers about RLHF", "rejected", "RLHF"),
        ("which spotlight papers study unlearning?", "spotlight", "unlearning"),
        ("how many accepted papers study machine unlearning?", "accepted", "machine unlearning"),
        ("papers on diffusion from 2025, accepted only", "accepted", "diffusion"),
        ("find me unlearning papers that got accepted", "accepted", "unlearning"),
        ("Which multi-view clustering papers were accepted at ICLR 2026?", "accepted", "multi-view clustering"),
        ("show posters about diffusion models", "poster", "diffusion models"),
        ("diffusion models — oral presentations only", "oral", "diffusion models"),
        ("poster session papers about diffusion models", "poster", "diffusion models"),
        ("accepted 2025 papers on unlearning", "accepted", "unlearning"),
        ("orals or spotlights only: diffusion models", "oral+spotlight", "diffusion models"),
        # Asking about a decision, or "oral" as a word of the topic, is no filter.
        ("was the memory mosaics paper an oral or a poster?", None, None),
        ("oral health datasets", None, "oral health datasets"),
        ("how many draft tokens were accepted per step?", None, None),
        ("are draft tokens accepted by the target model?", None, None),
    ],
)
def test_a_decision_written_in_the_question_filters_like_the_flag(question, status, search):
    query = parse(question)
    assert query.status == status and query.status_in_text == (status is not None)
    if search is not None:
        assert query.search == search
    assert parse(question, status="poster").status == "poster"  # the flag wins


def test_a_written_decision_is_dropped_where_the_store_keeps_none_but_a_flag_is_an_error():
    from rag.errors import InputError
    from rag.query import within_facets

    assert within_facets(parse("accepted papers on unlearning"), {}, {}).status is None
    with pytest.raises(InputError, match="no accepted papers in the store"):
        within_facets(parse("papers on unlearning", status="accepted"), {}, {})


@pytest.mark.parametrize(
    ("text", "kept", "left_out"),
    [
        ("clustering papers but NOT the multi-view ones", "clustering papers", "multi-view"),
        ("clustering papers, but skip the multi-view ones pls", "clustering papers", "multi-view"),
        ("unlearning papers excluding LLM unlearning", "unlearning papers", "LLM unlearning"),
        (
            "bandits with regret bounds (not game-theoretic regret matching)",
            "bandits with regret bounds",
            "game-theoretic regret matching",
        ),
        (
            "papers using reinforcement learning? Bandit papers don't count.",
            "papers using reinforcement learning?",
            "Bandit",
        ),
    ],
)
def test_a_clause_leaving_papers_out_is_read_apart_from_the_topic(text, kept, left_out):
    assert exclusion(text) == (kept, left_out)


@pytest.mark.parametrize(
    "text",
    [
        "theory of contrastive objectives, not papers that just use a contrastive loss as one component",
        "multi-view clustering papers for a related-work paragraph, not just the deep ones",
        "I'm not sure which papers study unlearning",
        "unlearning papers, llm or not",
        "disentanglement papers from 2026, skip the 2025 ones",  # the year phrase reads it
        "a recurrent net that settles faster with damped feedback and skip connections",  # a term of the field
    ],
)
def test_a_role_a_doubt_a_year_or_a_term_leaves_no_paper_out(text):
    assert exclusion(text, keyword_pair) == (text, None)
