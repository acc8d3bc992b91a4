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
from .text import TYPO_MIN_LENGTH, bm25_stopwords

TERMS_PATH = Path(__file__).resolve().parent / "models" / "terms" / "terms.json.gz"
KEYWORD_USES_PATH = TERMS_PATH.with_name("keyword_uses.json.gz")
PROPER_NAMES_PATH = TERMS_PATH.with_name("proper_names.json.gz")
# Uses per abstract are smoothed toward 1 by this many pseudo-abstracts: a word in 3 abstracts, once each, is
# not known to be a request word, nor one used 3 times in 2 abstracts a topic.
BURST_PRIOR = 5


@dataclass(frozen=True)
class TermStats:
    documents: int
    terms: dict[str, tuple[int, int]]  # stem -> (abstracts using it, uses in all)

    def df(self, term: str) -> int:
        """How many of the corpus's abstracts write `term` (0 for a term it does not know)."""
        return self.terms.get(term, (0, 0))[0]

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


def keyword_form(word: str) -> str | None:
    """`word` as keyword uses are counted: lowercased, the possessive dropped, the plural folded ("networks" is
    "network"); None for a stopword of the lexical index (joining words are no topic word, whatever keywords hold
    them). Not stemmed: Snowball's stems join a request word to a topic ("preferably" and "preference", "related"
    and "relational", "recommend" and "recommendation"), which read "…, preferably" as a part of the topic."""
    word = word.lower().replace("'s", "").rstrip("'")
    if not word or word in _stopwords():
        return None
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def keyword_forms(text: str) -> list[str]:
    """The forms of `text`'s non-stopwords, in order. A hyphenated word is one ("multi-view", "test-time"): its
    parts alone are other words ("q" of "q-learning", "goal" of "goal-conditioned")."""
    return [form for form in map(keyword_form, _WORD.findall(text)) if form is not None]


def topic_stem(word: str) -> str | None:
    """`word` as the corpus's term statistics count it (Snowball-stemmed); None for a stopword."""
    word = word.lower().replace("'s", "").rstrip("'")
    if not word or word in _stopwords():
        return None
    return _stemmer().stemWord(word)


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    return frozenset(bm25_stopwords())


@dataclass(frozen=True)
class KeywordUses:
    uses: dict[str, int]  # word form -> papers carrying a keyword that holds it
    pairs: dict[str, int]  # "first second" -> papers carrying a keyword where the two follow each other


