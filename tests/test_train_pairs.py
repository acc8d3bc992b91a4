"""train/pairs.py: the training pairs of issue 16, on a 27-paper corpus written here (two real seed papers, a
resubmission of one of them under the same title, and 24 synthetic papers in near-miss pairs)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rag.corpus import load_papers
from train.pairs import main, normalize

SEEDS = Path(__file__).resolve().parent.parent / "seeds"
# Near-miss pairs: each phrase shares a word with its neighbour, so BM25 ranks one for the other's query.
PHRASES = [
    "label noise",
    "label smoothing",
    "product quantization",
    "scalar quantization",
    "graph clustering",
    "spectral clustering",
    "diffusion policies",
    "diffusion distillation",
    "machine unlearning",
    "federated unlearning",
    "test time adaptation",
    "test time training",
]
AREAS = ["optimization", "generative models", "applications to physical sciences (physics, chemistry, etc.)", None]


def corpus_rows() -> list[dict]:
    seeds = {p.id: p for p in load_papers([SEEDS])}
    rows = [
        {
            "id": "KRVnpTbx7R",
            "title": "DiVeQ: Differentiable Vector Quantization Using the Reparameterization Trick",
            "abstract": seeds["000-01"].abstract,
            "keywords": ["Vector Quantization", "Codebook Learning"],
            "primary_area": "unsupervised, self-supervised, semi-supervised, and supervised representation learning",
        },
        {
            "id": "KAGR7Mqu4h",
            "title": "Unified and Efficient Multi-view Clustering from Probabilistic Perspective",
            "abstract": seeds["000-02"].abstract,
            "keywords": ["Multi-view clustering", "anchor"],
            "primary_area": "unsupervised, self-supervised, semi-supervised, and supervised representation learning",
        },
        {  # a resubmission: another id and abstract, the seed's title up to case and punctuation
            "id": "RESUBdiveq",
            "title": "DiVeQ -- differentiable vector-quantization using the  reparameterization trick.",
            "abstract": "We revisit vector quantization with a reparameterization of the codebook assignment.",
            "keywords": None,
            "primary_area": "generative models",
        },
    ]
    for i, phrase in enumerate(PHRASES):
        for j, style in enumerate(("Robust", "Scalable")):
            name = f"{phrase.split()[-1].capitalize()}Net{i}{j}"
            rows.append(
                {
                    "id": f"P{i:02d}{j}",
                    "title": f"{name}: {style} {phrase.title()} for Deep Networks",
                    "abstract": f"We study {phrase} in deep networks. {name} makes {phrase} {style.lower()} and "
                    f"we evaluate it on standard benchmarks of {phrase} with {i + j + 2} datasets.",
                    "keywords": [phrase, "deep learning"] if j == 0 else [phrase.upper()],
                    "primary_area": AREAS[(i + j) % len(AREAS)],
                    "year": 2026,
                }
            )
    return rows


@pytest.fixture()
def corpus(tmp_path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    with gzip.open(folder / "papers.jsonl.gz", "wt", encoding="utf-8") as handle:
        for row in corpus_rows():
            handle.write(json.dumps(row) + "\n")
    return folder


def make(corpus: Path, out: Path, *extra: str) -> tuple[list[dict], set[str], dict]:
    main(["--corpus", str(corpus), "--out", str(out), "--heldout-fraction", "0.25", "--no-known-items", *extra])
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    heldout = set((out / "heldout_ids.txt").read_text().split())
    return pairs, heldout, json.loads((out / "manifest.json").read_text())


def mentioned(pairs: list[dict]) -> set[str]:
    return {p["positive_id"] for p in pairs} | {n for p in pairs for n in p["negative_ids"]}


def test_seeds_and_papers_sharing_their_titles_are_left_out(corpus, tmp_path):
    pairs, heldout, manifest = make(corpus, tmp_path / "out")
    left_out = {"KRVnpTbx7R", "KAGR7Mqu4h", "RESUBdiveq"}
    assert not left_out & (mentioned(pairs) | heldout)
    assert manifest["excluded"] == {"seeds": 2, "seed_titles": 1, "known_items": 0, "known_item_titles": 0}
    assert manifest["seeds"]["matched"] == 2 and manifest["seeds"]["corpus_ids"]["000-01"] == ["KRVnpTbx7R"]
    assert not any("diveq" in normalize(p["query"]) for p in pairs)


def test_heldout_papers_are_never_positives_or_negatives(corpus, tmp_path):
    pairs, heldout, manifest = make(corpus, tmp_path / "out")
    assert heldout and manifest["heldout"] == len(heldout)
    assert not heldout & mentioned(pairs)
    assert manifest["pool"] + len(heldout) + 3 == 27 and manifest["positives"] == manifest["pool"]


def test_negatives_are_near_misses_not_the_positive_or_its_keyword(corpus, tmp_path):
    pairs, _, manifest = make(corpus, tmp_path / "out")
    rows = {r["id"]: r for r in corpus_rows()}
    assert {p["kind"] for p in pairs} == {"title", "keyword", "area_keyword", "template"}
    assert sum(manifest["kinds"].values()) == len(pairs)
    for pair in pairs:
        assert pair["negative_ids"] and pair["positive_id"] not in pair["negative_ids"]
        assert len(set(pair["negative_ids"])) == len(pair["negative_ids"]) <= 4
        topics = {k.lower() for k in rows[pair["positive_id"]]["keywords"]}
        assert not any(topics & {k.lower() for k in rows[n]["keywords"]} for n in pair["negative_ids"])
        assert not any(
            normalize(rows[n]["title"]) == normalize(rows[pair["positive_id"]]["title"]) for n in pair["negative_ids"]
        )
        if pair["kind"] == "keyword":
            keyword = pair["query"].removeprefix("which papers study ").removesuffix("?")
            assert keyword in {k.lower() for k in rows[pair["positive_id"]]["keywords"]}
            for negative in pair["negative_ids"]:
                assert keyword not in {k.lower() for k in rows[negative]["keywords"] or []}
                assert keyword not in normalize(rows[negative]["title"] + " " + rows[negative]["abstract"])
    # "label noise" → the "label smoothing" papers: the near miss, sharing a word and not the topic.
    noise = [p for p in pairs if p["query"] == "which papers study label noise?"]
    assert noise and all({"P010", "P011"} & set(p["negative_ids"]) for p in noise)
    names = [p for p in pairs if p["query"].startswith("what is ")]
    assert names and all(p["kind"] == "template" for p in names)


def test_output_is_deterministic_for_a_seed(corpus, tmp_path):
    a, _, _ = make(corpus, tmp_path / "a", "--seed", "7", "--limit", "10")
    b, _, _ = make(corpus, tmp_path / "b", "--seed", "7", "--limit", "10")
    assert a == b
    assert (tmp_path / "a" / "pairs.jsonl").read_bytes() == (tmp_path / "b" / "pairs.jsonl").read_bytes()
    assert (tmp_path / "a" / "heldout_ids.txt").read_bytes() == (tmp_path / "b" / "heldout_ids.txt").read_bytes()
    assert len({p["positive_id"] for p in a}) == 10
    c, _, _ = make(corpus, tmp_path / "c", "--seed", "8", "--limit", "10")
    assert {p["positive_id"] for p in c} != {p["positive_id"] for p in a}


def test_a_malformed_corpus_line_is_one_line(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    good = json.dumps({"id": "a", "title": "T", "abstract": "A."})
    path.write_text(f"{good}\n{{not json\n")
    with pytest.raises(SystemExit) as exited:
        main(["--corpus", str(path), "--out", str(tmp_path / "out")])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {path}:2: invalid JSON (Expecting property name enclosed in double quotes)"
    ]
    path.write_text(json.dumps({"id": "a", "title": "T"}) + "\n")
    with pytest.raises(SystemExit):
        main(["--corpus", str(path), "--out", str(tmp_path / "out")])
    assert capsys.readouterr().err.splitlines() == [f"error: {path}:1: missing or empty 'abstract'"]
