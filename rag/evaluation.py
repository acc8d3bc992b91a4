"""The eval harness: run the real pipeline over a question set and score retrieval, citations, coverage,
abstention, groundedness and latency — per question, by type, and overall.

Metric conventions (each documented where it is computed, tested on hand-computed cases):
- retrieval metrics are paper-level against `gold_ids`, undefined (left out of means) when gold is empty;
- citation precision is averaged over answers that cite something; recall and F1 over answerable questions
  (an answer citing nothing scores 0 there);
- abstention accuracy is measured on `unanswerable` questions, the false-abstain rate on all others.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputError

if TYPE_CHECKING:
    from .config import Settings
    from .embedding import Embedder
    from .store import Store

QUESTION_TYPES = ("topic", "fact", "paraphrase", "multi", "unanswerable", "venue")
RETRIEVAL_DEPTH = 10  # recall@10 and nDCG@10 need ten papers whatever k the answer uses

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


# -- question sets -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    qid: str
    type: str
    question: str
    gold_ids: tuple[str, ...]
    must_mention: tuple[str, ...] = ()
    rationale: str = ""


def default_questions_file() -> Path:
    """evals/questions.jsonl: in the installed wheel, or the repo's `evals/` in a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_data" / "evals" / "questions.jsonl", here.parent / "evals" / "questions.jsonl"):
        if candidate.is_file():
            return candidate
    raise InputError("no question set given and the bundled evals/questions.jsonl is missing")


def load_questions(paths: Iterable[Path]) -> list[Question]:
    """Questions from JSONL files; a malformed line is refused naming file and line."""
    questions: list[Question] = []
    seen: dict[str, str] = {}
    for path in paths:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            raise InputError(f"{path}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read ({exc.__class__.__name__})") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{where}: invalid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise InputError(f"{where}: expected a JSON object")
            for key in ("qid", "type", "question", "gold_ids"):
                if key not in row:
                    raise InputError(f"{where}: missing {key!r}")
            if not isinstance(row["gold_ids"], list) or not isinstance(row.get("must_mention", []), list):
                raise InputError(f"{where}: 'gold_ids' and 'must_mention' must be lists")
            qid = str(row["qid"])
            if qid in seen:
                raise InputError(f"{where}: duplicate qid {qid!r} (first at {seen[qid]})")
            seen[qid] = where
            questions.append(
                Question(
                    qid=qid,
                    type=str(row["type"]),
                    question=str(row["question"]),
                    gold_ids=tuple(str(g) for g in row["gold_ids"]),
                    must_mention=tuple(str(m) for m in row.get("must_mention", [])),
                    rationale=str(row.get("rationale", "")),
                )
            )
    if not questions:
        raise InputError("the question set is empty")
    return questions


# -- metrics (pure functions) --------------------------------------------------------------------------


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
    from .text import split_sentences

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
    from .text import content_words, split_sentences

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


# -- running ------------------------------------------------------------------------------------------------


@dataclass
class QuestionResult:
    qid: str
    type: str
    question: str
    gold_ids: list[str]
    retrieved: list[str]
    answer: str
    citations: list[str]
    dropped_citations: list[str]
    abstained: bool
    metrics: dict[str, float | None]
    timings_ms: dict[str, float]
    usage: dict | None = None
    top_score: float | None = None  # the best retrieved paper's score: what abstention is decided on


@dataclass
class Run:
    retriever: str
    backend: str
    k: int
    questions: list[QuestionResult] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return summarize(self.questions)

    def to_json(self) -> dict[str, Any]:
        summary = self.summary()
        return {
            "retriever": self.retriever,
            "backend": self.backend,
            "k": self.k,
            "overall": summary["overall"],
            "by_type": summary["by_type"],
            "latency_ms": summary["latency_ms"],
            "tokens": summary["tokens"],
            "questions": [q.__dict__ for q in self.questions],
        }


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


def summarize(results: Sequence[QuestionResult]) -> dict[str, Any]:
    def block(rows: Sequence[QuestionResult]) -> dict[str, Any]:
        names = list(METRICS)
        out: dict[str, Any] = {"n": len(rows)}
        for name in names:
            value = mean(r.metrics.get(name) for r in rows)
            if value is not None:
                out[name] = round(value, 4)
        return out

    by_type = {t: block([r for r in results if r.type == t]) for t in _types_in(results)}
    latency = {}
    for stage in ("retrieve", "generate", "total"):
        values = [r.timings_ms[stage] for r in results if stage in r.timings_ms]
        latency[stage] = {"p50": _round(percentile(values, 50)), "p95": _round(percentile(values, 95))}
    tokens = [r.usage.get("total_tokens", 0) for r in results if r.usage]
    return {
        "overall": block(results),
        "by_type": by_type,
        "latency_ms": latency,
        "tokens": {"total": sum(tokens), "per_question": round(sum(tokens) / len(tokens), 1)} if tokens else None,
    }


def _types_in(results: Sequence[QuestionResult]) -> list[str]:
    present = {r.type for r in results}
    return [t for t in QUESTION_TYPES if t in present] + sorted(present - set(QUESTION_TYPES))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def run_eval(
    questions: Sequence[Question],
    store: Store,
    embedder: Embedder,
    settings: Settings,
    retriever: str,
    backend_name: str,
    k: int,
    judge: Judge | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> Run:
    """Answer every question with the real pipeline and score it."""
    from .answer import answer_from_sources
    from .backends import get_backend
    from .query import parse
    from .retrieval import retrieve

    backend = get_backend(backend_name, settings, embedder)
    run = Run(retriever=retriever, backend=backend.name, k=k)
    for done, q in enumerate(questions, start=1):
        started = time.perf_counter()
        found = retrieve(parse(q.question), store, embedder, settings, k=max(k, RETRIEVAL_DEPTH), mode=retriever)
        retrieved = [s.id for s in found.sources]
        sources = found.sources[:k]
        answer = answer_from_sources(found.query, sources, backend, settings, None, found.elapsed_ms, started)
        abstracts = {s.id: s.abstract for s in sources}
        metrics = score_question(
            q,
            retrieved,
            answer.answer,
            answer.citations,
            answer.dropped_citations,
            answer.abstained,
            abstracts,
            embedder,
        )
        if judge is not None and not answer.abstained:
            gold = store.get_papers(q.gold_ids)
            metrics.update(judge.grade(q, answer.answer, abstracts, {i: p.abstract for i, p in gold.items()}))
        run.questions.append(
            QuestionResult(
                qid=q.qid,
                type=q.type,
                question=q.question,
                gold_ids=list(q.gold_ids),
                retrieved=retrieved,
                answer=answer.answer,
                citations=answer.citations,
                dropped_citations=answer.dropped_citations,
                abstained=answer.abstained,
                metrics=metrics,
                timings_ms={name: round(v, 1) for name, v in answer.timings_ms.items()},
                usage=answer.usage,
                top_score=round(max(s.score for s in sources), 4) if sources else None,
            )
        )
        if on_progress:
            on_progress(done)
    return run


class Judge:
    """LLM-as-judge faithfulness and correctness through the configured OpenAI-compatible endpoint."""

    def __init__(self, settings: Settings) -> None:
        from .llm import LLM

        # Without the circuit breaker: a grade that failed is only missing, and must not open the breaker that
        # the answers of the next questions go through (the eval does not fall back: it would stop there).
        self.llm = LLM(settings, breakers=None)
        self.settings = settings

    def grade(self, q: Question, answer: str, cited: dict[str, str], gold: dict[str, str]) -> dict[str, float | None]:
        from .errors import LLMError
        from .prompts import load_prompt, render

        def block(papers: dict[str, str]) -> str:
            return "\n".join(f'<paper id="{i}">\n{text}\n</paper>' for i, text in papers.items()) or "(none)"

        prompt = render(
            load_prompt("judge.md", self.settings.prompts_dir),
            question=q.question,
            answer=answer,
            cited=block(cited),
            gold=block(gold),
            must_mention=", ".join(q.must_mention) or "(none)",
        )
        try:  # the client's retries and one-line errors; a failed grade is missing, not fatal
            text = self.llm.complete([{"role": "user", "content": prompt}], 200)
        except LLMError:
            return {"judge_faithfulness": None, "judge_correctness": None}
        return parse_judgement(text)


def parse_judgement(text: str) -> dict[str, float | None]:
    """The judge's two scores from its reply (a JSON object, possibly inside other text); None if absent."""
    match = re.search(r"\{.*\}", text, re.S)
    scores: dict[str, float | None] = {"judge_faithfulness": None, "judge_correctness": None}
    if not match:
        return scores
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        return scores
    for key in ("faithfulness", "correctness"):
        value = data.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            scores[f"judge_{key}"] = min(1.0, max(0.0, float(value)))
    return scores


def threshold_sweep(questions: Sequence[dict[str, Any]], max_false_abstain: float = 0.10) -> dict[str, Any]:
    """Abstention thresholds tried on the run's top scores: accuracy on unanswerable questions, false
    abstentions on the rest, and the threshold with the best balanced accuracy within `max_false_abstain`."""
    unanswerable = [q["top_score"] or 0.0 for q in questions if q["type"] == "unanswerable"]
    answerable = [q["top_score"] or 0.0 for q in questions if q["type"] != "unanswerable" and q["gold_ids"]]
    if not unanswerable or not answerable:
        return {"rows": [], "best": None}
    rows = []
    for step in range(0, 81):
        t = round(0.20 + step * 0.005, 3)
        accuracy = sum(s < t for s in unanswerable) / len(unanswerable)
        false_abstain = sum(s < t for s in answerable) / len(answerable)
        rows.append({"threshold": t, "abstention_accuracy": accuracy, "false_abstain_rate": false_abstain,
                     "balanced_accuracy": (accuracy + 1 - false_abstain) / 2})  # fmt: skip
    allowed = [r for r in rows if r["false_abstain_rate"] <= max_false_abstain] or rows
    best = max(allowed, key=lambda r: (r["balanced_accuracy"], -r["threshold"]))
    return {"rows": rows, "best": best, "max_false_abstain": max_false_abstain}


def sweep_table(sweep: dict[str, Any], every: float = 0.05) -> str:
    lines = ["| threshold | abstention_accuracy | false_abstain_rate | balanced_accuracy |", "|---|---|---|---|"]
    best = sweep["best"]
    for row in sweep["rows"]:
        if abs(row["threshold"] / every - round(row["threshold"] / every)) < 1e-6 or row is best:
            mark = " **best**" if row is best else ""
            lines.append(
                f"| {row['threshold']:.3f}{mark} | {row['abstention_accuracy']:.3f} | "
                f"{row['false_abstain_rate']:.3f} | {row['balanced_accuracy']:.3f} |"
            )
    return "\n".join(lines)


# -- reports ------------------------------------------------------------------------------------------------


def results_payload(runs: Sequence[Run], meta: dict[str, Any]) -> dict[str, Any]:
    return {"meta": meta, "runs": [run.to_json() for run in runs]}


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def overall_table(runs: Sequence[dict[str, Any]]) -> str:
    """Markdown: one row per run (retriever), one column per metric."""
    metrics = [m for m in METRICS if any(m in r["overall"] for r in runs)]
    header = "| retriever | backend | n | " + " | ".join(metrics) + " |"
    lines = [header, "|" + "---|" * (3 + len(metrics))]
    for r in runs:
        cells = [r["retriever"], r["backend"], str(r["overall"]["n"])] + [_fmt(r["overall"].get(m)) for m in metrics]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


TYPE_TABLE_METRICS = (
    "recall@5",
    "mrr",
    "citation_precision",
    "citation_recall",
    "citation_f1",
    "must_mention",
    "abstention_accuracy",
    "false_abstain_rate",
    "groundedness",
)


def by_type_table(run: dict[str, Any]) -> str:
    """Markdown: one row per question type (and overall) for one run."""
    metrics = [m for m in TYPE_TABLE_METRICS if any(m in block for block in run["by_type"].values())]
    lines = ["| type | n | " + " | ".join(metrics) + " |", "|" + "---|" * (2 + len(metrics))]
    rows = [*run["by_type"].items(), ("**overall**", run["overall"])]
    for name, block in rows:
        lines.append("| " + " | ".join([name, str(block["n"])] + [_fmt(block.get(m)) for m in metrics]) + " |")
    return "\n".join(lines)


def latency_line(run: dict[str, Any]) -> str:
    parts = [
        f"{stage} p50 {v['p50']:.0f} ms / p95 {v['p95']:.0f} ms"
        for stage, v in run["latency_ms"].items()
        if v["p50"] is not None
    ]
    tokens = run.get("tokens")
    if tokens:
        parts.append(f"tokens {tokens['total']} ({tokens['per_question']} per question)")
    return "; ".join(parts)


def worst_questions(run: dict[str, Any], n: int = 8) -> list[dict[str, Any]]:
    """The questions that went worst: lowest recall@5, then citation F1 (answerable); wrong abstention."""

    def badness(q: dict[str, Any]) -> tuple:
        m = q["metrics"]
        if q["type"] == "unanswerable":
            return (0.0 if m.get("abstention_accuracy") == 0 else 2.0, 0.0)
        return (m.get("recall@5") or 0.0, m.get("citation_f1") or 0.0)

    return sorted(run["questions"], key=badness)[:n]


def markdown_report(payload: dict[str, Any]) -> str:
    meta = payload["meta"]
    out = [
        "# Eval report",
        "",
        f"{meta['n_questions']} questions from {', '.join(meta['files'])}; backend `{meta['backend']}`, "
        f"k={meta['k']}, store {meta['store']}, {meta['papers']} papers; rag {meta['version']}, {meta['date']}.",
        "",
        "## Overall",
        "",
        overall_table(payload["runs"]),
        "",
    ]
    for run in payload["runs"]:
        out += [f"## By type — retriever `{run['retriever']}`", "", by_type_table(run), "", latency_line(run), ""]
    run = payload["runs"][0]
    sweep = threshold_sweep(run["questions"])
    if sweep["best"]:
        best = sweep["best"]
        out += [
            f"## Abstention threshold — retriever `{run['retriever']}`",
            "",
            f"Abstain when the best paper scores below the threshold. Best balanced accuracy with at most "
            f"{sweep['max_false_abstain']:.0%} false abstentions: **{best['threshold']:.3f}** (abstains on "
            f"{best['abstention_accuracy']:.0%} of unanswerable questions, wrongly on "
            f"{best['false_abstain_rate']:.0%} of the rest).",
            "",
            sweep_table(sweep),
            "",
        ]
    out += [f"## Worst questions — retriever `{run['retriever']}`", ""]
    for q in worst_questions(run):
        m = q["metrics"]
        out += [
            f"### {q['qid']} ({q['type']}): {q['question']}",
            "",
            f"gold {q['gold_ids'] or '[]'} · retrieved {q['retrieved'][:5]} · cited {q['citations']} · "
            f"recall@5 {_fmt(m.get('recall@5'))} · citation F1 {_fmt(m.get('citation_f1'))} · "
            f"abstained {q['abstained']}",
            "",
            "```text",
            q["answer"],
            "```",
            "",
        ]
    out += ["## Metrics", ""] + [f"- **{name}**: {text}" for name, text in METRICS.items()]
    return "\n".join(out) + "\n"


CHART_METRICS = ("recall@5", "citation_precision", "citation_f1", "must_mention", "abstention_accuracy")


def write_chart(payload: dict[str, Any], path: Path) -> bool:
    """A grouped bar chart of the headline metrics by question type (first run). False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    run = payload["runs"][0]
    types = [*run["by_type"], "overall"]
    blocks = [*run["by_type"].values(), run["overall"]]
    width = 0.8 / len(CHART_METRICS)
    fig, ax = plt.subplots(figsize=(11, 4.5))
    for i, metric in enumerate(CHART_METRICS):
        values = [block.get(metric) or 0.0 for block in blocks]
        positions = [x + (i - (len(CHART_METRICS) - 1) / 2) * width for x in range(len(types))]
        ax.bar(positions, values, width, label=metric)
    ax.set_xticks(range(len(types)), types)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score")
    ax.set_title(f"rag eval — retriever {run['retriever']}, backend {run['backend']}, k={run['k']}")
    ax.legend(ncols=len(CHART_METRICS), fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.08))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def compare_table(a: dict[str, Any], b: dict[str, Any], a_name: str, b_name: str) -> str:
    """Side by side: each metric overall and recall@5 / citation F1 by type, for runs matched by retriever."""
    runs_b = {r["retriever"]: r for r in b["runs"]}
    lines = []
    for run_a in a["runs"]:
        run_b = runs_b.get(run_a["retriever"]) or b["runs"][0]
        lines += [
            f"retriever {run_a['retriever']} ({a_name}) vs {run_b['retriever']} ({b_name})",
            "",
            f"| metric | {a_name} | {b_name} | Δ |",
            "|---|---|---|---|",
        ]
        rows = [(m, run_a["overall"].get(m), run_b["overall"].get(m)) for m in METRICS]
        for t in dict.fromkeys([*run_a["by_type"], *run_b["by_type"]]):
            for m in ("recall@5", "citation_f1", "abstention_accuracy"):
                rows.append((f"{t} {m}", run_a["by_type"].get(t, {}).get(m), run_b["by_type"].get(t, {}).get(m)))
        for name, va, vb in rows:
            if va is None and vb is None:
                continue
            delta = "–" if va is None or vb is None else f"{vb - va:+.3f}"
            if delta not in ("–", "+0.000", "-0.000"):
                better = (vb < va) if name.split()[-1] in LOWER_IS_BETTER else (vb > va)
                delta += " ▲" if better else " ▼"
            lines.append(f"| {name} | {_fmt(va)} | {_fmt(vb)} | {delta} |")
        lines.append("")
    return "\n".join(lines)


def parse_floor(spec: str) -> tuple[str, str | None, float]:
    """ "recall@5=0.8" or "topic:recall@5=0.8" → (metric, type or None, floor)."""
    name, sep, value = spec.partition("=")
    if not sep:
        raise InputError(f"--fail-under {spec!r}: expected METRIC=VALUE, e.g. recall@5=0.8")
    qtype, _, metric = name.strip().rpartition(":")
    if metric not in METRICS:
        raise InputError(f"--fail-under: unknown metric {metric!r} (choose from: {', '.join(METRICS)})")
    try:
        floor = float(value)
    except ValueError:
        raise InputError(f"--fail-under {spec!r}: {value!r} is not a number") from None
    return metric, qtype or None, floor


def check_floors(run: dict[str, Any], floors: Sequence[tuple[str, str | None, float]]) -> list[str]:
    """The floors this run falls below, as readable strings (empty when all hold)."""
    failures = []
    for metric, qtype, floor in floors:
        block = run["by_type"].get(qtype, {}) if qtype else run["overall"]
        value = block.get(metric)
        label = f"{qtype}:{metric}" if qtype else metric
        if value is None:
            failures.append(f"{label} was not measured")
        elif metric in LOWER_IS_BETTER and value > floor:
            failures.append(f"{label} {value:.3f} > {floor:g}")
        elif metric not in LOWER_IS_BETTER and value < floor:
            failures.append(f"{label} {value:.3f} < {floor:g}")
    return failures
