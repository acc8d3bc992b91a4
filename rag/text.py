"""Plain-text helpers every stage shares, each in one place: sentences, stopwords, content words, LaTeX → text.

Nothing here knows about papers, stores or backends; everything above may import it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

# -- sentences ---------------------------------------------------------------------------------------------

# A sentence ends at . ! ? followed by space and something that can start one: neither "31.5k" (no space)
# nor "e.g. the" (lower case after the stop) ends a sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9$\\(\"'“])")


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped (for quoting and for matching a claim against an abstract)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def sentence_pieces(text: str) -> list[str]:
    """`text` cut at the same sentence ends as `split_sentences`, each piece keeping its trailing space, so the
    pieces join back to `text` exactly (what llama-index's SentenceSplitter needs from a sentence tokenizer)."""
    pieces, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        pieces.append(text[start : end.end()])
        start = end.end()
    pieces.append(text[start:])
    return [piece for piece in pieces if piece]


def sentences_with_fallback(text: str, punkt: Callable[[str], list[str]] | None = None) -> list[str]:
    """llama-index's sentence tokenizer (nltk punkt), or the plain split above when punkt times out.

    nltk runs every regex under a 5 s *wall-clock* limit (nltk.redos). At 31.5k papers a long Chroma write on
    the ingest's writer thread, or a busy machine, used that up and the whole ingest failed at 30,484 of 31,500
    papers; one paper split by the plain rule is better than a failed ingest. The pieces join back to `text`,
    as punkt's do.
    """
    if punkt is None:
        from llama_index.core.node_parser.text.utils import split_by_sentence_tokenizer

        punkt = split_by_sentence_tokenizer()
    try:
        return punkt(text)
    except TimeoutError:
        return sentence_pieces(text)


# -- stopwords and content words ---------------------------------------------------------------------------

# Paper boilerplate: says nothing about which paper or sentence answers ("which papers propose methods for X").
BOILERPLATE = frozenset(
    """paper papers work works study studies propose proposes proposed approach method methods
    show shows use uses used using""".split()
)

# For sentence evidence (`content_words`): question scaffolding, function words, boilerplate. Deliberately
# wider than BM25's on boilerplate ("model", "approaches", "reports" say nothing about which sentence answers)
# and without stemming: a sentence shares a question's word as written.
EVIDENCE_STOPWORDS = BOILERPLATE | frozenset(
    """
    a about above after all also an and any are as at be been being both but by can could did do
    does doing for from had has have how i if in into is it its of on or our over report reported reports
    so some studied such than that the their them then there these they this those to under up via was we
    were what when where which while who why will with would you address addresses approaches model models
    """.split()
)

# Added to bm25s's English list for BM25: question words and boilerplate are not evidence ("what is DiVeQ?" is
# about "diveq" alone). It differs from EVIDENCE_STOPWORDS where each was tuned against the evals; kept as tuned.
_BM25_EXTRA = BOILERPLATE | frozenset(
    """what which who whom whose when where why how does do did done doing can could would should
    may might will shall am is are was were been being has have had having about above after again against all
    also any both each few more most other some such than too very just via its our we they their them this
    those these based new""".split()
)


@functools.lru_cache(maxsize=1)
def bm25_stopwords() -> list[str]:
    """The stopwords the BM25 tokenizer drops (sorted: the index is built and queried with the same list)."""
    from bm25s.stopwords import STOPWORDS_EN

    return sorted(set(STOPWORDS_EN) | _BM25_EXTRA)


_WORD = re.compile(r"[a-z0-9][a-z0-9\-]+")


def content_words(text: str) -> set[str]:
    """The words of `text` that carry its topic (lower-cased; scaffolding and boilerplate left out)."""
    return {w for w in _WORD.findall(text.lower()) if w not in EVIDENCE_STOPWORDS}


# -- LaTeX → text ------------------------------------------------------------------------------------------

# '%', '&' and '#' typed plainly ("11%", "R&D") are text in an abstract, not a LaTeX comment or alignment.
_PLAIN_SPECIALS = re.compile(r"(?<!\\)([%&#])")


# \url{…} and \href{…}{…}: pylatexenc leaves them as written, and a URL's "_" or "%" must not be read as LaTeX.
_LATEX_LINK = re.compile(r"\\url\{([^{}]*)\}|\\href\{([^{}]*)\}(?:\{([^{}]*)\})?")


def tidy_latex(text: str) -> str:
    """Abstracts' LaTeX as readable text: "$\\tilde{O}(\\sqrt{d})$" → "Õ(√(d))", "98\\%" → "98%", "**b**" → "b",
    "\\href{https://…}{our site}" → "our site (https://…)"."""
    text = text.replace("**", "")
    if "\\" not in text and "$" not in text and "``" not in text:
        return text  # most sentences: no parse
    links: list[str] = []

    def hold(match: re.Match) -> str:
        url = match.group(1) or match.group(2)
        label = match.group(3)
        links.append(f"{label} ({url})" if label and label != url else url)
        return f"LINK{len(links) - 1}X"

    text = _LATEX_LINK.sub(hold, text)
    try:
        text = _latex_converter().latex_to_text(_PLAIN_SPECIALS.sub(r"\\\1", text))
    except Exception:  # pylatexenc is lenient, but a quote must never fail: fall back to the common cases
        text = re.sub(r"\\([%&_#$])", r"\1", text).replace("``", "“").replace("''", "”")
        text = re.sub(r"\$([^$]{1,40})\$", r"\1", text)
    return re.sub(r"LINK(\d+)X", lambda m: links[int(m.group(1))], text) if links else text


@functools.cache
def _latex_converter():
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text", strict_latex_spaces="based-on-source")
