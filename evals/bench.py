"""The scale benchmark: ingest and query speed from 1k to 31.5k papers, against their floors, in one run.

    pip install '.[bench]'    # llama-index's own Chroma vector store, for the naive comparison
    python evals/bench.py --corpus ../shared/corpus/iclr-2025-2026.jsonl.gz --out bench-out

What it measures, on this machine, in this order (results are saved after every stage, so a partial run
still reports what it finished):
1. samples: a fixed random order of the corpus (seed 0); the 1k sample is inside the 10k one, which is
   inside the full corpus, so the store grows 1k → 10k → 31.5k and each step embeds only the new papers;
2. raw ONNX encode of the 1k sample's chunk texts (the model alone: the floor for ingest), then `rag ingest`
   of the same 1k into a fresh store (the real CLI, with validation, chunking, Chroma writes, BM25 build),
   then a naive llama-index pipeline (`VectorStoreIndex.from_documents` with the same model and Chroma);
3. re-ingest of the unchanged sample; growth to 10k and 31.5k papers (`rag ingest`, throughput on the new
   papers);
4. at each size: warm search latency (hybrid and dense) and extractive ask latency over the eval
   questions, against a brute-force numpy floor (query embedding + dot product over all chunk vectors);
   cold `ask` wall time against `python -c "import chromadb"`; known-item recall on the corpus questions;
5. peak RSS of each ingest and of the cold ask.
It writes results.json, a Markdown table (bench.md) and a PNG plot of latency against corpus size.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))]


def save(out: Path, results: dict) -> None:
    (out / "results.json").write_text(json.dumps(results, indent=2))


def run_cli(args: list[str], env: dict) -> tuple[float, int, float]:
    """(wall seconds, peak RSS in MB, CPU seconds) of one `rag` command in a fresh process.

    CPU seconds (user + system, all threads) make ratios robust to other load on the machine."""
    code = (
        "import resource, sys\n"
        "from rag.cli import main\n"
        f"sys.argv = {['rag', *args]!r}\n"
        "try:\n    main()\n"
        "finally:\n"
        "    usage = resource.getrusage(resource.RUSAGE_SELF)\n"
        "    print('PEAK_RSS_KB', usage.ru_maxrss, usage.ru_utime + usage.ru_stime, file=sys.stderr)\n"
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"rag {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    line = next(line for line in done.stderr.splitlines() if line.startswith("PEAK_RSS_KB"))
    _, peak, cpu = line.split()
    return wall, int(peak) // 1024, float(cpu)


def cpu_seconds() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def write_sample(rows: list[str], path: Path) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(rows)


def chunk_texts(path: Path, settings) -> tuple[list[str], int]:
    from rag.chunking import chunk_paper
    from rag.corpus import iter_papers

    texts, papers = [], 0
    for paper in iter_papers([path]):
        papers += 1
        texts += [c.embed_text for c in chunk_paper(paper, settings.chunk_tokens, settings.chunk_overlap, "m")]
    return texts, papers


def naive_llama_index(path: Path, store_dir: Path, embedder) -> float:
    """`VectorStoreIndex.from_documents` with the same model and Chroma: what a first attempt would be."""
    import chromadb
    from llama_index.core import Document, StorageContext, VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.vector_stores.chroma import ChromaVectorStore

    from rag.corpus import iter_papers

    class PackagedMiniLM(BaseEmbedding):
        def _get_text_embedding(self, text: str) -> list[float]:
            return embedder.embed([text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed(texts).tolist()

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

    started = time.perf_counter()
    documents = [
        Document(text=p.abstract, metadata={"paper_id": p.id, "title": p.title or "", "year": p.year or -1})
        for p in iter_papers([path])
    ]
    client = chromadb.PersistentClient(path=str(store_dir))
    collection = client.get_or_create_collection("naive", embedding_function=None)
    storage = StorageContext.from_defaults(vector_store=ChromaVectorStore(chroma_collection=collection))
    VectorStoreIndex.from_documents(documents, storage_context=storage, embed_model=PackagedMiniLM())
    return time.perf_counter() - started


def latency_at_size(settings, questions: list[str], known_items: list[dict], rounds: int) -> dict:
    import numpy as np
    from chromadb.api.client import SharedSystemClient

    from rag.embedding import get_embedder
    from rag.lexical import clear_cache
    from rag.pipeline import Pipeline
    from rag.query import parse
    from rag.store import Store

    # A `rag ingest` subprocess has just written this store: drop the in-process client's stale caches.
    SharedSystemClient.clear_system_cache()
    clear_cache()
    store, embedder = Store(settings), get_embedder(settings)
    collection = store.collection()
    # Paged: one get of ~90k rows exceeds SQLite's variable limit ("too many SQL variables").
    blocks, owners = [], []
    for offset in range(0, collection.count(), 5000):
        page = collection.get(include=["embeddings", "metadatas"], limit=5000, offset=offset)
        blocks.append(np.asarray(page["embeddings"], dtype=np.float32))
        owners += [m["paper_id"] for m in page["metadatas"]]
    matrix = np.concatenate(blocks)

    def floor(question: str) -> None:
        vector = embedder.embed([question])[0]
        scores = matrix @ vector
        top = np.argpartition(-scores, 40)[:40]
        seen: dict[str, float] = {}
        for i in top[np.argsort(-scores[top])]:
            seen.setdefault(owners[i], float(scores[i]))

    # "reranked" is the default search (hybrid, then the cross-encoder over the fused candidates); "hybrid" and
    # "dense" are the retrievers alone (RAG_RERANKER=off), so the reranker's cost is the difference.
    plain = replace(settings, reranker=False)
    pipelines = {
        "default": Pipeline(store, embedder, settings),
        "reranker_off": Pipeline(store, embedder, plain),
        "spelling_off": Pipeline(store, embedder, replace(settings, spelling=False)),
    }
    default, unranked = pipelines["default"], pipelines["reranker_off"]
    variants = {"reranked": (default, "hybrid"), "hybrid": (unranked, "hybrid"), "dense": (unranked, "dense")}
    timings: dict[str, list[float]] = {"floor": [], "reranked": [], "hybrid": [], "dense": [], "ask": []}
    for q in questions:  # warm-up: the models, the BM25 index, Chroma's caches
        default.retrieve(parse(q), mode="hybrid")
        floor(q)
    # The floor runs in its own pass: interleaved, its scan of the whole vector matrix (141 MB at 31.5k papers)
    # evicted the store's and the BM25 index's pages from the CPU caches before every product query, which no
    # real process does (measured: hybrid p50 26.3 ms interleaved against ~17 ms alone, same code and store).
    for _ in range(rounds):
        for q in questions:
            for name, (pipeline, mode) in variants.items():
                started = time.perf_counter()
                pipeline.retrieve(parse(q), mode=mode)
                timings[name].append((time.perf_counter() - started) * 1000)
    for _ in range(rounds):
        for q in questions:
            started = time.perf_counter()
            floor(q)
            timings["floor"].append((time.perf_counter() - started) * 1000)
    for q in questions[:40]:
        started = time.perf_counter()
        default.answer(parse(q), backend="extractive")
        timings["ask"].append((time.perf_counter() - started) * 1000)
    known_ids = {item["gold_ids"][0] for item in known_items}
    result = {
        name: {"p50_ms": round(statistics.median(v), 1), "p95_ms": round(percentile(v, 95), 1), "n": len(v)}
        for name, v in timings.items()
    }
    result["chunks"] = int(matrix.shape[0])
    result["hybrid_vs_floor_p50"] = round(result["hybrid"]["p50_ms"] / result["floor"]["p50_ms"], 2)
    if known_items:
        typos = [t for t in map(json.loads, (HERE / "corpus_typos.jsonl").open()) if t["gold_ids"][0] in known_ids]
        for items, prefix in ((known_items, "known_item"), (typos, "typo_item")):
            for suffix, pipeline in (
                ("", default),
                ("_reranker_off", unranked),
                ("_spelling_off", pipelines["spelling_off"]),
            ):
                hits1 = hits5 = 0
                for item in items:
                    ranked = [s.id for s in pipeline.retrieve(parse(item["question"]), k=5).sources]
                    hits1 += ranked[:1] == item["gold_ids"][:1]
                    hits5 += item["gold_ids"][0] in ranked
                result[f"{prefix}_recall@1{suffix}"] = round(hits1 / max(1, len(items)), 3)
                result[f"{prefix}_recall@5{suffix}"] = round(hits5 / max(1, len(items)), 3)
            result[f"{prefix}s"] = len(items)
    return result


def cold_ask(env: dict, repeats: int) -> dict:
    def wall(cmd: list[str]) -> float:
        started = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        return time.perf_counter() - started

    ask_cmd = [str(Path(sys.executable).parent / "ask"), "which papers study unlearning?"]
    wall(ask_cmd)  # the OS file cache warm, as on an idle machine that has run it before
    asks = [wall(ask_cmd) for _ in range(repeats)]
    imports = [wall([sys.executable, "-c", "import chromadb"]) for _ in range(repeats)]
    return {"ask_s": round(statistics.median(asks), 2), "import_chromadb_s": round(statistics.median(imports), 2)}


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(results["sizes"], key=int)
    xs = [results["sizes"][s]["papers"] for s in sizes]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, style in (("hybrid", "o-"), ("dense", "s-"), ("floor", "^--")):
        for stat, alpha in (("p50_ms", 1.0), ("p95_ms", 0.4)):
            ys = [results["sizes"][s]["latency"][name][stat] for s in sizes]
            ax.plot(xs, ys, style, alpha=alpha, label=f"{name} {stat[:3]}")
    ax.axhline(20, color="grey", lw=0.8, ls=":")
    ax.axhline(60, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("papers in the store")
    ax.set_ylabel("search latency (ms, warm)")
    ax.set_title("Search latency vs corpus size (2 cores); dotted: 20 / 60 ms targets")
    ax.legend(fontsize=8, ncols=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def markdown(results: dict) -> str:
    lines = ["| measure | value |", "|---|---|"]
    ing = results.get("ingest", {})
    for key, label in (
        ("raw_onnx_papers_per_s", "raw ONNX encode, 1k sample (papers/s)"),
        ("rag_ingest_1k_papers_per_s", "`rag ingest` 1k fresh (papers/s)"),
        ("ratio_1k", "ingest / raw, 1k (wall clock)"),
        ("cpu_ratio_1k", "ingest / raw, 1k (CPU time: robust to other load)"),
        ("naive_llama_index_papers_per_s", "naive llama-index pipeline, 1k (papers/s)"),
        ("raw_onnx_papers_per_cpu_s", "raw ONNX encode, 1k (papers per CPU-second)"),
        ("rag_ingest_1k_papers_per_cpu_s", "`rag ingest` 1k (papers per CPU-second)"),
        ("naive_llama_index_papers_per_cpu_s", "naive llama-index, 1k (papers per CPU-second)"),
        ("reingest_unchanged_1k_s", "re-ingest unchanged 1k (s)"),
        ("rag_ingest_10k_new_papers_per_s", "`rag ingest` growing to 10k (papers/s on the 9k new)"),
        ("ratio_10k", "ingest / raw, 10k step (wall clock)"),
        ("cpu_ratio_10k", "ingest / raw, 10k step (CPU time)"),
        ("rag_ingest_full_new_papers_per_s", "`rag ingest` growing to 31.5k (papers/s on the new)"),
        ("ratio_full", "ingest / raw, 31.5k step (wall clock)"),
        ("cpu_ratio_full", "ingest / raw, 31.5k step (CPU time)"),
        ("reingest_unchanged_full_s", "re-ingest unchanged 31.5k (s)"),
        ("peak_rss_mb", "peak RSS of an ingest (MB)"),
    ):
        if key in ing:
            lines.append(f"| {label} | {ing[key]} |")
    lines += ["", "| papers | chunks | reranked search p50 / p95 ms | hybrid p50 / p95 | dense p50 / p95 |"
              " numpy floor p50 / p95 | hybrid / floor | ask p50 / p95 ms | cold ask s | import chromadb s |"
              " known-item R@1 / R@5 | same, reranker off |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for size in sorted(results.get("sizes", {}), key=int):
        r = results["sizes"][size]
        lat = r["latency"]
        lines.append(
            f"| {r['papers']} | {lat['chunks']} | {_pair(lat, 'reranked')} | {_pair(lat, 'hybrid')} | "
            f"{_pair(lat, 'dense')} | {_pair(lat, 'floor')}"
            f" | {lat['hybrid_vs_floor_p50']}× | {lat['ask']['p50_ms']} / {lat['ask']['p95_ms']} | "
            f"{r['cold']['ask_s']} | {r['cold']['import_chromadb_s']} | "
            f"{lat.get('known_item_recall@1', '–')} / {lat.get('known_item_recall@5', '–')} | "
            f"{lat.get('known_item_recall@1_reranker_off', '–')} / {lat.get('known_item_recall@5_reranker_off', '–')} |"
        )
    return "\n".join(lines) + "\n"


def _pair(latency: dict, name: str) -> str:
    """The "p50 / p95" of one timing, or – for a run that predates it."""
    timing = latency.get(name)
    return f"{timing['p50_ms']} / {timing['p95_ms']}" if timing else "–"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared/corpus/iclr-2025-2026.jsonl.gz")
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    parser.add_argument("--sizes", default="1000,10000,0", help="0 means the whole corpus")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument(
        "--latency-only",
        action="store_true",
        help="re-measure query latency on the store an earlier run left in OUT/work (after a query-path change)",
    )
    args = parser.parse_args()

    from rag.config import Settings
    from rag.embedding import get_embedder

    out = args.out
    work = out / "work"
    if args.latency_only:
        latency_only(args, work)
        return
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    store_dir = work / "store"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env.update(RAG_STORE=str(store_dir), XDG_CACHE_HOME=str(work / "cache"), XDG_DATA_HOME=str(work / "data"))
    settings = replace(Settings(), store=store_dir)
    embedder = get_embedder(settings)

    with gzip.open(args.corpus, "rt", encoding="utf-8") as f:
        rows = f.readlines()
    random.Random(0).shuffle(rows)
    sizes = [int(s) or len(rows) for s in args.sizes.split(",")]
    questions = [json.loads(line)["question"] for line in (HERE / "questions.jsonl").open()]
    known_all = [json.loads(line) for line in (HERE / "corpus_known_items.jsonl").open()]
    results: dict = {
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0], "platform": sys.platform},
        "corpus": str(args.corpus),
        "ingest": {},
        "sizes": {},
    }

    previous = 0
    for size in sizes:
        sample = work / f"sample-{size}.jsonl.gz"
        write_sample(rows[:size], sample)
        ing = results["ingest"]
        if previous == 0:
            texts, papers = chunk_texts(sample, settings)
            embedder.embed(texts[:64])
            started, cpu_started = time.perf_counter(), cpu_seconds()
            embedder.embed(texts)
            raw = papers / (time.perf_counter() - started)
            raw_cpu = papers / (cpu_seconds() - cpu_started)
            ing["raw_onnx_papers_per_s"] = round(raw, 2)
            ing["raw_onnx_papers_per_cpu_s"] = round(raw_cpu, 2)
            ing["raw_chunks"] = len(texts)
            wall, peak, cpu = run_cli(["ingest", str(sample)], env)
            ing["rag_ingest_1k_papers_per_s"] = round(size / wall, 2)
            ing["rag_ingest_1k_papers_per_cpu_s"] = round(size / cpu, 2)
            ing["ratio_1k"] = round(size / wall / raw, 3)
            ing["cpu_ratio_1k"] = round(size / cpu / raw_cpu, 3)
            ing["peak_rss_mb"] = peak
            save(out, results)
            if not args.skip_naive:
                cpu_started = cpu_seconds()
                naive = naive_llama_index(sample, work / "naive-store", embedder)
                ing["naive_llama_index_papers_per_s"] = round(size / naive, 2)
                ing["naive_llama_index_papers_per_cpu_s"] = round(size / (cpu_seconds() - cpu_started), 2)
                shutil.rmtree(work / "naive-store", ignore_errors=True)
            wall, _, _ = run_cli(["ingest", str(sample)], env)
            ing["reingest_unchanged_1k_s"] = round(wall, 2)
        else:
            label = "10k" if size <= 10_000 else "full"
            wall, peak, cpu = run_cli(["ingest", str(sample)], env)
            ing[f"rag_ingest_{label}_new_papers_per_s"] = round((size - previous) / wall, 2)
            ing[f"ratio_{label}"] = round((size - previous) / wall / ing["raw_onnx_papers_per_s"], 3)
            ing[f"cpu_ratio_{label}"] = round((size - previous) / cpu / ing["raw_onnx_papers_per_cpu_s"], 3)
            ing["peak_rss_mb"] = max(ing["peak_rss_mb"], peak)
            if size == len(rows):
                wall, _, _ = run_cli(["ingest", str(sample)], env)
                ing["reingest_unchanged_full_s"] = round(wall, 2)
        save(out, results)
        ids = {json.loads(r)["id"] for r in rows[:size]}
        known = [k for k in known_all if k["gold_ids"][0] in ids]
        latency = latency_at_size(settings, questions, known, args.rounds)
        results["sizes"][str(size)] = {"papers": size, "latency": latency, "cold": cold_ask(env, 5)}
        save(out, results)
        (out / "bench.md").write_text(markdown(results))
        plot(results, out / "latency.png")
        previous = size
        print(f"{size} papers done: {json.dumps(results['sizes'][str(size)])}", flush=True)
    print(markdown(results))


def latency_only(args, work: Path) -> None:
    """Query latency (and cold ask) on the existing store, added to OUT/results.json under "rerun"."""
    from rag.config import Settings
    from rag.store import Store

    store_dir = work / "store"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env.update(RAG_STORE=str(store_dir), XDG_CACHE_HOME=str(work / "cache"), XDG_DATA_HOME=str(work / "data"))
    settings = replace(Settings(), store=store_dir)
    size = Store(settings).count_papers()
    questions = [json.loads(line)["question"] for line in (HERE / "questions.jsonl").open()]
    with gzip.open(args.corpus, "rt", encoding="utf-8") as f:
        rows = f.readlines()
    random.Random(0).shuffle(rows)
    ids = {json.loads(r)["id"] for r in rows[:size]}
    known = [k for k in map(json.loads, (HERE / "corpus_known_items.jsonl").open()) if k["gold_ids"][0] in ids]
    path = args.out / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {"sizes": {}}
    latency = latency_at_size(settings, questions, known, args.rounds)
    results.setdefault("rerun", {})[str(size)] = {"papers": size, "latency": latency, "cold": cold_ask(env, 5)}
    save(args.out, results)
    print(json.dumps(results["rerun"][str(size)], indent=1))


if __name__ == "__main__":
    main()
