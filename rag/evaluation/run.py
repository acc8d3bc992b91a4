"""Running a question set through the core (`rag.pipeline`, as every client does), scoring each answer,
and the LLM judge."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import LLMError
from ..llm import LLM
from ..pipeline import Pipeline
from ..prompts import load_prompt, render
from ..query import parse
from ..types import Source
from .metrics import METRICS, mean, percentile, score_question
from .questions import QUESTION_TYPES

if TYPE_CHECKING:
    from ..config import Settings
    from ..embedding import Embedder
    from ..store import Store
    from .questions import Question

RETRIEVAL_DEPTH = 10  # recall@10 and nDCG@10 need ten papers whatever k the answer uses


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
    pipeline: Pipeline | None = None,
) -> Run:
    """Answer every question with the real pipeline and score it. `pipeline`: a tuning script's own (its policy,
    its reranker); by default one built from `settings`."""
    # The variant is the settings' retriever, so every question goes through the pipeline exactly as a user's would.
    if pipeline is None:
        pipeline = Pipeline(store, embedder, replace(settings, retriever=retriever))
    run = Run(retriever=retriever, backend=backend_name, k=k)
    for done, q in enumerate(questions, start=1):
        events = pipeline.run(
            parse(q.question),
            k=k,
            backend=backend_name,
            stream=False,
            depth=RETRIEVAL_DEPTH,
            fallback=False,  # an LLM's failure stops the eval rather than scoring extractive answers as its own
        )
        found: list[Source] = []
        answer = None
        for event in events:
            if event.type == "sources":
                found = event.sources or []
            elif event.type == "answer":
                answer = event.answer
        assert answer is not None
        retrieved = [s.id for s in found]
        sources = found[:k]
        # What the answer read: the top k, and any paper the judge cited beyond them.
        abstracts = {s.id: s.abstract for s in [*sources, *answer.sources]}
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

        # Without the circuit breaker: a grade that failed is only missing, and must not open the breaker that
        # the answers of the next questions go through (the eval does not fall back: it would stop there).
        self.llm = LLM(settings, breakers=None)
        self.settings = settings

    def grade(self, q: Question, answer: str, cited: dict[str, str], gold: dict[str, str]) -> dict[str, float | None]:

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
