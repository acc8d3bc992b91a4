"""The shared text helpers: sentence splitting (and punkt's fallback), stopwords, content words, LaTeX → text."""

from __future__ import annotations

import pytest

from rag.text import (
    BOILERPLATE,
    EVIDENCE_STOPWORDS,
    bm25_stopwords,
    content_words,
    sentence_pieces,
    sentences_with_fallback,
    split_sentences,
    tidy_latex,
)

# -- sentences ---------------------------------------------------------------------------------------------


def test_sentences_end_at_a_stop_followed_by_a_capital_digit_or_markup():
    text = 'We propose X. It works well! Does it scale? 31.5k papers say so. $\\alpha$ is tuned. "Yes," they said.'
    assert split_sentences(text) == [
        "We propose X.",
        "It works well!",
        "Does it scale?",
        "31.5k papers say so.",
        "$\\alpha$ is tuned.",
        '"Yes," they said.',
    ]


def test_a_stop_before_lower_case_or_inside_a_number_ends_no_sentence():
    assert split_sentences("We use e.g. the RWKU benchmark at 31.5k papers.") == [
        "We use e.g. the RWKU benchmark at 31.5k papers."
    ]
    assert split_sentences("  \n ") == []


def test_sentence_pieces_cut_where_split_sentences_does_and_join_back_to_the_text():
    text = "  We propose X.  It works well!\nDoes it scale e.g. here? Yes "
    pieces = sentence_pieces(text)
    assert "".join(pieces) == text
    assert [p.strip() for p in pieces] == split_sentences(text)
    assert sentence_pieces("") == []


def test_a_sentence_tokenizer_timeout_falls_back_to_a_plain_split():
    """nltk's punkt runs under a 5 s wall-clock regex limit; when it trips, the paper is still chunked."""

    def timing_out(text):
        raise TimeoutError("regular-expression match exceeded its 5.0s time limit")

    text = "We propose X. It works well! Does it scale? Yes, to 31.5k papers"
    pieces = sentences_with_fallback(text, timing_out)
    assert "".join(pieces) == text
    assert [p.strip() for p in pieces] == ["We propose X.", "It works well!", "Does it scale?", "Yes, to 31.5k papers"]
    # Without a timeout, punkt decides (it reads "X." as an initial, hence its own pieces).
    assert "".join(sentences_with_fallback(text)).replace(" ", "") == text.replace(" ", "")


# -- stopwords and content words ---------------------------------------------------------------------------


def test_content_words_drop_scaffolding_and_boilerplate_and_keep_the_topic():
    assert content_words("Which papers propose methods for machine unlearning in LLMs?") == {
        "machine",
        "unlearning",
        "llms",
    }
    assert content_words("SF-DiVeQ reaches 98% on RWKU") == {"sf-diveq", "reaches", "98", "rwku"}
    assert content_words("a I x") == set()  # one-letter words are never content


def test_both_stopword_lists_drop_paper_boilerplate():
    assert BOILERPLATE <= EVIDENCE_STOPWORDS
    assert set(bm25_stopwords()) >= BOILERPLATE
    assert bm25_stopwords() == sorted(bm25_stopwords())  # index and queries use one list, in one order


def test_the_lists_differ_as_each_was_tuned():
    # Sentence evidence ignores "model(s)"; BM25 keeps the term. Both drop "the"; BM25 also drops a few words
    # ("new", "based") that sentence evidence counts.
    assert "models" in EVIDENCE_STOPWORDS and "models" not in bm25_stopwords()
    assert "the" in EVIDENCE_STOPWORDS and "the" in bm25_stopwords()
    assert {"new", "based"} <= set(bm25_stopwords()) and not {"new", "based"} & EVIDENCE_STOPWORDS


# -- LaTeX → text ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("latex", "shown"),
    [
        # sentences as the seed abstracts write them
        (r"a \textit{dueling oracle}, a noisy pairwise comparison", "a dueling oracle, a noisy pairwise comparison"),
        (r"a rate of $\tilde{O}(\sqrt{d/n})$ under $\varepsilon$-DP", "a rate of Õ(√(d/n)) under ε-DP"),
        (r"error scales as $L\sim d^{-\alpha}$", "error scales as L∼ d^-α"),
        (r"keeps 98\% of utility and ``hard'' forward passes", "keeps 98% of utility and “hard” forward passes"),
        # plain text that LaTeX would eat: a bare percent starts a comment, & and # are special
        (
            "reaches 11% effectiveness on R&D task #3 with **bold** claims",
            "reaches 11% effectiveness on R&D task #3 with bold claims",
        ),
        (r"11% of $k$-NN queries", "11% of k-NN queries"),
        # links: the address as written ("_" and "%" in it are not LaTeX), a labelled one with its label
        (r"Code: \url{https://github.com/a_b/c%20d}.", "Code: https://github.com/a_b/c%20d."),
        (r"see \href{https://x.io/p}{our site} for $k$-NN", "see our site (https://x.io/p) for k-NN"),
        (r"at: \href{https://github.com/machoshi/SelKD}", "at: https://github.com/machoshi/SelKD"),
    ],
)
def test_quoted_sentences_show_latex_as_text(latex, shown):
    assert tidy_latex(latex) == shown
