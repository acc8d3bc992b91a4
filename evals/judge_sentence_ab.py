"""The learned judge's evidence with and without the best-sentence logit of the top 3 candidates, side by side.

    python evals/judge_sentence_ab.py   (needs /tmp/seeds, /tmp/judge-store and /tmp/judge-data as in
    docs/EVALUATION.md's learned-judge section, and scikit-learn)

Offline: train.fit_judge's cases (its --cache in /tmp/judge-cache), its fit (dev weight 5, C 1) and its utility;
the bars chosen on dev (with dev4), reported on the test part and the held-out set. Candidates after the third
get a fill value of -8 (below any sentence logit seen). Sentence logits are kept in /tmp/work/sent_feat.pkl.
"""

import pickle
import re
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sklearn.linear_model import LogisticRegression

from rag.config import Settings
from rag.embedding import get_embedder
from rag.evaluation.questions import load_questions, load_split, select_split
from rag.pipeline import Pipeline
from rag.rerank import get_reranker
from rag.store import Store
from train.fit_judge import DEV_SETS, GRID, candidates, dev_questions, utility

REPO = Path(__file__).resolve().parent.parent
settings = replace(Settings.from_env(), store=Path("/tmp/seeds"), judge="rules")
emb = get_embedder(settings)
seeds = Pipeline(Store(settings), emb, settings)
other = replace(settings, store=Path("/tmp/judge-store"))
sample = Pipeline(Store(other), emb, other)
rr = get_reranker(settings)
cache = Path("/tmp/judge-cache")
dev = [c for c in candidates(seeds, dev_questions((*DEV_SETS, "dev4.jsonl")), cache) if c[2]]
split = load_split(REPO / "evals" / "split.json")
rep_q = select_split(load_questions([REPO / "evals" / "questions.jsonl"]), "test", split) + load_questions(
    [REPO / "evals" / "heldout.jsonl"]
)
rep = [c for c in candidates(seeds, rep_q, cache) if c[2]]
extra = [c for c in candidates(sample, load_questions([Path("/tmp/judge-data/questions.jsonl")]), cache) if c[2]]


def abstracts(store, ids):
    return {pid: p.abstract for pid, p in store.get_papers(ids).items()}


feat_cache = Path("/tmp/work/sent_feat.pkl")
memo = pickle.loads(feat_cache.read_bytes()) if feat_cache.exists() else {}


def add(cases, store, top=3):
    out = []
    for q, ids, rows in cases:
        texts = abstracts(store, ids[:top])
        extra_col = []
        for j, pid in enumerate(ids):
            if j < top and pid in texts:
                key = (q.question, pid)
                if key not in memo:
                    sents = [s for s in re.split(r"(?<=[.!?])\s+", texts[pid]) if len(s.split()) > 3] or [texts[pid]]
                    memo[key] = float(rr.logits(q.question, sents).max())
                extra_col.append(memo[key])
            else:
                extra_col.append(-8.0)
        out.append((q, ids, [(*tuple(r), v) for r, v in zip(rows, extra_col, strict=True)]))
    return out


dev2, rep2, extra2 = add(dev, seeds.store), add(rep, seeds.store), add(extra, sample.store)
feat_cache.parent.mkdir(parents=True, exist_ok=True)
feat_cache.write_bytes(pickle.dumps(memo))


def fit(dev_cases, extra_cases):
    x = np.array([r for _, _, rows in dev_cases + extra_cases for r in rows], dtype=float)
    y = np.array([int(i in q.gold_ids) for q, ids, _ in dev_cases + extra_cases for i in ids])
    nd = sum(len(rows) for _, _, rows in dev_cases)
    w = np.where(np.arange(len(y)) < nd, 5.0, 1.0)
    mu, sd = x.mean(0), x.std(0)
    sd[sd == 0] = 1
    m = LogisticRegression(C=1.0, max_iter=3000).fit((x - mu) / sd, y, sample_weight=w)

    def prob(r):
        return float(m.predict_proba(((np.asarray(r, dtype=float) - mu) / sd)[None])[0, 1])

    best = max(
        ((utility(dev_cases, prob, a, mm), a, mm) for a in GRID for mm in GRID if mm <= a),
        key=lambda t: (t[0], -abs(t[1] - 0.5)),
    )
    return prob, best


def report(name, cases, prob, a, mm):
    un = [c for c in cases if not c[0].gold_ids]
    an = [c for c in cases if c[0].gold_ids]

    def answers(c):
        return max(prob(r) for r in c[2]) >= a

    refused_un = sum(not answers(c) for c in un)
    refused_an = sum(not answers(c) for c in an)
    print(
        f"  {name}: utility {utility(cases, prob, a, mm):.3f}, refuses {refused_un}/{len(un)} unanswerable, "
        f"{refused_an}/{len(an)} answerable"
    )


for label, (d, r, e) in (
    ("shipped evidence", (dev, rep, extra)),
    ("+ best-sentence logit (top 3)", (dev2, rep2, extra2)),
):
    prob, (u, a, mm) = fit(d, e)
    print(label, f"bars {a}/{mm}, dev utility {u:.3f}")
    report("test + held-out", r, prob, a, mm)
    report("dev (fitted)", d, prob, a, mm)
