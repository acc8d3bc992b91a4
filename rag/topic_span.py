"""Which words of a request name its topic, read by a model: `TopicReader.span(text) -> str | None`.

Each word of the search text gets a score from one logistic model (rag/models/topic_span, `python -m
train.fit_topic_span`): the word itself and its two neighbours each side, its shape (capitals, digits, hyphens),
the punctuation around it, and how the field uses it (authors' keyword uses, whether a keyword pairs it with a
neighbour, corpus IDF and topicality, a new name, a typo of a keyword word). The topic runs from the first to the
last word read as topic: one contiguous phrase, so a joining word inside a topic ("learning with noisy labels")
stays, and the words a request wraps it in ("search:", "… for our reading group", "anyone in this set working on
…") fall away by their context, not by a list. Fitted on requests written by many people (the spent
phrasing sets, filled with the corpus's keywords and titles), so a wrapping word the field's keywords also use
("search", "group", "table") is read by where it stands.
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

TOPIC_SPAN_PATH = Path(__file__).resolve().parent / "models" / "topic_span" / "topic_span.json.gz"
_TOKEN = re.compile(r"[A-Za-z0-9][\w'\-]*")
# Two words each side: "papers on X", "X for my thesis", "working on X".
_WINDOW = 2


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    return [Token(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]


@lru_cache(maxsize=4096)
def _word_use(word: str) -> tuple[tuple[str, float], ...]:
    """How the field uses `word`, as features (cached: a word's use does not depend on the question)."""
    from .terms import is_new_name, keyword_form, keyword_uses, misspelt_keyword_word, term_stats, topic_stem

    form = keyword_form(word)
    if form is None:
        return (("stop", 1.0),)
    stats = term_stats()
    uses = keyword_uses().uses.get(form, 0)
    stem = topic_stem(word)
    known = stem is not None and stem in stats.terms
    log_n = math.log(stats.documents)
    out = [
        ("kw_log", math.log1p(uses) / math.log1p(1000)),
        ("kw_10", float(uses >= 10)),
        ("kw_none", float(uses == 0)),
        ("known", float(known)),
    ]
    if known and stem is not None:
        out += [("idf", stats.idf(stem) / log_n), ("topicality", min(stats.topicality(stem) / log_n, 2.0))]
    elif is_new_name(word):
        out.append(("new_name", 1.0))
    if misspelt_keyword_word(form, 10):
        out.append(("typo", 1.0))
    return tuple(out)


def _shape(word: str) -> list[tuple[str, float]]:
    out = []
    if word[0].isupper():
        out.append(("cap", 1.0))
    if len(word) > 1 and any(c.isupper() for c in word[1:]):
        out.append(("inner_cap", 1.0))
    if any(c.isdigit() for c in word):
        out.append(("digit", 1.0))
    if "-" in word:
        out.append(("hyphen", 1.0))
    return out


def _gap_marks(gap: str) -> list[str]:
    marks = [
        name
        for name, chars in (("colon", ":"), ("comma", ",;"), ("stop", "?.!"), ("paren", "()[]"), ("dash", "—–"))
        if any(c in gap for c in chars)
    ]
    if " - " in f" {gap} ":
        marks.append("dash")
    return marks


def features(text: str) -> list[dict[str, float]]:
    """Per token of `text` (`tokens`), its features by name."""
    toks = tokens(text)
    lower = [t.text.lower() for t in toks]
    uses = [dict(_word_use(t.text)) for t in toks]
    rows = []
    n = len(toks)
    for i, tok in enumerate(toks):
        row: dict[str, float] = {"bias": 1.0, f"w={lower[i]}": 1.0}
        for offset in range(1, _WINDOW + 1):
            row[f"w-{offset}={lower[i - offset] if i - offset >= 0 else '<s>'}"] = 1.0
            row[f"w+{offset}={lower[i + offset] if i + offset < n else '</s>'}"] = 1.0
        for name, value in uses[i].items():
            row[name] = value
        for side, j in (("prev", i - 1), ("next", i + 1)):
            if 0 <= j < n:
                row[f"{side}_kw_log"] = uses[j].get("kw_log", 0.0)
                row[f"{side}_stop"] = uses[j].get("stop", 0.0)
                row[f"{side}_known"] = uses[j].get("known", 0.0)
            else:
                row[f"{side}_edge"] = 1.0
        if i + 1 < n and _keyword_pair(tok.text, toks[i + 1].text):
            row["pair_next"] = 1.0
        if i and _keyword_pair(toks[i - 1].text, tok.text):
            row["pair_prev"] = 1.0
        for name, value in _shape(tok.text):
            row[name] = value
        before = text[toks[i - 1].end : tok.start] if i else text[: tok.start]
        after = text[tok.end : toks[i + 1].start] if i + 1 < n else text[tok.end :]
        for mark in _gap_marks(before):
            row[f"before_{mark}"] = 1.0
        for mark in _gap_marks(after):
            row[f"after_{mark}"] = 1.0
        row["position"] = i / max(n - 1, 1)
        rows.append(row)
    return rows


def _keyword_pair(first: str, second: str) -> bool:
    from .terms import keyword_pair

    return keyword_pair(first, second)


def topic_run(scores: list[float]) -> tuple[int, int] | None:
    """The [start, end) run from the first to the last word read as topic (log-odds above 0); None when none is.
    Inner words stay whatever their score: a long description's "(", "or", "e.g." joins its parts. The maximum-sum
    run reads the fitted requests better (phrasings_heldout22 0.916 against 0.884 the same papers as "which papers
    study X?") but cuts a description at its joins and loses list members on the question sets (docs/EVALUATION.md,
    "A topic read by a model")."""
    read = [i for i, score in enumerate(scores) if score > 0]
    return (read[0], read[-1] + 1) if read else None


@dataclass(frozen=True)
class TopicReader:
    """The fitted weights (topic_span.json.gz): one logistic model over a word's features."""

    weights: dict[str, float]
    bias: float

    def scores(self, text: str) -> list[float]:
        """Per token of `text`, the log-odds that it names the topic."""
        return [self.bias + sum(self.weights.get(k, 0.0) * v for k, v in row.items()) for row in features(text)]

    def span(self, text: str) -> str | None:
        """The words of `text` naming its topic (`topic_run` of `scores`); None when no word does."""
        found = topic_run(self.scores(text))
        if found is None:
            return None
        toks = tokens(text)
        return text[toks[found[0]].start : toks[found[1] - 1].end]


@lru_cache(maxsize=1)
def load_topic_reader(path: Path = TOPIC_SPAN_PATH) -> TopicReader:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        return TopicReader({k: float(v) for k, v in data["weights"].items()}, float(data["bias"]))
    except FileNotFoundError as exc:
        raise ModelError(
            f"the topic reader is not installed: {path} is missing (reinstall, or RAG_TOPIC_CUT=keywords)"
        ) from exc
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc
