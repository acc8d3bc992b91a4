"""Misspelled words in a question ("spiking nueral networks"), corrected against the words the store holds.

A word is left alone when the embedding model's vocabulary knows it as a whole word (real English, common
technical terms) or when its stem is in the store's BM25 vocabulary (coined names: "syre", "AGREST"). Any other
word of five letters or more is replaced by the closest dictionary word (the model's whole words whose stem the
store holds, and the store's alphabetic stems themselves) within one edit (a swap of two neighbours counts as
one: rapidfuzz's OSA distance), or two for words of eight letters or more, and at most one letter longer or
shorter ("backprop" is an abbreviation, not a typo); ties go to the word the store uses in more chunks. A word
absent from both vocabularies with no close neighbour ("zorblax") stays, so abstention still sees it.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import TYPE_CHECKING

from .embedding import load_tokenizer
from .lexical import _stemmer
from .text import TYPO_MIN_LENGTH

if TYPE_CHECKING:
    from .lexical import LexicalIndex

_WORD = re.compile(r"[A-Za-z]+")


class Speller:
    def __init__(self, index: LexicalIndex) -> None:
        self.index = index
        self.stemmer = _stemmer()
        self.stems = index.bm25.vocab_dict if index.chunk_ids else {}
        self.known_words = {w for w in load_tokenizer().get_vocab() if w.isalpha() and w.islower()}

    @functools.cached_property
    def dictionary(self) -> list[str]:
        """Correction candidates, most-used first so that ties go to the common word; built on the first unknown
        word (most questions have none)."""
        words = sorted(self.known_words)
        usable = {
            w: s for w, s in zip(words, self.stemmer.stemWords(words), strict=True) if len(w) >= 4 and s in self.stems
        }
        # The store's own stems that read as words too ("gaussian" is no whole word of the model's vocabulary).
        usable.update({s: s for s in self.stems if s.isalpha() and len(s) >= TYPO_MIN_LENGTH and s not in usable})
        frequency = self.index.document_frequency
        return sorted(usable, key=lambda w: (-frequency(usable[w]), w))

    def known(self, word: str) -> bool:
        lower = word.lower()
        return lower in self.known_words or self.stemmer.stemWord(lower) in self.stems

    def suggest(self, word: str) -> str | None:
        """The correction for one word, or None when it is known or nothing is close enough."""
        if len(word) < TYPO_MIN_LENGTH or self.known(word):
            return None
        from rapidfuzz import process
        from rapidfuzz.distance import OSA

        limit = 1 if len(word) < 8 else 2
        found = process.extract(word.lower(), self.dictionary, scorer=OSA.distance, score_cutoff=limit, limit=None)
        # A typo rarely changes a word's length by more than a letter; "backprop" is "backpropag"'s abbreviation.
        found = [f for f in found if abs(len(f[0]) - len(word)) <= 1]
        if not found:
            return None
        best = min(distance for _, distance, _ in found)
        # Lowest distance; among those, the dictionary's order (most-used first): extract's `index` keeps it.
        return min((index, match) for match, distance, index in found if distance == best)[1]

    def correct(self, text: str) -> str:
        """`text` with each misspelled word replaced (its case kept when it was capitalised)."""

        def fix(match: re.Match[str]) -> str:
            word = match.group(0)
            suggestion = self.suggest(word)
            if suggestion is None:
                return word
            return suggestion.capitalize() if word[0].isupper() else suggestion

        return _WORD.sub(fix, text)


_lock = threading.Lock()
_spellers: dict[int, tuple[LexicalIndex, Speller]] = {}


def speller_for(index: LexicalIndex) -> Speller:
    """One speller per loaded index (its dictionary depends on the store's vocabulary)."""
    with _lock:
        cached = _spellers.get(id(index))
        if cached is None or cached[0] is not index:
            _spellers.clear()
            cached = (index, Speller(index))
            _spellers[id(index)] = cached
        return cached[1]