@lru_cache(maxsize=1)
def keyword_uses(path: Path = KEYWORD_USES_PATH) -> KeywordUses:
    """How the corpus's author keywords (those on 2 papers or more) use each word and each pair (train.keyword_uses)."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        return KeywordUses({w: int(n) for w, n in data["uses"].items()}, {p: int(n) for p, n in data["pairs"].items()})
    except FileNotFoundError as exc:
        raise ModelError(f"the keyword statistics are not installed: {path} is missing (reinstall)") from exc
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc


def topic_words(text: str, min_uses: int) -> str:
    """`text` from its first to its last topic word: a word authors' keywords use `min_uses` times or more
    ("unlearning", "clustering", "robot"), one a keyword pairs with its neighbour in `text` ("skill" before
    "discovery"), or a new name (`is_new_name`: "Zorblax", "DiVeQ"). The words a question wraps its topic in ("hi
    could u pls show me", "asap", "for my thesis background chapter", "as the main goal", "preferably") are words
    no keyword uses, or misspellings of them, whatever their wording, so no list of them is kept. `text` itself
    when it holds no topic word, or when `min_uses` is 0 (no cut)."""
    if not min_uses:
        return text
    keywords, known = keyword_uses(), term_stats().terms
    spans, forms = [], []
    for match in _WORD.finditer(text):
        form = keyword_form(match.group(0))
        if form is not None:
            spans.append(match.span())
            forms.append(form)

    def names_topic(i: int) -> bool:
        if keywords.uses.get(forms[i], 0) >= min_uses:
            return True
        neighbours = [f"{forms[i - 1]} {forms[i]}"] if i else []
        neighbours += [f"{forms[i]} {forms[i + 1]}"] if i + 1 < len(forms) else []
        if any(pair in keywords.pairs for pair in neighbours):
            return True
        word = text[spans[i][0] : spans[i][1]]
        if misspelt_keyword_word(forms[i], min_uses):  # "federeated learning" is about federated learning
            return True
        # As the lexical index reads it: the parts of a hyphenated word, two characters or more ("u" is no name).
        parts = [topic_stem(part) for part in re.findall(r"[^\W_]{2,}", word)]
        return any(part is not None and part not in known for part in parts) and is_new_name(word)

    topical = [span for i, span in enumerate(spans) if names_topic(i)]
    if not topical:
        return text
    return text[topical[0][0] : topical[-1][1]]


def keyword_pair(first: str, second: str) -> bool:
    """Whether authors' keywords write these two words one after the other: "skip connections" is a term of the
    field, so "with skip connections" leaves nothing out (rag.query.exclusion)."""
    a, b = keyword_form(first), keyword_form(second)
    return a is not None and b is not None and f"{a} {b}" in keyword_uses().pairs


def misspelt_keyword_word(form: str, min_uses: int) -> bool:
    """Whether `form`, no word of the language, is one edit (rapidfuzz's OSA distance: a swap of two neighbours is
    one) from a word keywords use `min_uses` times or more: "federeated" is "federated" mistyped. Two edits are
    more often another form of the word than a typo ("foundational", "foundation"), and under 5 letters a word
    has too many neighbours ("abt", "thx")."""
    if len(form) < TYPO_MIN_LENGTH or form in _english_words()[0]:
        return False
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    return process.extractOne(form, _keyword_words(min_uses), scorer=OSA.distance, score_cutoff=1) is not None


@lru_cache(maxsize=4)
def _keyword_words(min_uses: int) -> tuple[str, ...]:
    return tuple(sorted(w for w, n in keyword_uses().uses.items() if n >= min_uses))


def is_new_name(word: str) -> bool:
    """Whether `word`, which the corpus's abstracts do not know, names something new ("Zorblax", "DiVeQ") rather
    than being a word of the language ("tomorrow") or, written in lowercase, one edit from one: a typo or a
    shorthand ("recomend", "realted", "thx", "abt"). The embedding model's whole words are the language."""
    lower = word.lower()
    english, ordered = _english_words()
    if lower in english:
        return False
    if word != lower:
        return True
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    return process.extractOne(lower, ordered, scorer=OSA.distance, score_cutoff=1) is None


@lru_cache(maxsize=1)
def _english_words() -> tuple[frozenset[str], tuple[str, ...]]:
    from .embedding import load_tokenizer

    words = sorted(w for w in load_tokenizer().get_vocab() if w.isalpha() and w.islower())
    return frozenset(words), tuple(words)


# -- the names a question gives in ordinary capitalized words ---------------------------------------------------

# Capitalized words in a row ("Google Research Football", "Allegro"), each whole ("Info" of "InfoNCE" is none); a
# hyphen's tail is cut ("Chebyshev-based").
# Coined names (two capitals, or letters and digits: "DiVeQ", "CIFAR-10") are rag.query.specific_names'.
# What a sentence's first word follows: nothing, an end of sentence, a colon, a bracket or a quote.
_POSITIONAL = re.compile(r"(?:^|[.!?:(\"“]|\n)\s*$")
_CAPITALIZED_RUN = re.compile(r"(?<![\w\-])[A-Z][a-z]+(?![\w])(?:\s+[A-Z][a-z]+(?![\w]))*")


def proper_names(text: str) -> list[str]:
    """The names `text` writes in capitalized words: a dataset, benchmark, place, company or robot ("Cityscapes",
    "Kodak", "the Allegro hand", "Google Research Football"), each a run of capitalized words with a word the
    corpus's abstracts write capitalized inside a sentence at least half the time (train.proper_names), or one
    they never write that is no English word ("Zorblax"); the run's ordinary capitalized words at either end are
    left off ("Which", "Does", "Research" of "Research Football"). A sentence's first word is capitalized by its
    place, as the corpus was counted: it is a name only if no English word too ("Cityscapes …", not "Hi, …").
    Read from the corpus, not a list."""
    names = []
    for match in _CAPITALIZED_RUN.finditer(text):
        words = match.group(0).split()
        first_by_place = _POSITIONAL.search(text[: match.start()]) is not None
        named = [i for i, word in enumerate(words) if _is_proper(word, by_place=first_by_place and i == 0)]
        if named:
            names.append(" ".join(words[named[0] : named[-1] + 1]))
    return list(dict.fromkeys(names))


def _is_proper(word: str, by_place: bool) -> bool:
    lower = word.lower()
    if by_place and lower in _english_words()[0]:
        return False
    if lower in _proper_words():
        return True
    stem = topic_stem(word)
    return stem is not None and stem not in term_stats().terms and is_new_name(word)


@lru_cache(maxsize=1)
def _proper_words(path: Path = PROPER_NAMES_PATH) -> frozenset[str]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return frozenset(json.load(f))
    except FileNotFoundError as exc:
        raise ModelError(f"the proper names are not installed: {path} is missing (reinstall)") from exc
    except (OSError, ValueError, TypeError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc
