"""The eval harness: run the real pipeline over a question set and score retrieval, citations, coverage,
abstention, groundedness and latency — per question, by type, and overall.

`questions` reads question sets; `metrics` scores one answer (pure functions); `run` answers a set through
the core (`rag.answer.ask`, as every client does) and holds the LLM judge; `report` turns results into
tables, a report, a chart, a comparison and `--fail-under` checks. Each module imports only those named
before it (a layers contract in pyproject.toml, checked by lint-imports).
The names callers use (`rag eval`, evals/bench_search.py) are exported here.
"""

from __future__ import annotations

from .metrics import (
    LOWER_IS_BETTER,
    METRICS,
    answer_claims,
    citation_scores,
    groundedness,
    mean,
    mention_coverage,
    ndcg_at,
    normalize_text,
    percentile,
    recall_at,
    reciprocal_rank,
    score_question,
)
from .questions import (
    QUESTION_TYPES,
    SPLITS,
    Question,
    default_questions_file,
    default_split_file,
    load_questions,
    load_split,
    make_split,
    select_split,
)
from .report import (
    by_type_table,
    check_floors,
    compare_table,
    latency_line,
    markdown_report,
    overall_table,
    parse_floor,
    results_payload,
    sweep_table,
    threshold_sweep,
    worst_questions,
    write_chart,
)
from .run import RETRIEVAL_DEPTH, Judge, QuestionResult, Run, parse_judgement, run_eval, summarize

__all__ = [
    "LOWER_IS_BETTER",
    "METRICS",
    "QUESTION_TYPES",
    "RETRIEVAL_DEPTH",
    "SPLITS",
    "Judge",
    "Question",
    "QuestionResult",
    "Run",
    "answer_claims",
    "by_type_table",
    "check_floors",
    "citation_scores",
    "compare_table",
    "default_questions_file",
    "default_split_file",
    "groundedness",
    "latency_line",
    "load_questions",
    "load_split",
    "make_split",
    "markdown_report",
    "mean",
    "mention_coverage",
    "ndcg_at",
    "normalize_text",
    "overall_table",
    "parse_floor",
    "parse_judgement",
    "percentile",
    "recall_at",
    "reciprocal_rank",
    "results_payload",
    "run_eval",
    "score_question",
    "select_split",
    "summarize",
    "sweep_table",
    "threshold_sweep",
    "worst_questions",
    "write_chart",
]
