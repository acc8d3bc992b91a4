"""Fine-tune the query side of the bi-encoder (issue 16): all-MiniLM-L6-v2 for questions, the papers' vectors as
they are in the store.

    python -m train.query_encoder --pairs pairs-out/pairs.jsonl --store CORPUS_STORE --out query-encoder \
        [--max-queries N] [--kinds title,keyword,area_keyword,template,describe] [--batch-size 32] [--lr 2e-5]
        [--scale 20] [--negatives 2] [--minutes M] [--seed 0]

Only the query tower trains. The documents' vectors are read from a store `rag ingest` built of the corpus with the
packaged int8 MiniLM (every chunk's vector, exactly what retrieval compares a question with), so a model trained
here needs no store rebuild: the store's manifest and its vectors stay as they are. A question's score for a paper
is, as in retrieval, its best chunk's cosine. Loss: softmax cross-entropy (temperature 1/`--scale`) of each query
over its positive paper, its first `--negatives` BM25 hard negatives and every other paper of the batch. For a
`describe` query (train.pairs) the positive's chunks holding the sentence it came from are left out of its score:
the description must find the rest of the paper (the inverse cloze task), as a user's paraphrase must.

Output in `--out`: the query tower in transformers' layout with its tokenizer, and `train_log.json` (the command,
settings, examples per kind, seconds, the loss every `--log-every` steps). Needs the `[train]` extra.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

HIDDEN_PROBE_WORDS = 8  # a chunk holds a describe query's sentence when it holds the sentence's first words


def store_vectors(store: Path, wanted: set[str]) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """Each wanted paper's chunk vectors (chunk order) and chunk texts, read from the store's Chroma collection."""
    import chromadb

    collection = chromadb.PersistentClient(path=str(store)).get_collection("papers")
    vectors: dict[str, list[tuple[int, np.ndarray, str]]] = {}
    total, page = collection.count(), 5000
    for offset in range(0, total, page):
        got = collection.get(offset=offset, limit=page, include=["embeddings", "metadatas", "documents"])
        for vector, meta, text in zip(got["embeddings"], got["metadatas"], got["documents"], strict=True):
            if meta["paper_id"] in wanted:
                vectors.setdefault(meta["paper_id"], []).append((int(meta["chunk"]), np.asarray(vector), text))
    out_vectors, out_texts = {}, {}
    for paper, chunks in vectors.items():
        chunks.sort(key=lambda c: c[0])
        out_vectors[paper] = np.stack([c[1] for c in chunks]).astype(np.float32)
        out_texts[paper] = [c[2] for c in chunks]
    return out_vectors, out_texts


def hidden_chunks(texts: list[str], hidden: str) -> list[int]:
    """The chunks holding a describe query's sentence (its first words; chunks overlap, so maybe two)."""
    probe = " ".join(hidden.split()[:HIDDEN_PROBE_WORDS])
    return [i for i, text in enumerate(texts) if probe in " ".join(text.split())]


def select_queries(pairs: list[dict], kinds: set[str] | None, max_queries: int | None, seed: int) -> list[dict]:
    """The pairs of `kinds` in a seeded random order, at most `max_queries`."""
    chosen = [p for p in pairs if kinds is None or p["kind"] in kinds]
    random.Random(seed).shuffle(chosen)
    return chosen[:max_queries] if max_queries else chosen


def batch_loss(torch, query_vectors, batch: list[dict], vectors: dict, texts: dict, negatives: int, scale: float):
    """Cross-entropy of each query over the batch's papers (positives and hard negatives), a paper scored by its
    best chunk; a describe query's positive without the chunks holding its sentence."""
    papers: list[str] = []
    for pair in batch:
        for paper in [pair["positive_id"], *pair["negative_ids"][:negatives]]:
            if paper in vectors and paper not in papers:
                papers.append(paper)
    index = {p: i for i, p in enumerate(papers)}
    chunks = torch.from_numpy(np.concatenate([vectors[p] for p in papers]))
    owner = torch.tensor([index[p] for p in papers for _ in range(len(vectors[p]))])
    scores = scale * query_vectors @ chunks.T  # (queries, chunks)
    for row, pair in enumerate(batch):
        if pair.get("hidden"):
            first = sum(len(vectors[p]) for p in papers[: index[pair["positive_id"]]])
            hidden = hidden_chunks(texts[pair["positive_id"]], pair["hidden"])
            if len(hidden) < len(vectors[pair["positive_id"]]):  # a chunk must be left to find
                for chunk in hidden:
                    scores[row, first + chunk] = -1e4
    # Per paper, its best chunk: scatter the chunk scores into (queries, papers) with a max.
    per_paper = torch.full((len(batch), len(papers)), -1e4).scatter_reduce(
        1, owner.expand(len(batch), -1), scores, reduce="amax"
    )
    targets = torch.tensor([index[pair["positive_id"]] for pair in batch])
    return torch.nn.functional.cross_entropy(per_paper, targets)


