"""The eval's scoring: pure functions of ranked ids, cited ids, gold ids and answer text (groundedness also
embeds sentences), and `score_question`, every per-question metric at once.

Conventions (each documented where it is computed, tested on hand-computed cases):
- retrieval metrics are paper-level against `gold_ids`, undefined (None, left out of means) when gold is empty;
- citation precision is defined for answers that cite something; recall and F1 for answerable questions
  (an answer citing nothing scores 0 there);
- abstention accuracy is measured on `unanswerable` questions, the false-abstain rate on all others.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..text import content_words, split_sentences

if TYPE_CHECKING:
    from ..embedding import Embedder
    from .questions import Question

# The headline metrics, in report order, with how to read them.
METRICS: dict[str, str] = {
    "recall@1": "share of gold papers ranked first",
    "recall@5": "share of gold papers in the top 5",
    "recall@10": "share of gold papers in the top 10",
    "mrr": "1 / rank of the first gold paper",
    "ndcg@10": "ranking quality of gold papers in the top 10",
    "citation_precision": "cited ids that are gold (answers that cite something)",
    "citation_recall": "gold ids that are cited",
    "citation_f1": "harmonic mean of the two, per question",
    "dropped_rate": "citations removed because the paper was not retrieved",
    "must_mention": "required facts present in the answer",
    "abstention_accuracy": "unanswerable questions where the answer abstained",
    "false_abstain_rate": "answerable questions where the answer abstained",
    "groundedness": "answer sentences supported by the abstracts they cite",
    "judge_faithfulness": "LLM judge: answer supported by its cited abstracts (LLM backends)",
    "judge_correctness": "LLM judge: answer correct given the gold abstracts (LLM backends)",
}
LOWER_IS_BETTER = {"dropped_rate", "false_abstain_rate"}


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def recall_at(ranked: Sequence[str], gold: Iterable[str], n: int) -> float | None:
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(gold_set & set(_unique(ranked)[:n])) / len(gold_set)


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str]) -> float | None:
    gold_set = set(gold)
    if not gold_set:
        return None
    for rank, paper in enumerate(_unique(ranked), start=1):
        if paper in gold_set:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: Iterable[str], n: int) -> float | None:
    """Binary-relevance nDCG: DCG of the gold papers' ranks over the best possible DCG."""
    gold_set = set(gold)
    if not gold_set:
        return None
    dcg = sum(1.0 / math.log2(i + 2) for i, paper in enumerate(_unique(ranked)[:n]) if paper in gold_set)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold_set), n)))
    return dcg / ideal


def citation_scores(cited: Iterable[str], gold: Iterable[str]) -> tuple[float | None, float | None, float | None]:
    """(precision, recall, F1) of cited ids against gold; duplicates count once.

    Precision is None when nothing is cited; recall and F1 are None when gold is empty.
    """
    cited_set, gold_set = set(cited), set(gold)
    hits = len(cited_set & gold_set)
    precision = hits / len(cited_set) if cited_set else None
    if not gold_set:
        return precision, None, None
    recall = hits / len(gold_set)
    p = precision or 0.0
    f1 = 2 * p * recall / (p + recall) if p + recall else 0.0
    return precision, recall, f1


_LATEX_COMMAND = re.compile(r"\\(?:textbf|textit|emph|mathrm|mathbf|text|mathcal)\{([^{}]*)\}")


def normalize_text(text: str) -> str:
    """Lower-case text with LaTeX markup, quotes and dash variants folded, for must_mention matching."""
    text = _LATEX_COMMAND.sub(r"\1", text)
    text = re.sub(r"\\([%&_#$])", r"\1", text)
    text = text.replace("$", "").replace("{", "").replace("}", "").replace("**", "")
    text = re.sub(r"[‐‑‒–—−]", "-", text)
    text = re.sub(r"[“”„‟]", '"', text).replace("``", '"').replace("''", '"')
    text = re.sub(r"[‘’‚‛]", "'", text)
    return " ".join(text.lower().split())


