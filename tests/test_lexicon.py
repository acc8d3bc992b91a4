"""`rag.lexicon`: every word list and language regex that decides how a question or a sentence is read.

For each entry, what it matches and what it must not, taken from the function that reads it (and that function's
tests); then the module's own promises: it imports nothing of the project, every entry is counted and commented,
the docstring's counts are the module's, and the modules that read an entry use this one object.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rag import lexicon
from rag.lexicon import (
    ACRONYM_SMALL_WORDS,
    ADDITIVE_OPENER,
    ANY_YEAR,
    BM25_STOPWORDS,
    BOILERPLATE,
    COMPARISON,
    CONDENSED_LABEL,
    CONTINUATION,
    CONTRIBUTION,
    COUNT_NUMBER,
    COUNT_WORDS,
    DEFINITION_QUESTION,
    EVIDENCE_STOPWORDS,
    FACET_ALTERNATIVE,
    FACET_JOIN,
    FOLLOWUP_FILLER,
    FUNCTION_WORDS,
    GENERIC_WORDS,
    HOW_MANY,
    LEAD_IN,
    LIST_QUESTION,
    MODEL_SELF_REFERENCE,
    MORE_FUNCTION_WORDS,
    NUMBER_WORDS,
    ONE_PAPER_ASKED,
    ONE_PAPER_NAMED,
    ORDINAL,
    ORDINAL_NUMBER,
    ORDINAL_RANGE,
    ORDINAL_WORDS,
    PAPER_REQUEST,
    PLURAL_REFERENCE,
    QUANTITY_QUESTION,
    QUESTION_OPENER,
    REQUEST_PHRASES,
    REQUEST_WORDS,
    REQUEST_WORDS_NOT_FIRST,
    REQUEST_WORDS_NOT_LAST,
    SCAFFOLD,
    SEVERAL_PAPERS,
    SINGULAR_REFERENCE,
    VENUE_YEAR,
    VENUES,
    WORK_IN_GENERAL,
    YEAR_PHRASE,
    YEAR_RANGE,
    YEAR_SINCE,
)

LEXICON = Path(lexicon.__file__)


# -- regexes: whether they find something, and what ---------------------------------------------------------

# (pattern, how the caller applies it, text, what it finds: the whole match as a string, or None for no match)
FINDS = [
    # query._scaffolding_removed, query.asks_for_list: the request around a question, removed first
    (LEAD_IN, "match", "could you find me papers on diffusion?", "could you find me "),
    (LEAD_IN, "match", "I'm looking for work on unlearning", "I'm looking for "),
    (LEAD_IN, "match", "hi, can you please recommend papers on RL", "hi, can you please recommend "),
    (LEAD_IN, "match", "tell me about conformal prediction", "tell me about "),
    (LEAD_IN, "match", "recommend me papers on graph neural networks", "recommend me "),
    (LEAD_IN, "match", "which papers study unlearning?", None),
    (LEAD_IN, "match", "getting started with reinforcement learning", None),
    (LEAD_IN, "match", "what is CAMEL?", None),
    # query.asks_for_list, on the last 12 characters: "X paper" asks for one
    # query._scaffolding_removed, query.asks_for_list: a request for papers in other words
    (PAPER_REQUEST, "search", "I'm writing a related work section on X, what should I cite?", "should I cite"),
    (PAPER_REQUEST, "search", "what should I cite for federated unlearning?", "should I cite"),
    (PAPER_REQUEST, "search", "give me an overview of the literature on X", "overview of"),
    (PAPER_REQUEST, "search", "is there anything on test-time scaling?", "anything on"),
    (PAPER_REQUEST, "search", "what balanced accuracy do sota llms get on the benchmark?", None),
    (PAPER_REQUEST, "search", "what is the state of the art in image segmentation?", None),
    (PAPER_REQUEST, "search", "how do transformers work?", None),
    # query.parse_filters: a venue and year written in the question
    (VENUE_YEAR, "search", "which iclr 2026 papers study clustering?", "iclr 2026"),
    (VENUE_YEAR, "search", "Which NeurIPS'2025 papers use diffusion?", "NeurIPS'2025"),
    (VENUE_YEAR, "search", "which ICLR'26 papers study unlearning?", "ICLR'26"),
    (VENUE_YEAR, "search", "iclr ’25 papers on clustering", "iclr ’25"),
    (VENUE_YEAR, "search", "what does ICLR'26x report?", None),
    (VENUE_YEAR, "search", "ICLR papers on clustering", None),
    (VENUE_YEAR, "search", "myiclr 2025 results", None),
    (VENUE_YEAR, "search", "iclr26 only: clustering", "iclr26"),
    # query.parse_filters: a lower bound on the year
    (YEAR_SINCE, "search", "what's been published since 2021?", "since 2021"),
    (YEAR_SINCE, "search", "refs, nothing older than 2020 if possible", "nothing older than 2020"),
    (YEAR_SINCE, "search", "find papers unlearning 2023 onwards", "2023 onwards"),
    (YEAR_SINCE, "search", "2024+ papers", "2024+"),
    (YEAR_SINCE, "search", "newer than 2023", "newer than 2023"),
    (YEAR_SINCE, "search", "papers from 2023 on diffusion", None),
    (YEAR_SINCE, "search", "GPT-2023 onwards", None),
    # query.parse_filters: a year phrase
    (YEAR_PHRASE, "search", "papers on diffusion in 2025", "in 2025"),
    (YEAR_PHRASE, "search", "graph transformers from 2025?", "from 2025"),
    (YEAR_PHRASE, "search", "unlearning papers published in the year 2024", "published in the year 2024"),
    (YEAR_PHRASE, "search", "2025 papers on reinforcement learning", "2025 "),
    (YEAR_PHRASE, "search", "what does GPT-2025 report?", None),
    (YEAR_PHRASE, "search", "results of Model2025 on ImageNet", None),
    (YEAR_PHRASE, "search", "accuracy of 2025.5 points", None),
    (YEAR_PHRASE, "search", "in 2025-bench", None),
    # query.normalize_venue: a --venue flag
    (VENUE_YEAR, "fullmatch", "iclr 2025", "iclr 2025"),
    (VENUE_YEAR, "fullmatch", "ICLR'25", "ICLR'25"),
    (VENUE_YEAR, "fullmatch", "NeurIPS 2024", "NeurIPS 2024"),
    (VENUE_YEAR, "fullmatch", "ICLR 2025 workshop", None),
    (VENUE_YEAR, "fullmatch", "AAAI 2025", None),
    # query.parse_filters: two years joined
    (YEAR_RANGE, "search", "any work on X from iclr 2025 or 2026?", "iclr 2025 or 2026"),
    (YEAR_RANGE, "search", "papers from the ICLR 2025/2026 set", "ICLR 2025/2026"),
    (YEAR_RANGE, "search", "iclr 2025/26 clustering", "iclr 2025/26"),
    (YEAR_RANGE, "search", "diffusion 2024-2026", "2024-2026"),
    (YEAR_RANGE, "search", "ICLR 2025 and ICLR 2026 papers", "ICLR 2025 and ICLR 2026"),
    (YEAR_RANGE, "search", "in 2019, 20 papers", None),
    (YEAR_RANGE, "search", "GPT-2025 or 2026", None),
    (YEAR_RANGE, "search", "2025-bench", None),
    # query.asks_for_list, query.names_a_topic: papers in the plural, or "list"
    (LIST_QUESTION, "search", "which papers study unlearning?", "which papers"),
    (LIST_QUESTION, "search", "list the ICLR 2025 work on unlearning", "list"),
    (LIST_QUESTION, "search", "what methods reduce hallucination?", "what methods"),
    (LIST_QUESTION, "search", "what are the main recent approaches to pruning?", "what are the main recent approaches"),
    (LIST_QUESTION, "search", "papers on diffusion", "papers"),
    (LIST_QUESTION, "search", "which paper studies unlearning?", None),
    (LIST_QUESTION, "search", "which paper proposes new methods for pruning?", None),
    (LIST_QUESTION, "search", "what is CAMEL?", None),
    # query.asks_for_list: papers in general, with a mass noun or none
    (WORK_IN_GENERAL, "search", "is there work on federated unlearning?", "is there work on"),
    (WORK_IN_GENERAL, "search", "any research on conformal prediction", "any research on"),
    (WORK_IN_GENERAL, "search", "what research exists on X?", "what research exists on"),
    (WORK_IN_GENERAL, "search", "has anyone studied X?", "has anyone"),
    (WORK_IN_GENERAL, "search", "what has been published on X", "what has been published"),
    (WORK_IN_GENERAL, "search", "does the method work on images?", None),
    (WORK_IN_GENERAL, "search", "how does this work in practice?", None),
    # query.asks_for_list: a request for papers asking for one paper is no list
    (ONE_PAPER_ASKED, "search", "which paper studies unlearning?", "which paper"),
    (ONE_PAPER_ASKED, "search", "I'm looking for the paper that introduced X", "the paper"),
    (ONE_PAPER_ASKED, "search", "suggest a recent paper on X", "a recent paper"),
    (ONE_PAPER_ASKED, "search", "what papers study X?", None),
    (ONE_PAPER_ASKED, "search", "papers on X", None),
    # query.names_a_topic: a question word or an auxiliary opens a detail question
    (QUESTION_OPENER, "match", "how many parameters does PURGE have?", "how"),
    (QUESTION_OPENER, "match", "does DiVeQ use a codebook?", "does"),
    (QUESTION_OPENER, "match", "summarise the SelKD paper", "summarise"),
    (QUESTION_OPENER, "match", "adversarial robustness of graph neural networks", None),
    (QUESTION_OPENER, "match", "whatever works for pruning", None),
    # followups.find_year: the year filter lifted
    (ANY_YEAR, "search", "and in any year?", "any year"),
    (ANY_YEAR, "search", "the same, regardless of the year", "regardless of the year"),
    (ANY_YEAR, "search", "no year please", "no year"),
    (ANY_YEAR, "search", "and in 2025?", None),
    (ANY_YEAR, "search", "every yearly report", None),
    # followups.find_ordinals: the first n of the list
    (ORDINAL_RANGE, "search", "compare the first three", "the first three"),
    (ORDINAL_RANGE, "search", "summarize the top 5 papers", "the top 5 papers"),
    (ORDINAL_RANGE, "search", "the first one", None),
    (ORDINAL_RANGE, "search", "the first time", None),
    # followups.find_ordinals: one of the list
    (ORDINAL, "search", "tell me more about the second one", "the second one"),
    (ORDINAL, "search", "what does the 2nd paper use?", "the 2nd paper"),
    (ORDINAL, "search", "the first, and the third", "the first"),
    (ORDINAL, "search", "what is the last one about?", "the last one"),
    (ORDINAL, "search", "when was it the first time?", None),
    (ORDINAL, "search", "what did they do in the last year?", None),
    (ORDINAL, "search", "the secondary effect", None),
    (ORDINAL_NUMBER, "search", "what about #2?", "#2"),
    (ORDINAL_NUMBER, "search", "explain paper 3", "paper 3"),
    (ORDINAL_NUMBER, "search", "number 10 please", "number 10"),
    (ORDINAL_NUMBER, "search", "see page 3", None),
    (ORDINAL_NUMBER, "search", "2025 papers", None),
    # followups.resolve: the paper, or the papers, under discussion
    (SINGULAR_REFERENCE, "search", "what datasets does it use?", "it"),
    (SINGULAR_REFERENCE, "search", "does this method scale?", "this method"),
    (SINGULAR_REFERENCE, "search", "what does the paper claim?", "the paper"),
    (SINGULAR_REFERENCE, "search", "how do they iterate?", None),
    (SINGULAR_REFERENCE, "search", "is this dataset public?", None),
    (PLURAL_REFERENCE, "search", "compare them", "them"),
    (PLURAL_REFERENCE, "search", "what do these papers use?", "these papers"),
    (PLURAL_REFERENCE, "search", "do both report accuracy?", "both"),
    (PLURAL_REFERENCE, "search", "how do the two differ?", "the two"),
    (PLURAL_REFERENCE, "search", "what theory do these datasets follow?", None),
    # followups.resolve: the previous question about a new subject
    (CONTINUATION, "match", "what about diffusion?", "what about "),
    (CONTINUATION, "match", "and in 2025?", "and "),
    (CONTINUATION, "match", "okay, and vision?", "okay, "),
    (CONTINUATION, "match", "which papers study X?", None),
    (CONTINUATION, "match", "android malware detection", None),
    # followups.resolve: a comparison of the papers under discussion
    (COMPARISON, "search", "compare them", "compare"),
    (COMPARISON, "search", "how do they differ?", "differ"),
    (COMPARISON, "search", "what do they have in common?", "in common"),
    (COMPARISON, "search", "PURGE vs. SelKD", "vs"),  # no word boundary after the stop
    (COMPARISON, "search", "differential privacy", None),
    (COMPARISON, "search", "a common baseline", None),
    # query.counted_noun: the words after "how many"
    (HOW_MANY, "search", "how many baselines was FeDaL compared against?", "how many baselines "),
    (HOW_MANY, "search", "how many parameters does X have?", "how many parameters "),
    (HOW_MANY, "search", "how much memory does it need?", None),
    (HOW_MANY, "search", "how many?", None),
    # query.defined_name: the whole question asks what a coined name is
    (DEFINITION_QUESTION, "match", "what is CAMEL?", "what is CAMEL?"),
    (DEFINITION_QUESTION, "match", "MinPV - what is it", "MinPV - what is it"),
    (DEFINITION_QUESTION, "match", "what does STOD stand for?", "what does STOD stand for?"),
    (DEFINITION_QUESTION, "match", "how does CAMEL work?", None),
    # evidence Selector.select: one paper named, or several
    (
        ONE_PAPER_NAMED,
        "search",
        "what benchmark does the brain tumor segmentation paper use?",
        "the brain tumor segmentation paper",
    ),
    (ONE_PAPER_NAMED, "search", "which papers study unlearning?", None),
    (ONE_PAPER_NAMED, "search", "what do the papers on X use?", None),
    (SEVERAL_PAPERS, "search", "how do PURGE and Sharp MinMax differ?", "and"),
    (SEVERAL_PAPERS, "search", "contrast the X paper with SelKD", "contrast"),
    (SEVERAL_PAPERS, "search", "PURGE vs SelKD", "vs"),
    (SEVERAL_PAPERS, "search", "what does PURGE reach on RWKU?", None),
    (SEVERAL_PAPERS, "search", "which candidate benchmark does it use?", None),
    # evidence.quote: a sentence saying what the paper does
    (CONTRIBUTION, "search", "In this paper, we propose a new sampler.", "this paper, we propose"),
    (CONTRIBUTION, "search", "Here we show that pruning helps.", "Here we show"),
    (CONTRIBUTION, "search", "This work introduces CAMEL.", "This work introduce"),
    (CONTRIBUTION, "search", "Our method achieves 80% accuracy.", None),
    (CONTRIBUTION, "search", "Large language models have shown promise.", None),
    # evidence._quote: an additive connective dropped from a quote's start
    (ADDITIVE_OPENER, "match", "Additionally, we develop a solver.", "Additionally, "),
    (ADDITIVE_OPENER, "match", "In addition, it is fast.", "In addition, "),
    (ADDITIVE_OPENER, "match", "However, it is slow.", None),
    (ADDITIVE_OPENER, "match", "Moreover we find", None),
    (ADDITIVE_OPENER, "match", "additionally, we find", None),
    # facets.gives_count: a count, not a share or a ratio
    (COUNT_NUMBER, "search", "against 54 baselines", "54"),
    (COUNT_NUMBER, "search", "on 2,880 images", "2,880"),
    (COUNT_NUMBER, "search", "a model with 1.5B parameters", "1.5B"),
    (COUNT_NUMBER, "search", "on three datasets", "three"),
    (COUNT_NUMBER, "search", "improves by 5% on", None),
    (COUNT_NUMBER, "search", "14x faster", None),
    (COUNT_NUMBER, "search", "a 3-fold speed-up", None),
    (COUNT_NUMBER, "search", "ResNet50 backbones", None),
    (COUNT_NUMBER, "search", "a threefold gain", None),
    # local.unsupported: a question asking for a quantity
    (QUANTITY_QUESTION, "search", "how many parameters does PURGE have?", "how many"),
    (QUANTITY_QUESTION, "search", "what relative improvement on GSM8K does it report?", "improvement"),
    (QUANTITY_QUESTION, "search", "what accuracy does DiVeQ reach?", "accuracy"),
    (QUANTITY_QUESTION, "search", "which datasets does DiVeQ use?", None),
    (QUANTITY_QUESTION, "search", "how does DiVeQ work?", None),
]


def _case_id(case: tuple) -> str:
    name = next(name for name, value in vars(lexicon).items() if value is case[0])
    return f"{name}:{case[2]}"


@pytest.mark.parametrize(("pattern", "how", "text", "found"), FINDS, ids=[_case_id(case) for case in FINDS])
def test_each_regex_finds_what_its_reader_expects(pattern, how, text, found):
    match = getattr(pattern, how)(text)
    assert (match.group(0) if match else None) == found


# -- regexes: the groups and counts their readers take -------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "noun", "work", "verb", "rest"),
    [
        ("which papers study unlearning?", "papers", None, "study", "unlearning?"),
        ("are there any recent works on diffusion?", "works", None, "on", "diffusion?"),
        ("has anyone studied federated unlearning", None, "has anyone", "studied", "federated unlearning"),
        ("what has been published on pruning", None, "what has been", "published on", "pruning"),
        ("what papers propose or analyze pruning?", "papers", None, "propose or analyze", "pruning?"),
        ("what is CAMEL?", None, None, None, "CAMEL?"),
    ],
)
def test_scaffold_names_the_noun_and_the_verb_before_the_topic(question, noun, work, verb, rest):
    # query._scaffolding_removed cuts at the end only when a noun names papers, or "work" asks for papers by a verb
    match = SCAFFOLD.match(question)
    found = (match.group("noun"), match.group("work"), match.group("verb"), question[match.end() :])
    assert found == (noun, work, verb, rest)


@pytest.mark.parametrize(
    ("text", "groups"),
    [
        ("which iclr 2026 papers study clustering?", ("iclr", "2026", None)),
        ("which ICLR'26 papers study unlearning?", ("ICLR", None, "26")),
        ("on unlearning (EMNLP 2024)", ("EMNLP", "2024", None)),
    ],
)
def test_venue_year_gives_the_venue_and_the_year_or_its_shorthand(text, groups):
    assert VENUE_YEAR.search(text).groups() == groups  # query.parse_filters, query._year_of


@pytest.mark.parametrize(
    ("text", "year"), [("papers on diffusion in 2025", "2025"), ("2025 papers on reinforcement learning", "2025")]
)
def test_year_phrase_gives_the_year_in_one_of_its_two_groups(text, year):
    match = YEAR_PHRASE.search(text)
    assert (match.group(1) or match.group(2)) == year  # query.parse_filters


@pytest.mark.parametrize(
    ("question", "counted"),
    [
        ("how many baselines was FeDaL compared against?", ["baselines"]),
        ("how many benchmarks evaluate FedSal on vision?", ["benchmarks", "evaluate", "FedSal"]),
        ("how many people and models", ["people"]),
    ],
)
def test_how_many_stops_at_an_auxiliary_and_or_a_preposition(question, counted):
    assert HOW_MANY.search(question).group(1).split() == counted  # query.counted_noun


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("what is CAMEL?", "CAMEL"),
        ("what are QUANNs?", "QUANNs"),
        ("what's an SF-DiVeQ", "SF-DiVeQ"),
        ("MinPV - what is it", "MinPV"),
        ("what does STOD stand for?", "STOD"),
    ],
)
def test_definition_question_names_the_subject(question, name):
    match = DEFINITION_QUESTION.match(question)
    assert next(g for g in match.groups() if g) == name  # query.defined_name


@pytest.mark.parametrize(
    ("question", "position"),
    [
        ("tell me more about the second one", "second"),
        ("what does the 2nd paper use?", "2nd"),
        ("the third paper", "third"),
        ("what do fifth papers say", "fifth"),
    ],
)
def test_ordinal_gives_the_ordinal_in_one_of_its_groups(question, position):
    match = ORDINAL.search(question)
    assert next(g for g in match.groups() if g) == position  # followups.find_ordinals


@pytest.mark.parametrize(("question", "count"), [("the first three", "three"), ("top 5 papers", "5")])
def test_ordinal_range_gives_how_many(question, count):
    assert ORDINAL_RANGE.search(question).group(1) == count  # followups.find_ordinals


@pytest.mark.parametrize(("question", "number"), [("what about #2?", "2"), ("explain paper 3", "3")])
def test_ordinal_number_gives_the_number(question, number):
    assert ORDINAL_NUMBER.search(question).group(1) == number  # followups.find_ordinals


@pytest.mark.parametrize(
    ("question", "papers"),
    [
        ("what benchmark does the brain tumor segmentation paper use?", 1),
        ("the diffusion paper and the pruning paper", 2),
        ("which papers study unlearning?", 0),
        ("what do the papers on X use?", 0),
        ("the paper on X", 1),
    ],
)
def test_one_paper_named_counts_the_papers_named(question, papers):
    assert len(ONE_PAPER_NAMED.findall(question)) == papers  # evidence Selector.select: exactly one keeps one


@pytest.mark.parametrize(
    ("topic", "parts"),
    [
        ("adversarial robustness of graph neural networks", ["adversarial robustness", "graph neural networks"]),
        ("federated unlearning", ["federated unlearning"]),
        ("vision-language models for robotics", ["vision-language models", "robotics"]),
        ("llms: interpretability", ["llms", "interpretability"]),
        ("diffusion - a survey", ["diffusion", "a survey"]),
        ("learning based on rewards", ["learning", "rewards"]),
        ("lora vs. full fine-tuning", ["lora", "full fine-tuning"]),
        ("ordering information", ["ordering information"]),
    ],
)
def test_facet_join_cuts_a_topic_at_its_joining_words(topic, parts):
    assert FACET_JOIN.split(topic) == parts  # facets.facets


@pytest.mark.parametrize(
    ("part", "alternatives"),
    [
        ("PDEs or physics-informed neural nets", ["PDEs", "physics-informed neural nets"]),
        ("test-time compute / inference scaling", ["test-time compute", "inference scaling"]),
        ("llms (interpretability)", ["llms", "interpretability", ""]),
        ("order statistics", ["order statistics"]),
    ],
)
def test_facet_alternative_cuts_a_part_into_its_alternatives(part, alternatives):
    assert FACET_ALTERNATIVE.split(part) == alternatives  # facets.facets


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        ("Standalone question: what datasets does PURGE use?", "what datasets does PURGE use?"),
        ("question : what is X?", "what is X?"),
        ("Rewritten question:what is X?", "what is X?"),
        ("What question does PURGE answer?", "What question does PURGE answer?"),
    ],
)
def test_condensed_label_is_removed_from_the_reply(reply, question):
    assert CONDENSED_LABEL.sub("", reply) == question  # followups.parse_condensed


@pytest.mark.parametrize(
    ("sentence", "shown"),
    [
        ("The abstract discusses unlearning.", "This paper discusses unlearning."),
        ("this text itself proposes X", "This paper proposes X"),
        ("The passage", "This paper"),
        ("The abstraction layer is new.", "The abstraction layer is new."),
        ("The paper proposes X", "The paper proposes X"),
    ],
)
def test_model_self_reference_becomes_this_paper(sentence, shown):
    assert MODEL_SELF_REFERENCE.sub("This paper", sentence) == shown  # local._tidy_sentence


@pytest.mark.parametrize(
    ("fragment", "matches", "not_matches"),
    [
        ("SCAFFOLD_VERB", ["study", "focuses on", "analyses", "is there on"], ["studying-", "reads"]),
        ("PAPERS_NOUN", ["papers", "work", "literature"], ["paperwork", "article"]),
        ("YEAR", ["2025", "1999"], ["2025-bench", "2025b", "2025.5", "1899"]),
        ("SHORT_YEAR", ["'26", "’25", "26"], ["'26x", "26b", "26-bench"]),
        ("LIST_PLURAL_NOUN", ["papers", "methods", "approaches"], ["paper", "method", "results"]),
        ("LIST_SINGULAR_NOUN", ["paper", "study", "approach"], ["papers", "studies"]),
        ("ORDINAL_WORD", ["second", "last", "3rd", "21st"], ["secondly", "100th", "one"]),
        ("LISTED_NOUN", ["one", "ones", "entry", "entries", "study"], ["studys", "models"]),
        ("REFERRING_NOUN", ["paper", "one", "framework"], ["papers", "dataset"]),
    ],
)
def test_each_fragment_matches_what_it_names(fragment, matches, not_matches):
    pattern = re.compile(rf"(?:{getattr(lexicon, fragment)})(?![\w\-])", re.I)
    assert all(pattern.match(text) and pattern.match(text).end() == len(text) for text in matches)
    assert not any(pattern.match(text) and pattern.match(text).end() == len(text) for text in not_matches)


@pytest.mark.parametrize(("ordinal", "fine"), [("first one", True), ("first time", False), ("last year", False)])
def test_not_about_list_rules_out_an_ordinal_of_something_else(ordinal, fine):
    pattern = re.compile(rf"(?:first|last)\b{lexicon.NOT_ABOUT_LIST}")  # followups ORDINAL
    assert bool(pattern.match(ordinal)) is fine


# -- word lists ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "listed", "not_listed"),
    [
        # query._request_words_trimmed: stripped from either end of a request
        (REQUEST_PHRASES, ["related work section", "state of the art", "sota", "papers", "what", "should", "cite"], []),
        (REQUEST_PHRASES, [], ["comprehension", "learning", "diffusion", "kernel"]),
        # ... but kept at the end ("kernel methods") or at the start ("reading comprehension")
        (REQUEST_WORDS_NOT_LAST, ["methods", "studies", "research", "learning"], ["papers", "references"]),
        (REQUEST_WORDS_NOT_FIRST, ["reading"], ["state", "papers"]),
        # query.parse_filters, query.normalize_venue
        (VENUES, ["iclr", "neurips", "emnlp"], ["aaai", "ICLR"]),
        # followups._ordinal_value, followups.find_ordinals
        (ORDINAL_WORDS, ["first", "tenth", "last"], ["eleventh", "one"]),
        (COUNT_WORDS, ["two", "ten"], ["one", "eleven"]),
        # followups.content_words: no topic of their own
        (FOLLOWUP_FILLER, ["it", "use", "paper", "second", "compare", "okay"], ["datasets", "diffusion", "benchmark"]),
        # facets._generic_stems (a string: its words)
        (GENERIC_WORDS.split(), ["analysis", "novel", "setting"], ["regression", "clustering", "learning"]),
        # facets._spelled_out
        (ACRONYM_SMALL_WORDS, ["of", "from", "via"], ["learning", "human"]),
        # COUNT_NUMBER's number words
        (NUMBER_WORDS.split(), ["three", "eleven", "dozens", "hundred"], ["one", "first"]),
        # text: BM25's and sentence evidence's stopwords
        (BOILERPLATE, ["paper", "methods", "using"], ["model", "new"]),
        (EVIDENCE_STOPWORDS, ["the", "models", "reports", "paper"], ["new", "based", "diffusion"]),
        (BM25_STOPWORDS, ["new", "based", "what", "paper", "the", "could"], ["models", "reports", "diffusion"]),
        # the grammar words all of these are built on: the library's, and the few it lacks
        (FUNCTION_WORDS, ["the", "of", "which", "not", "between"], ["paper", "model", "could"]),
        (MORE_FUNCTION_WORDS, ["could", "would", "via"], ["the", "paper"]),
    ],
)
def test_each_word_list_holds_its_words_and_not_others(words, listed, not_listed):
    assert all(word in words for word in listed)
    assert not any(word in words for word in not_listed)


def test_word_list_values_and_shapes():
    assert VENUES["neurips"] == "NeurIPS" and VENUES["iclr"] == "ICLR"
    assert ORDINAL_WORDS["second"] == 2 and ORDINAL_WORDS["last"] == -1
    assert COUNT_WORDS["three"] == 3
    assert list(ORDINAL_WORDS.values()) == [*range(1, 11), -1]  # "first" … "tenth", "last"
    assert list(COUNT_WORDS.values()) == list(range(2, 11))  # "two" … "ten"
    assert BOILERPLATE < EVIDENCE_STOPWORDS and BOILERPLATE < BM25_STOPWORDS and BOILERPLATE < FOLLOWUP_FILLER
    assert FUNCTION_WORDS < EVIDENCE_STOPWORDS and FUNCTION_WORDS < BM25_STOPWORDS and FUNCTION_WORDS < REQUEST_PHRASES
    # query._request_words_trimmed reads phrases of up to four words ("state of the art")
    assert max(len(phrase.split()) for phrase in REQUEST_PHRASES) == 4


# -- the module itself ------------------------------------------------------------------------------------------


def test_lexicon_imports_nothing_of_the_project():
    tree = ast.parse(LEXICON.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a relative import"
            imported.add(node.module.split(".")[0])
    assert imported <= {"__future__", "re", "importlib", "pathlib"}
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, rag.lexicon; print(sorted(m for m in sys.modules if m.startswith(('rag', 'llama_index'))))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=LEXICON.parent.parent,
    ).stdout
    assert loaded.strip() == "['rag', 'rag.lexicon']"


def _entries() -> dict[str, object]:
    return {name: value for name, value in vars(lexicon).items() if name.isupper() and not name.startswith("_")}


def test_every_entry_is_a_regex_a_fragment_or_a_counted_word_list():
    registries = {"WORD_LISTS", "FRAGMENTS", "LIBRARY_LISTS"}
    for name, value in _entries().items():
        if name in registries:
            continue
        kinds = [isinstance(value, re.Pattern), name in lexicon.FRAGMENTS, name in lexicon.WORD_LISTS]
        assert kinds.count(True) == 1, name
    for name in lexicon.FRAGMENTS:
        re.compile(getattr(lexicon, name))  # a fragment is regex source
    for bases in lexicon.WORD_LISTS.values():
        assert all(base in lexicon.WORD_LISTS for base in bases)


def test_every_entry_has_a_comment():
    lines = LEXICON.read_text(encoding="utf-8").splitlines()
    for node in ast.parse("\n".join(lines)).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            line = node.lineno - 2
            # a comment above, or above a one-line entry just before it (two entries under one comment)
            while line >= 0 and not lines[line].startswith("#") and re.match(r"[A-Z_]+ = .*\S$", lines[line]):
                line -= 1
            assert line >= 0 and lines[line].startswith("#"), lines[node.lineno - 1]


def test_the_docstring_states_the_counts():
    doc = " ".join((lexicon.__doc__ or "").split())
    match = re.search(
        r"holds (\d+) regexes \(compiled patterns; the (\d+) regex fragments .*?\) and (\d+) listed words and "
        r"phrases, in (\d+) word lists",
        doc,
    )
    assert match, "the docstring's count sentence"
    regexes, fragments, words, lists = (int(n) for n in match.groups())
    assert (regexes, words) == lexicon.counts()
    assert (fragments, lists) == (len(lexicon.FRAGMENTS), len(lexicon.WORD_LISTS))


def test_counts_count_what_is_written():
    assert lexicon.counts()[0] == len(lexicon.regexes())
    assert lexicon.listed_words()["VENUES"] == 6
    assert lexicon.listed_words()["REQUEST_WORDS"] == len(set(REQUEST_WORDS.split("|")))
    assert lexicon.listed_words()["REQUEST_PHRASES"] == 0  # built on lists counted already
    grammar = FUNCTION_WORDS | MORE_FUNCTION_WORDS
    assert lexicon.listed_words()["EVIDENCE_STOPWORDS"] == len(EVIDENCE_STOPWORDS - grammar - BOILERPLATE)
    assert lexicon.entries("GENERIC_WORDS")[:2] == ["studying", "approaches"]
    # the library's list is not counted
    assert lexicon.listed_words()["FUNCTION_WORDS"] == 0 and len(FUNCTION_WORDS) >= 150


def test_generic_words_are_read_by_stem():
    from rag.facets import _generic_stems
    from rag.lexical import query_terms

    # every form of a listed word is generic; one word per stem is listed
    assert query_terms("studies analyzing analyses improving applications techniques ideas") <= _generic_stems()
    assert not query_terms("regression clustering diffusion") & _generic_stems()


# -- the readers use these very objects -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "name", "entry"),
    [
        ("rag.query", "LEAD_IN", "LEAD_IN"),
        ("rag.query", "SCAFFOLD", "SCAFFOLD"),
        ("rag.query", "VENUES", "VENUES"),
        ("rag.query", "LIST_QUESTION", "LIST_QUESTION"),
        ("rag.query", "REQUEST_PHRASES", "REQUEST_PHRASES"),
        ("rag.followups", "ORDINAL", "ORDINAL"),
        ("rag.followups", "FOLLOWUP_FILLER", "FOLLOWUP_FILLER"),
        ("rag.evidence", "_ONE_PAPER", "ONE_PAPER_NAMED"),
        ("rag.evidence", "_SEVERAL", "SEVERAL_PAPERS"),
        ("rag.evidence", "_CONTRIBUTION", "CONTRIBUTION"),
        ("rag.evidence", "_ADDITIVE_OPENER", "ADDITIVE_OPENER"),
        ("rag.facets", "_JOIN", "FACET_JOIN"),
        ("rag.facets", "_ALTERNATIVE", "FACET_ALTERNATIVE"),
        ("rag.facets", "_GENERIC_WORDS", "GENERIC_WORDS"),
        ("rag.facets", "_SMALL_WORDS", "ACRONYM_SMALL_WORDS"),
        ("rag.facets", "_COUNT_NUMBER", "COUNT_NUMBER"),
        ("rag.text", "BOILERPLATE", "BOILERPLATE"),
        ("rag.text", "EVIDENCE_STOPWORDS", "EVIDENCE_STOPWORDS"),
        ("rag.backends.local", "QUANTITY_QUESTION", "QUANTITY_QUESTION"),
    ],
)
def test_the_readers_use_the_lexicons_entries(module, name, entry):
    import importlib

    assert getattr(importlib.import_module(module), name) is getattr(lexicon, entry)
