"""What a run's results become: the markdown tables and report, the chart, the comparison of two runs, the
abstention threshold sweep, and the `--fail-under` floors. All but `results_payload` read runs in their JSON
form, so `--compare` works on saved results.json files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .metrics import LOWER_IS_BETTER, METRICS

if TYPE_CHECKING:
    from .run import Run


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
        f"{meta['n_questions']} questions from {', '.join(meta['files'])}"
        + (f" (the {meta['split']} split)" if meta.get("split") else "")
        + f"; backend `{meta['backend']}`, "
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