def mention_coverage(answer: str, must_mention: Iterable[str]) -> float | None:
    wanted = [normalize_text(m) for m in must_mention if m.strip()]
    if not wanted:
        return None
    have = normalize_text(answer)
    return sum(1 for m in wanted if m in have) / len(wanted)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


# -- groundedness -----------------------------------------------------------------------------------------

_CITATION = re.compile(r"\[([^\[\]]+)\]")
SUPPORT_SIMILARITY = 0.70  # cosine between an answer sentence and its best abstract sentence
SUPPORT_OVERLAP = 0.60  # or this share of the sentence's content words found in one cited abstract


def answer_claims(answer: str) -> list[tuple[str, list[str]]]:
    """(sentence without citations, ids it cites) for each claim in an answer; lead lines are skipped."""
    claims = []
    for line in answer.splitlines():
        line = line.strip().removeprefix("- ").strip()
        if not line or (line.endswith(":") and "[" not in line):
            continue  # "3 papers match:" and similar headings claim nothing
        for sentence in split_sentences(line):
            ids = [p.strip() for group in _CITATION.findall(sentence) for p in re.split(r"[,;]", group)]
            text = _CITATION.sub("", sentence).strip()
            if len(text) > 3:
                claims.append((text, [i for i in ids if i]))
    # A citation at the end of a multi-sentence line covers the sentences before it.
    carried: list[tuple[str, list[str]]] = []
    pending: list[str] = []
    for text, ids in claims:
        pending.append(text)
        if ids:
            carried.extend((t, ids) for t in pending)
            pending = []
    carried.extend((t, []) for t in pending)
    return carried


def groundedness(answer: str, abstracts: dict[str, str], embedder: Embedder) -> float | None:
    """Share of answer sentences supported by an abstract they cite (embedding or lexical support)."""
    claims = answer_claims(answer)
    if not claims:
        return None
    supported = 0
    for text, ids in claims:
        cited = [abstracts[i] for i in ids if i in abstracts]
        if not cited:
            continue  # a sentence citing nothing (or nothing retrieved) is unsupported
        words = content_words(text)
        if words and any(len(words & content_words(a)) / len(words) >= SUPPORT_OVERLAP for a in cited):
            supported += 1
            continue
        sentences = [s for a in cited for s in split_sentences(a)]
        vectors = embedder.embed([text, *sentences])
        if float((vectors[1:] @ vectors[0]).max()) >= SUPPORT_SIMILARITY:
            supported += 1
    return supported / len(claims)


def score_question(
    q: Question,
    retrieved: list[str],
    answer_text: str,
    citations: list[str],
    dropped: list[str],
    abstained: bool,
    abstracts: dict[str, str],
    embedder: Embedder | None,
) -> dict[str, float | None]:
    """Every per-question metric for one answered question."""
    precision, recall, f1 = citation_scores(citations, q.gold_ids)
    answerable = q.type != "unanswerable" and bool(q.gold_ids)
    shown = len(set(citations)) + len(set(dropped))
    return {
        "recall@1": recall_at(retrieved, q.gold_ids, 1),
        "recall@5": recall_at(retrieved, q.gold_ids, 5),
        "recall@10": recall_at(retrieved, q.gold_ids, 10),
        "mrr": reciprocal_rank(retrieved, q.gold_ids),
        "ndcg@10": ndcg_at(retrieved, q.gold_ids, 10),
        "citation_precision": precision,
        "citation_recall": recall if answerable else None,
        "citation_f1": f1 if answerable else None,
        "dropped_rate": len(set(dropped)) / shown if shown else None,
        "must_mention": mention_coverage(answer_text, q.must_mention),
        "abstention_accuracy": (1.0 if abstained else 0.0) if not answerable else None,
        "false_abstain_rate": (1.0 if abstained else 0.0) if answerable else None,
        "groundedness": None if abstained or embedder is None else groundedness(answer_text, abstracts, embedder),
    }
