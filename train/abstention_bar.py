"""Choose the reranker's abstention bar (`relevance_bar` in calibration.json) on questions people wrote.

    python -m train.abstention_bar RUN.pkl --calibrate-on dev,dev2,dev3,dev4,sealed,sealed2,... [--write]

RUN.pkl is an `evals/answer_changes.py dump` of the shipped pipeline at depth 20: it records each question's
verdict, the best shown paper's relevance and the candidates. `train.calibrate` chose the bar on the dev part's
answerable questions asked of a store without their gold papers (dev has 4 unanswerable questions); here it is
chosen on the natural unanswerable and answerable questions of spent sets. For each bar of the grid, a question
refused for relevance alone whose best paper reaches the bar is answered by that paper (a paper under the cite
bars is never cited beside it), and a question answered on the evidence whose best paper is under the bar is
refused (not one answered because a paper writes the name it asks about). Per question: citation F1 when
answerable (0 refused), 1 for a refused unanswerable question, 0 answered. The bar with the highest mean over
the `--calibrate-on` sets is chosen (ties: the middle one); the dump's other sets are reported, never chosen on.
`--write` stores the bar in rag/models/reranker/calibration.json with this command and the sets.
"""

from __future__ import annotations

import argparse
import json
import pickle
import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "rag" / "models" / "reranker" / "calibration.json"
GRID = [round(0.05 * i, 2) for i in range(1, 11)]


def f1(gold: set[str], cited: set[str]) -> float:
    right = len(gold & cited)
    return 2 * right / (len(gold) + len(cited)) if right else 0.0


def utility(row: dict, bar: float, shipped_bar: float) -> float:
    """The question's utility had the pipeline abstained below `bar` instead of `shipped_bar`."""
    gold = set(row["gold"])
    if row["reason"] == "relevance" and row["relevance"] >= bar:
        best = max(row["candidates"], key=lambda c: c[1])[0]
        return f1(gold, {best}) if gold else 0.0
    # A dump made before "defined" was recorded reads as defining no name: only a higher bar reads it.
    defined = row.get("defined", False)
    if row["reason"] == "evidence" and not defined and row["relevance"] < bar and bar > shipped_bar:
        return 0.0 if gold else 1.0
    if not gold:
        return 1.0 if row["abstained"] else 0.0
    return 0.0 if row["abstained"] else f1(gold, set(row["citations"]))


def sweep(run: dict, names: list[str], shipped_bar: float) -> dict[float, float]:
    rows = [row for name in names for row in run[name]]
    return {bar: round(sum(utility(r, bar, shipped_bar) for r in rows) / len(rows), 4) for bar in GRID}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="an evals/answer_changes.py dump of the shipped pipeline")
    parser.add_argument("--calibrate-on", required=True, help="comma-separated sets of the dump to choose on")
    parser.add_argument("--write", action="store_true", help="store the bar in calibration.json")
    args = parser.parse_args()

    run = pickle.loads(args.run.read_bytes())
    chosen_on = args.calibrate_on.split(",")
    missing = [name for name in chosen_on if name not in run]
    if missing or "reason" not in run[chosen_on[0]][0]:
        sys.exit(
            f"error: {args.run} has no verdicts for {missing or chosen_on[0]} (dump it with evals/answer_changes.py)"
        )
    calibration = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    shipped = float(calibration["relevance_bar"])
    on = sweep(run, chosen_on, shipped)
    top = max(on.values())
    tied = [bar for bar in GRID if on[bar] == top]
    bar = tied[len(tied) // 2]
    others = [name for name in run if name not in chosen_on]
    report = sweep(run, others, shipped) if others else {}
    print(f"chosen on {len(chosen_on)} sets: relevance_bar {bar}, utility {on[bar]}")
    print(f"the shipped bar {shipped}: utility {on.get(shipped)}")
    print("| bar | " + " | ".join(str(b) for b in GRID) + " |")
    print("|---|" + "---|" * len(GRID))
    print("| chosen on | " + " | ".join(f"{on[b]:.4f}" for b in GRID) + " |")
    if report:
        print(f"| reported ({', '.join(others)}) | " + " | ".join(f"{report[b]:.4f}" for b in GRID) + " |")
    if args.write:
        calibration["relevance_bar"] = bar
        calibration["relevance_bar_chosen"] = {
            "command": "python -m train.abstention_bar " + shlex.join(sys.argv[1:]),
            "calibrated_on": chosen_on,
            "utility": {str(b): on[b] for b in GRID},
            "replaced": shipped,
        }
        CALIBRATION.write_text(json.dumps(calibration, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
