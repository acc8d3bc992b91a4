"""Choose `Policy.topic_meaning_bar`: below it, the words cut from a question as its topic (rag.terms.topic_words)
are no topic of it, and the whole search text is read instead (`rag.pipeline.Pipeline.with_topic`).

    PYTHONPATH=TREE python evals/answer_changes.py dump CUT.pkl --store S --sets SETS --depth 20     # bar 0
    # the same with Policy.topic_word_uses = 0 (nothing cut) into UNCUT.pkl, then:
    python evals/topic_meaning.py CUT.pkl UNCUT.pkl --calibrate-on dev,dev2,dev3,dev4,sealed,sealed2,...

A question's answer depends only on whether its own cut is kept, so the answers at any bar are read from the two
dumps: the uncut answer where the cut's MiniLM cosine to the whole search text is under the bar, else the cut one.
Per question, the utility of train.abstention_bar (citation F1 when answerable, 0 refused; 1 for a refused
unanswerable question, 0 answered). The bar with the highest mean over the `--calibrate-on` sets is chosen (ties:
the middle one); the dumps' other sets are reported, never chosen on.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evals.answer_changes import means
from train.abstention_bar import CALIBRATION, utility

GRID = [round(0.05 * i, 2) for i in range(0, 13)]


def cut_cosines(questions: list[str]) -> list[float]:
    """Each question's cut's cosine to its whole search text (1.0 when nothing is cut)."""
    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.policy import Policy
    from rag.query import parse
    from rag.terms import topic_words

    minilm = get_embedder(Settings.from_env())
    uses = Policy.from_settings(Settings.from_env()).topic_word_uses
    cosines = []
    for question in questions:
        search = parse(question).search
        cut = topic_words(search, uses)
        if cut == search:
            cosines.append(1.0)
            continue
        whole, part = minilm.embed([search, cut])
        cosines.append(float(whole @ part))
    return cosines


def at_bar(cut: dict, uncut: dict, cosines: dict, bar: float) -> dict:
    return {
        n: [u if bar > 0 and c < bar else k for k, u, c in zip(cut[n], uncut[n], cosines[n], strict=True)] for n in cut
    }


def mean_utility(run: dict, names: list[str]) -> float:
    """The mean utility of the answers as given (the shipped abstention bar, unmoved)."""
    shipped = json.loads(CALIBRATION.read_text(encoding="utf-8"))["relevance_bar"]
    rows = [row for name in names for row in run[name]]
    return sum(utility(row, shipped, shipped) for row in rows) / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cut", type=Path, help="a dump with every cut kept (bar 0)")
    parser.add_argument("uncut", type=Path, help="a dump with nothing cut (Policy.topic_word_uses = 0)")
    parser.add_argument("--calibrate-on", required=True, help="comma-separated sets of the dumps to choose on")
    args = parser.parse_args()
    cut, uncut = pickle.loads(args.cut.read_bytes()), pickle.loads(args.uncut.read_bytes())
    names = [name for name in cut if name in uncut]
    cut, uncut = {n: cut[n] for n in names}, {n: uncut[n] for n in names}
    chosen_on = args.calibrate_on.split(",")
    reported = [n for n in names if n not in chosen_on]
    cosines = {n: cut_cosines([row["question"] for row in cut[n]]) for n in names}
    sweep = {}
    print(
        "| bar | questions uncut | utility, chosen on | utility, reported | reported: "
        + " / ".join(("precision", "recall", "topic recall", "abstention", "false abstains"))
        + " |"
    )
    print("|---|---|---|---|---|")
    for bar in GRID:
        run = at_bar(cut, uncut, cosines, bar)
        sweep[bar] = mean_utility(run, chosen_on)
        uncut_count = sum(bar > 0 and c < bar for n in names for c in cosines[n])
        scores = " / ".join(f"{v:.3f}" for v in means([r for n in reported for r in run[n]]))
        print(f"| {bar:.2f} | {uncut_count} | {sweep[bar]:.4f} | {mean_utility(run, reported):.4f} | {scores} |")
    best = max(sweep.values())
    tied = [bar for bar, value in sweep.items() if value == best]
    print(f"chosen: {tied[len(tied) // 2]} (best {best:.4f} on {len(chosen_on)} sets; tied: {tied})")


if __name__ == "__main__":
    main()
