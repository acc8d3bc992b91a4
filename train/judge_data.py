"""Training questions for the learned judge, from the corpus: a sample store and questions over it.

    python -m train.judge_data --corpus ../shared/corpus --out /tmp/judge-data [--papers 1500] [--seed 0]

Writes `sample.jsonl` (corpus papers: the seed papers and their near-copies left out, as in train.pairs) and
`questions.jsonl` (the eval's format: qid, type, question, gold_ids), to ingest and fit on:

    rag ingest /tmp/judge-data/sample.jsonl --store /tmp/judge-store
    python -m train.fit_judge --store SEED_STORE --extra /tmp/judge-data/questions.jsonl:/tmp/judge-store

The kinds, answerable and not, so the judge learns what an unanswerable question looks like at scale:
- `topic`: a keyword of 2-15 sample papers ("which papers study X?"): gold, every paper listing it or writing it;
- `paraphrase`: a paper's own description of what it does (train.pairs.description): gold, that paper;
- `near_miss`: "what does NAME reach on BENCH?", BENCH a benchmark other papers use and NAME's paper never writes:
  unanswerable; beside it the same question with a benchmark the paper does write (`fact`, gold that paper);
- `combination`: "A for B" from two papers' keywords that no sample paper writes together: unanswerable;
- `absent`: a keyword of a corpus paper outside the sample that no sample paper writes: unanswerable.
Lead-ins vary ("any papers on …", "quick one: …"); they are this script's own, so train.request_phrasings has the
local Qwen model rewrite a sample as researchers type (each question's `keep` lists the phrases it must keep).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from pathlib import Path

from train.pairs import coined_name, corpus_files, description, match_seeds, normalize, read_corpus

REPO = Path(__file__).resolve().parent.parent
# A benchmark or dataset name: inner capitals or digits ("ImageNet", "CIFAR-100", "GSM8K", "MMLU").
BENCH = re.compile(r"\b(?:[A-Z][a-z]+[A-Z][A-Za-z]*|[A-Z]{2,}[A-Za-z]*-?\d+[A-Za-z]*|[A-Z]{4,})\b")
LISTS = (
    "which papers study {t}?",
    "any papers on {t}?",
    "quick one: what work here is about {t}?",
    "i'm looking for research on {t}",
    "papers about {t} please",
    "has anyone looked at {t}?",
    "{t}",
    "can you list the work on {t}",
)
DETAILS = (
    "what does {n} reach on {b}?",
    "how well does {n} do on {b}?",
    "results of {n} on {b}",
    "does {n} report numbers on {b}?",
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--seeds", type=Path, default=REPO / "seeds")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--papers", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from rag.corpus import load_papers

    records, _ = read_corpus(corpus_files(args.corpus))
    seeds = load_papers([args.seeds])
    seed_ids = {i for ids in match_seeds({p.id: p.abstract for p in seeds}, records).values() for i in ids}
    pool = [r for r in records if r.id not in seed_ids]
    rng = random.Random(args.seed)
    rng.shuffle(pool)
    sample, outside = pool[: args.papers], pool[args.papers :]
    texts = {r.id: normalize(f"{r.title} {r.abstract}") for r in sample}
    title_counts = Counter(normalize(r.title.partition(":")[0]) for r in records)

    def writing(phrase: str) -> list[str]:
        key = f" {normalize(phrase)} "
        return [i for i, t in texts.items() if key in f" {t} "]

    questions: list[dict] = []

    def add(kind: str, question: str, gold: list[str], keep: list[str]) -> None:
        # `keep`: the phrases that make the question what it is (train.request_phrasings keeps them verbatim)
        row = {"qid": f"j-{len(questions):05d}", "type": kind, "question": question, "gold_ids": gold, "keep": keep}
        questions.append(row)

    keyword_papers: Counter = Counter()
    for r in sample:
        keyword_papers.update({normalize(k) for k in r.keywords})
    # Benchmarks as abstracts use them: "on ImageNet", "on the MMLU benchmark".
    benches = Counter(b for r in records for b in set(re.findall(rf"\bon (?:the )?({BENCH.pattern})", r.abstract)))
    common = [b for b, n in benches.most_common(300) if n >= 15]
    done_topics: set[str] = set()
    for r in sample:
        keywords = [k for k in r.keywords if len(normalize(k)) >= 4]
        rng.shuffle(keywords)
        for k in keywords[:1]:
            gold = sorted(
                set(writing(k)) | {s.id for s in sample if normalize(k) in {normalize(x) for x in s.keywords}}
            )
            if 2 <= len(gold) <= 15 and normalize(k) not in done_topics:
                done_topics.add(normalize(k))
                add("topic", rng.choice(LISTS).format(t=k.lower()), gold, [k.lower()])
        described = description(r, title_counts)
        if described and rng.random() < 0.25:
            add("paraphrase", _lead(rng, described[0]), [r.id], [])
        name = coined_name(r.title, title_counts)
        if name:
            held = [b for b in set(BENCH.findall(r.abstract)) if b in benches and b != name]
            lacking = [b for b in common if b not in r.abstract and b != name]
            if held and lacking:
                form = rng.choice(DETAILS)  # (the draws in this order keep the questions of earlier fits)
                bench = rng.choice(sorted(held))
                add("fact", form.format(n=name, b=bench), [r.id], [name, bench])
                form = rng.choice(DETAILS)
                other = rng.choice(lacking)
                add("near_miss", form.format(n=name, b=other), [], [name, other])
    for _ in range(len(sample) // 6):
        a, b = rng.sample(sample, 2)
        if not a.keywords or not b.keywords:
            continue
        ka, kb = rng.choice(a.keywords).lower(), rng.choice(b.keywords).lower()
        if set(writing(ka)) & set(writing(kb)) or normalize(ka) == normalize(kb):
            continue
        form = rng.choice(("which papers study {a} for {b}?", "{a} applied to {b}", "work combining {a} and {b}"))
        add("combination", form.format(a=ka, b=kb), [], [ka, kb])
    for r in outside[: len(sample) // 6]:
        if r.keywords:
            k = rng.choice(r.keywords).lower()
            if len(normalize(k)) >= 4 and not writing(k):
                add("absent", rng.choice(LISTS).format(t=k), [], [k])

    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "sample.jsonl").open("w", encoding="utf-8") as f:
        for r in sample:
            f.write(json.dumps({"id": r.id, "title": r.title, "abstract": r.abstract}) + "\n")
    with (args.out / "questions.jsonl").open("w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q) + "\n")
    print(json.dumps(Counter(q["type"] for q in questions)))


def _lead(rng: random.Random, described: str) -> str:
    """A paper's description as a question."""
    form = rng.choice(("is there a paper that proposes {d}?", "looking for work on {d}", "{d}"))
    return form.format(d=described)


if __name__ == "__main__":
    main()
