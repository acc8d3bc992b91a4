"""What a paper must hold to answer: every part of a topic (its facets), or, for a count question, a count.

"adversarial robustness of graph neural networks" names two things. A paper on graph neural networks that never
mentions adversarial robustness does not answer it, however close its embedding and however high its
cross-encoder score: both reward the half that matches (docs/EVALUATION.md measures it). So a topic is cut into
facets at the words that join two things ("of", "for", "in", "with", "and", ...), a facet's alternatives ("A or
B", "A / B", "A (B)", "A (B, C and D)") are kept together, and a paper's share of a facet is the IDF-weighted
share of the facet's stemmed terms it contains (the best alternative's), each word weighing by its rarity in the
store: a paper on federated learning holds only part of "federated unlearning". A paper answers the topic when it
holds every facet (`Policy.facet_bar`).

Answering (rag.answer, rag.evidence) reads the coverage of topic questions only: a question about a detail
is phrased in words the abstract need not use. One kind of detail question has a checkable answer, though: "how
many parameters does X have?" is answered by a sentence giving a number of parameters ("against 54 baselines",
"on 300 datasets"), and by nothing else (`gives_count`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import TYPE_CHECKING

from .lexical import query_terms, tokenize
from .lexicon import ACRONYM_SMALL_WORDS as _SMALL_WORDS
from .lexicon import COUNT_NUMBER as _COUNT_NUMBER
from .lexicon import FACET_ALTERNATIVE as _ALTERNATIVE
from .lexicon import FACET_JOIN as _JOIN
from .lexicon import GENERIC_WORDS as _GENERIC_WORDS
from .types import Share

if TYPE_CHECKING:
    from .lexical import LexicalIndex

# The words that cut a topic into facets, the alternatives inside one, the generic words dropped from them, the
# small words an acronym skips and the number words of a count are in rag.lexicon.


@lru_cache(maxsize=1)
def _generic_stems() -> frozenset[str]:
    return frozenset(query_terms(_GENERIC_WORDS))


@dataclass(frozen=True)
class Facet:
    """One part of a topic as written ("adversarial robustness"), with each alternative's stemmed terms."""

    text: str
    alternatives: tuple[frozenset[str], ...]


# A bracketed aside, closed or running to the end (a question's closing bracket goes with its "?"). A format
# pattern, not a word list.
_ASIDE = re.compile(r"\(([^()]*)(?:\)|$)")


@lru_cache(maxsize=256)
def facets(topic: str) -> tuple[Facet, ...]:
    """The parts of `topic` that a paper must each hold; parts with no topical word are left out. A bracketed
    aside lists instances of the part it follows ("segmentation (semantic, instance, medical)"): each listed item
    is an alternative of that part, not a part of its own."""
    generic = _generic_stems()
    found = []
    for part in _parts(topic):
        alternatives = []
        outside = _ASIDE.sub(" ", part)
        listed = [item for aside in _ASIDE.findall(part) for item in _JOIN.split(f" {aside} ")]
        for alternative in (piece for text in (outside, *listed) for piece in _ALTERNATIVE.split(text)):
            terms = frozenset(query_terms(alternative)) - generic
            if terms:
                alternatives.append(terms)
        if alternatives:
            found.append(Facet(part.strip(" ,.?!()"), tuple(dict.fromkeys(alternatives))))
    return tuple(found)


def _parts(topic: str) -> list[str]:
    """`topic` cut at the words joining its parts, but not inside a bracketed aside."""
    asides = [match.span() for match in _ASIDE.finditer(topic)]
    cuts = [m for m in _JOIN.finditer(topic) if not any(start < m.start() < end for start, end in asides)]
    edges = [0, *(edge for m in cuts for edge in m.span()), len(topic)]
    return [topic[edges[i] : edges[i + 1]] for i in range(0, len(edges), 2)]


def _idf(index: LexicalIndex, term: str) -> float:
    """BM25's inverse document frequency over the store's chunks (a term no chunk holds weighs most)."""
    total = len(index.chunk_ids)
    df = index.document_frequency(term)
    return math.log(1.0 + (total - df + 0.5) / (df + 0.5))


# "llms" is held by a paper that writes "large language models", "gnns" by "graph neural networks": a short
# question word is also held where the text spells it out as the initials of consecutive words, with the small
# words or without them ("rlhf": reinforcement learning from human feedback; "moe": mixture of experts). Three
# letters at least: "rl" would be "representation learning" as often as not.
_ACRONYM = re.compile(r"[a-z]{3,5}")
_TEXT_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def _spelled_out(acronyms: set[str], text: str) -> set[str]:
    """The `acronyms` (stemmed query words such as "llms", "rlhf") that `text` writes out word by word."""
    if not acronyms:
        return set()
    words = [w.lower() for w in _TEXT_WORD.findall(text.replace("-", " "))]
    every = "".join(w[0] for w in words)
    content = "".join(w[0] for w in words if w not in _SMALL_WORDS)
    found = set()
    for acronym in acronyms:
        letters = acronym[:-1] if acronym.endswith("s") and len(acronym) > 3 else acronym
        if len(letters) >= 3 and (letters in every or letters in content):
            found.add(acronym)
    return found