def train(args: argparse.Namespace) -> dict:
    import torch
    from transformers import AutoModel, AutoTokenizer

    from train.reranker import base_checkpoint, training_step, warmup_then_decay

    started = time.time()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    pairs = [json.loads(line) for line in Path(args.pairs).read_text(encoding="utf-8").splitlines() if line.strip()]
    kinds = set(args.kinds.split(",")) if args.kinds else None
    queries = select_queries(pairs, kinds, args.max_queries, args.seed)
    wanted = {p["positive_id"] for p in queries} | {n for p in queries for n in p["negative_ids"][: args.negatives]}
    vectors, texts = store_vectors(Path(args.store), wanted)
    queries = [p for p in queries if p["positive_id"] in vectors]
    per_kind = Counter(p["kind"] for p in queries)
    print(f"{len(queries)} queries {dict(per_kind)}; {len(vectors)} papers' vectors read", file=sys.stderr)

    base = base_checkpoint(args.base)
    model = AutoModel.from_pretrained(str(base), add_pooling_layer=False)
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps = (len(queries) + args.batch_size - 1) // args.batch_size
    schedule = warmup_then_decay(torch, optimizer, steps)
    deadline = time.time() + args.minutes * 60 if args.minutes else None
    loop_started, seen, step, stopped, losses, running = time.time(), 0, 0, False, [], []
    for start in range(0, len(queries), args.batch_size):
        if deadline is not None and time.time() >= deadline:
            stopped = True
            break
        batch = queries[start : start + args.batch_size]
        questions = [p["query"] for p in batch]
        features = tokenizer(questions, padding=True, truncation=True, max_length=64, return_tensors="pt")
        hidden = model(**features).last_hidden_state
        mask = features["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        query_vectors = torch.nn.functional.normalize(pooled, dim=-1)
        loss = batch_loss(torch, query_vectors, batch, vectors, texts, args.negatives, args.scale)
        running.append(training_step(torch, model, loss, optimizer, schedule))
        seen += len(batch)
        step += 1
        if step % args.log_every == 0:
            losses.append({"step": step, "queries": seen, "loss": round(sum(running) / len(running), 4)})
            rate = seen / (time.time() - loop_started)
            print(f"step {step}/{steps} queries {seen} loss {losses[-1]['loss']:.4f} {rate:.1f} q/s", file=sys.stderr)
            running = []
    train_seconds = time.time() - loop_started
    out = Path(args.out)
    model.eval()
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    log = {
        "command": "python -m train.query_encoder " + shlex.join(args.argv),
        "settings": {
            k: getattr(args, k)
            for k in ("max_queries", "kinds", "batch_size", "lr", "scale", "negatives", "minutes", "seed", "threads")
        },
        "queries_per_kind": dict(sorted(per_kind.items())),
        "papers": len(vectors),
        "queries_seen": seen,
        "steps": step,
        "stopped_by_budget": stopped,
        "train_seconds": round(train_seconds, 1),
        "total_seconds": round(time.time() - started, 1),
        "losses": losses,
        "torch": torch.__version__,
    }
    (out / "train_log.json").write_text(json.dumps(log, indent=2) + "\n", encoding="utf-8")
    return log


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m train.query_encoder", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", required=True, help="pairs.jsonl of python -m train.pairs")
    parser.add_argument("--store", required=True, help="a store `rag ingest` built of the corpus the pairs came from")
    parser.add_argument("--out", required=True)
    parser.add_argument("--base", help="an all-MiniLM-L6-v2 checkpoint folder (default: from the package)")
    parser.add_argument("--max-queries", type=int, help="queries to train on (default: all)")
    parser.add_argument("--kinds", help="comma-separated query kinds to train on (default: all)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--scale", type=float, default=20.0, help="cosine → logit scale (1 / temperature)")
    parser.add_argument("--negatives", type=int, default=2, help="hard negatives per query (default 2)")
    parser.add_argument("--minutes", type=float, help="wall-clock budget for training; stop and save when spent")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--log-every", type=int, default=20)
    args = parser.parse_args(argv)
    args.argv = argv
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    log = train(args)
    print(f"{log['queries_seen']} queries in {log['train_seconds']} s → {args.out}")


if __name__ == "__main__":
    main()
