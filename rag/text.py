"""Plain-text helpers every stage shares, each in one place: sentences, stopwords, content words, LaTeX → text.

Nothing here knows about papers, stores or backends; everything above may import it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from .lexicon import BM25_STOPWORDS, EVIDENCE_STOPWORDS
from .lexicon import BOILERPLATE as BOILERPLATE  # re-exported: rag.text.BOILERPLATE as before

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

# The stopword lists (BOILERPLATE, EVIDENCE_STOPWORDS, BM25_STOPWORDS) are in rag.lexicon.


@functools.lru_cache(maxsize=1)
def bm25_stopwords() -> list[str]:
    """The stopwords the BM25 tokenizer drops (sorted: the index is built and queried with the same list)."""
    return sorted(BM25_STOPWORDS)


# -- typos -------------------------------------------------------------------------------------------------

TYPO_MIN_LENGTH = 5  # shorter words have too many neighbours one edit away ("abt", "thx")


_WORD = re.compile(r"[a-z0-9][a-z0-9\-]+")


def content_words(text: str) -> set[str]:
    """The words of `text` that carry its topic (lower-cased; scaffolding and boilerplate left out)."""
    return {w for w in _WORD.findall(text.lower()) if w not in EVIDENCE_STOPWORDS}


# -- LaTeX → text ------------------------------------------------------------------------------------------

# '%', '&' and '#' typed plainly ("11%", "R&D") are text in an abstract, not a LaTeX comment or alignment.
_PLAIN_SPECIALS = re.compile(r"(?<!\\)([%&#])")


# A link written in an abstract: a URL, a LaTeX \\url or \\href, a bare github.com/… or …github.io address.
LINK = re.compile(r"https?://\S+|\\(?:url|href)\{[^}]*\}(?:\{[^}]*\})?|\bgithub\.\S+|\S+\.github\.io\S*", re.I)
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