def _weight(facet: Facet, weight: dict[str, float]) -> float:
    return max(sum(weight[t] for t in alternative) for alternative in facet.alternatives)


def weighty(parts: tuple[Facet, ...], weight: dict[str, float], light: float) -> tuple[Facet, ...]:
    """`parts` less the facets weighing under `light` times the heaviest (by IDF): too light to be a condition of
    their own ("learning" in "learning with noisy labels for classification")."""
    heaviest = max(_weight(f, weight) for f in parts)
    return tuple(f for f in parts if _weight(f, weight) >= light * heaviest)


_HYPHENATED = re.compile(r"\b[A-Za-z]+(?:-[A-Za-z]+)+\b")


def _closed_up(match: re.Match) -> str:
    return match.group(0).replace("-", "")


def facet_shares(
    topic: str,
    texts: list[str],
    index: LexicalIndex,
    light: float,
    focus: Callable[[str], float] | None = None,
) -> list[tuple[Share, ...]]:
    """For each of `texts`, each facet of `topic` with the weighted share of it the text holds (its best
    alternative's); facets too light to be a condition (`light`: see `weighty`) are left out. A term weighs its
    IDF in the store, times `focus(term)` when given (how much the field's use of the word says it names a topic:
    rag.terms, `Policy.facet_focus`)."""
    parts = facets(topic)
    if not parts or not texts:
        return [()] * len(texts)
    terms = {t for f in parts for a in f.alternatives for t in a}
    # A floor keeps every weight positive: a facet's total is never 0 (`_held_share`).
    weight = {t: _idf(index, t) * (max(focus(t), 1e-3) if focus else 1.0) for t in terms}
    parts = weighty(parts, weight, light)
    # Each text also with its hyphens closed up: "pre-trained" holds "pretrained", "multi-view" "multiview".
    tokenized = tokenize([f"{t} {_HYPHENATED.sub(_closed_up, t)}" if "-" in t else t for t in texts])
    vocabulary = {i: token for token, i in tokenized.vocab.items()}
    acronyms = {t for f in parts for a in f.alternatives for t in a if _ACRONYM.fullmatch(t)}
    shares = []
    for text, ids in zip(texts, tokenized.ids, strict=True):
        held = {vocabulary[i] for i in ids} | _spelled_out(acronyms, text)
        shares.append(tuple((f.text, max(_held_share(a, held, weight) for a in f.alternatives)) for f in parts))
    return shares


def _held_share(alternative: frozenset[str], held: set[str], weight: dict[str, float]) -> float:
    # An alternative has a term (`facets` keeps no empty one) and every IDF is positive: the total is never 0.
    return sum(weight[t] for t in alternative if t in held) / sum(weight[t] for t in alternative)


# A paper holds a facet when it holds at least `bar` of it (by IDF weight; `Policy.facet_bar`), and answers a
# topic question when it holds every facet.


def holds_topic(shares: tuple[Share, ...] | None, bar: float) -> bool:
    """Whether a paper with these facet shares answers the topic (True when the question names no topic)."""
    return not shares or all(share >= bar for _, share in shares)


def facets_held(shares: tuple[Share, ...] | None, bar: float) -> int:
    """How many facets a paper holds (an abstention names the paper holding most)."""
    return sum(share >= bar for _, share in shares or ())


def missing_text(shares: tuple[Share, ...], bar: float) -> str:
    """What an abstention says the closest paper lacks: "covers “graph neural networks” but not “adversarial
    robustness”"; "" when it lacks every facet."""
    have = [f"“{text}”" for text, share in shares if share >= bar]
    lack = [f"“{text}”" for text, share in shares if share < bar]
    if not have or not lack:
        return ""
    return f"covers {' and '.join(have)} but not {' or '.join(lack)}"


# -- count questions --------------------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z][\w\-]*")


def gives_count(counted: str, text: str, window: int) -> bool:
    """Whether `text` gives a number of `counted` (stemmed): a count followed within `window` words by it
    (`Policy.count_window`: "18 state-of-the-art PU methods")."""
    wanted = query_terms(counted)
    if not wanted:
        return True  # nothing checkable: not this rule's to refuse
    for number in _COUNT_NUMBER.finditer(text):
        following = islice(_WORD.finditer(text, number.end()), window)
        if wanted & query_terms(" ".join(word.group(0) for word in following)):
            return True
    return False
