"""Which words of a question name what it is about: read from how the field uses each word, not from a list.

A word naming a topic recurs inside the abstracts that use it ("unlearning": 6.0 uses per abstract using it,
"clustering" 2.6); a word around the topic, the request and scope of the question ("quick", "here", "studies",
"show"), is used once when used at all (1.0-1.1). `topicality` = IDF × log(smoothed uses per abstract), from the
corpus statistics shipped in rag/models/terms (`python -m train.term_stats`); IDF alone weighs how rare a word
is, which a name, a dataset or a number the question mentions also is. The judge weighs what each paper holds of
both (`TermEvidence`); no word list is read.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .errors import ModelError
from .lexical import _stemmer, query_terms, tokenize
from .text import bm25_stopwords

TERMS_PATH = Path(__file__).resolve().parent / "models" / "terms" / "terms.json.gz"
KEYWORD_USES_PATH = TERMS_PATH.with_name("keyword_uses.json.gz")
# Uses per abstract are smoothed toward 1 by this many pseudo-abstracts: a word in 3 abstracts, once each, is
# not known to be a request word, nor one used 3 times in 2 abstracts a topic.
BURST_PRIOR = 5


@dataclass(frozen=True)
class TermStats:
    documents: int
    terms: dict[str, tuple[int, int]]  # stem -> (abstracts using it, uses in all)

    def idf(self, term: str) -> float:
        """log(N / df), 0 to log(N); a term the corpus does not know is as rare as one abstract's."""
        df = self.terms.get(term, (1, 1))[0]
        return math.log(self.documents / df)

    def burstiness(self, term: str) -> float:
        """log(uses per abstract using it, smoothed): ~0 for a word used once when used ("quick", "need"), 1-2
        for a word a topic is named by ("unlearning" 1.8, "graph" 1.3)."""
        df, tf = self.terms.get(term, (1, 1))
        return math.log((tf + BURST_PRIOR) / (df + BURST_PRIOR))

    def topicality(self, term: str) -> float:
        """IDF × burstiness: high for a word a topic is named by, ~0 for request words."""
        return self.idf(term) * self.burstiness(term)


@lru_cache(maxsize=1)
def term_stats(path: Path = TERMS_PATH) -> TermStats:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        return TermStats(int(data["documents"]), {t: (int(v[0]), int(v[1])) for t, v in data["terms"].items()})
    except FileNotFoundError as exc:
        raise ModelError(f"the term statistics are not installed: {path} is missing (reinstall)") from exc
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc


@dataclass(frozen=True)
class TermEvidence:
    """What one paper holds of a question's words, weighed by topicality and by rarity."""

    topic_held: float  # topicality-weighted share of the question's terms the paper holds (1 with no weight)
    rare_held: float  # IDF-weighted share
    topic_missing: float  # the topicality of the most topical term it lacks (0 when it lacks none)
    rare_missing: float  # the IDF of the rarest term it lacks, over log(N) (0 to 1)
    missing: str | None  # that most topical lacking term (a stem), for the refusal to name


def term_evidence(question: str, texts: list[str], stats: TermStats | None = None) -> list[TermEvidence]:
    """For each of `texts`, what it holds of `question`'s stemmed, non-stopword terms."""
    stats = stats or term_stats()
    wanted = sorted(query_terms(question))
    if not wanted or not texts:
        return [TermEvidence(1.0, 1.0, 0.0, 0.0, None) for _ in texts]
    topical = {t: max(stats.topicality(t), 0.0) for t in wanted}
    rare = {t: stats.idf(t) for t in wanted}
    most = math.log(stats.documents)
    tokenized = tokenize(texts)
    vocabulary = {index: token for token, index in tokenized.vocab.items()}
    found = []
    for ids in tokenized.ids:
        held = {vocabulary[i] for i in ids}
        lacking = [t for t in wanted if t not in held]
        top = max(lacking, key=lambda t: topical[t], default=None)
        found.append(
            TermEvidence(
                _share(topical, held),
                _share(rare, held),
                topical[top] if top else 0.0,
                max((rare[t] for t in lacking), default=0.0) / most,
                top,
            )
        )
    return found


def _share(weight: dict[str, float], held: set[str]) -> float:
    total = sum(weight.values())
    return sum(w for t, w in weight.items() if t in held) / total if total > 0 else 1.0


def word_for(stem: str, question: str) -> str:
    """The question's own word for `stem` (the refusal names "k-means", not "k-mean")."""
    words = question.replace("?", " ").split()
    for word in words:
        cleaned = word.strip(".,;:!\"'()“”")
        if cleaned and stem in query_terms(cleaned):
            return cleaned
    return stem


# -- the words the field names topics with: authors' keywords ------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9][\w'\-]*")


def topic_stem(word: str) -> str | None:
    """`word` as keyword uses are counted: lowercased, the possessive dropped, Snowball-stemmed; None for a stopword
    of the lexical index (joining words are no topic word, whatever keywords hold them)."""
    word = word.lower().replace("'s", "").rstrip("'")
    if not word or word in _stopwords():
        return None
    return _stemmer().stemWord(word)


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    return frozenset(bm25_stopwords())


@lru_cache(maxsize=1)
def keyword_uses(path: Path = KEYWORD_USES_PATH) -> dict[str, int]:
    """stem -> how many times the corpus's author keywords (those on 2 papers or more) use it (train.keyword_uses)."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return {stem: int(n) for stem, n in json.load(f)["uses"].items()}
    except FileNotFoundError as exc:
        raise ModelError(f"the keyword statistics are not installed: {path} is missing (reinstall)") from exc
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc


def topic_words(text: str, min_uses: int) -> str:
    """`text` from its first to its last topic word: a word authors' keywords use `min_uses` times or more
    ("unlearning", "clustering", "robot"), or one the corpus's abstracts do not know (a coined name: "Zorblax",
    "DiVeQ"). The words a question wraps its topic in ("hi could u pls show me", "asap", "for my thesis background
    chapter", "as the main goal", "can you help") are known words in no keyword, whatever their wording, so no list
    of them is kept. `text` itself when it holds no topic word."""
    uses, known = keyword_uses(), term_stats().terms

    def names_topic(word: str) -> bool:
        stem = topic_stem(word)
        if stem is None:
            return False
        # As the lexical index reads it: the parts of a hyphenated word, two characters or more ("u" is no name).
        parts = [topic_stem(part) for part in re.findall(r"[^\W_]{2,}", word)]
        return uses.get(stem, 0) >= min_uses or any(part is not None and part not in known for part in parts)

    spans = [m.span() for m in _WORD.finditer(text) if names_topic(m.group(0))]
    if not spans:
        return text
    return text[spans[0][0] : spans[-1][1]]
