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


# Conjunction queries ("machine unlearning for diffusion models"): a corpus of half matches.
CONJ_ROWS = [
    ("U1", "Erasing Concepts: Machine Unlearning for Diffusion Models",
     "We study machine unlearning in diffusion models: our method removes a concept from text-to-image diffusion "
     "models without retraining them.", ["Machine Unlearning", "Diffusion Models", "concept erasure"]),
    ("U2", "Forgetting Styles in Diffusion Models via Machine Unlearning",
     "Machine unlearning makes diffusion models forget artistic styles.", ["machine unlearning", "diffusion models"]),
    # Half matches: machine unlearning without diffusion models, and diffusion models without machine unlearning.
    *[(f"L{i}", f"Machine Unlearning for Large Language Models {i}",
       f"We study machine unlearning of private facts from large language models with {i + 2} benchmarks.",
       ["machine unlearning", "language models"]) for i in range(3)],
    *[(f"D{i}", f"Fast Sampling for Diffusion Models {i}",
       f"We accelerate the sampling of diffusion models for image synthesis in {i + 2} steps.",
       ["diffusion models", "fast sampling"]) for i in range(3)],
    ("S1", "A Diffusion Model for Protein Design",  # "diffusion model": the same phrase once stemmed
     "A diffusion model generates protein backbones.", ["protein design"]),
    # Holds both once its keywords count: never a half match.
    ("K1", "Editing Diffusion Models", "We edit what diffusion models generate.", ["machine unlearning", "editing"]),
    # Shares the first paper's other keyword ("concept erasure"): too close to be a negative.
    ("X1", "Concept Erasure in Diffusion Models", "Concept erasure for diffusion models at inference time.",
     ["concept erasure", "diffusion models"]),
    ("G1", "Graph Neural Networks for Drug Discovery",
     "We apply graph neural networks (GNNs) to drug discovery and molecular property prediction.",
     ["GNNs", "graph neural networks", "drug discovery"]),
    *[(f"G{i + 2}", f"Graph Neural Networks for Traffic {i}", f"Graph neural networks forecast road traffic {i}.",
       ["graph neural networks", "traffic"]) for i in range(2)],
    *[(f"R{i}", f"Virtual Screening in Drug Discovery {i}", f"Drug discovery by docking {i} million molecules.",
       ["drug discovery", "docking"]) for i in range(2)],
]  # fmt: skip


@pytest.fixture()
def conj_corpus(tmp_path) -> Path:
    folder = tmp_path / "conj"
    folder.mkdir()
    rows = [{"id": i, "title": t, "abstract": a, "keywords": k, "primary_area": "generative models"}
            for i, t, a, k in CONJ_ROWS]  # fmt: skip
    (folder / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def conj_make(corpus: Path, out: Path, *extra: str) -> tuple[list[dict], dict]:
    main(["--corpus", str(corpus), "--out", str(out), "--heldout-fraction", "0", "--no-known-items", *extra])
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    return pairs, json.loads((out / "manifest.json").read_text())


def test_conjunction_queries_join_two_keywords_and_take_half_matches_as_negatives(conj_corpus, tmp_path):
    from rag.lexical import contains_phrase

    pairs, manifest = conj_make(conj_corpus, tmp_path / "out", "--kinds", "conjunction")
    rows = {i: (t, a, k) for i, t, a, k in CONJ_ROWS}
    assert pairs and {p["kind"] for p in pairs} == {"conjunction"} and manifest["kinds"] == {"conjunction": len(pairs)}
    for pair in pairs:
        a, b = pair["parts"]
        title, abstract, keywords = rows[pair["positive_id"]]
        assert a in pair["query"] and b in pair["query"]
        assert {a, b} <= {k.lower() for k in keywords}
        assert contains_phrase(a, f"{title} {abstract}") and contains_phrase(b, f"{title} {abstract}")
        assert pair["positive_id"] not in pair["negative_ids"] and 2 <= len(pair["negative_ids"]) <= 4
        sides = []
        for negative in pair["negative_ids"]:
            n_title, n_abstract, n_keywords = rows[negative]
            visible, everything = f"{n_title} {n_abstract}", f"{n_title} {n_abstract} {' '.join(n_keywords)}"
            held = [part for part in (a, b) if contains_phrase(part, visible)]
            assert len(held) == 1, (pair, negative)  # a half match: one part in what the model reads ...
            other = b if held[0] == a else a
            assert not contains_phrase(other, everything)  # ... and the other part nowhere, keywords included
            sides.append(held[0])
        assert sides[0] != sides[1]  # the first two negatives: one of each half
    first = [p for p in pairs if p["positive_id"] == "U1"]
    assert len(first) == 1 and set(first[0]["parts"]) == {"machine unlearning", "diffusion models"}
    negatives = set(first[0]["negative_ids"])
    assert negatives & {"L0", "L1", "L2"} and negatives & {"D0", "D1", "D2", "S1"}
    assert not negatives & {"U2", "K1", "X1"}  # both parts, both once keywords count, the shared "concept erasure"
    drug = [p for p in pairs if p["positive_id"] == "G1"]  # "gnns" is "graph neural networks": never joined to it
    assert drug and all(set(p["parts"]) != {"gnns", "graph neural networks"} for p in drug)


def test_conjunction_is_opt_in_and_leaves_the_other_kinds_as_they_were(corpus, conj_corpus, tmp_path):
    for name, folder in (("synthetic", corpus), ("conj", conj_corpus)):
        old, old_manifest = conj_make(folder, tmp_path / f"{name}-old", "--seed", "7")
        new, new_manifest = conj_make(folder, tmp_path / f"{name}-new", "--seed", "7", "--kinds",
                                      "title,keyword,area_keyword,template,conjunction")  # fmt: skip
        assert "conjunction" not in old_manifest["kinds"] and "conjunction" not in {p["kind"] for p in old}
        assert [p for p in new if p["kind"] != "conjunction"] == old
        assert new_manifest["kinds"]["conjunction"] == sum(p["kind"] == "conjunction" for p in new)
    assert new_manifest["kinds"]["conjunction"] > 0
    conj_make(conj_corpus, tmp_path / "again", "--seed", "7", "--kinds",
              "title,keyword,area_keyword,template,conjunction")  # fmt: skip
    assert (tmp_path / "again" / "pairs.jsonl").read_bytes() == (tmp_path / "conj-new" / "pairs.jsonl").read_bytes()
    only, _ = conj_make(conj_corpus, tmp_path / "only", "--seed", "7", "--kinds", "conjunction")
    assert only == [p for p in new if p["kind"] == "conjunction"]


def test_conjunction_choices_skip_near_duplicates_and_acronyms():
    import random

    from train.pairs import acronym_of, conjunction_choices

    parts = [
        ("contrastive learning", "contrast learn"),
        ("graph contrastive learning", "graph contrast learn"),
        ("gnns", "gnns"),
        ("graph neural networks", "graph neural network"),
    ]
    choices = conjunction_choices(parts, random.Random(0))
    pairs = [{first[0], second[0]} for first, second in choices]
    assert {"contrastive learning", "graph contrastive learning"} not in pairs  # a word in common
    assert {"gnns", "graph neural networks"} not in pairs  # an acronym of the other
    assert {"gnns", "contrastive learning"} in pairs
    assert acronym_of("GNN", "graph neural networks") and not acronym_of("gan", "graph neural networks")


def test_unknown_kind_is_refused(corpus, tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--corpus", str(corpus), "--out", str(tmp_path / "out"), "--kinds", "title,conjuction"])
    assert exited.value.code == 2
    assert "--kinds takes a comma-separated subset of" in capsys.readouterr().err


def test_describe_queries_are_what_the_paper_does_without_its_name_and_hide_their_sentence(corpus, tmp_path):
    pairs, _, manifest = make(corpus, tmp_path / "out", "--kinds", "describe")
    rows = {r["id"]: r for r in corpus_rows()}
    assert pairs and {p["kind"] for p in pairs} == {"describe"} and manifest["kinds"] == {"describe": len(pairs)}
    for pair in pairs:
        row = rows[pair["positive_id"]]
        name = row["title"].partition(":")[0]
        assert pair["hidden"] in row["abstract"]  # the abstract sentence it came from, verbatim
        assert name.lower() not in pair["query"] and pair["query"] == pair["query"].lower()
        assert 6 <= len(pair["query"].split()) <= 24 and pair["positive_id"] not in pair["negative_ids"]
    # "We study label noise in deep networks." leaves five words: too few to describe, so no query.
    assert not {"P000", "P001"} & {p["positive_id"] for p in pairs}


def test_describe_is_opt_in_and_leaves_the_other_kinds_as_they_were(corpus, tmp_path):
    old, _, old_manifest = make(corpus, tmp_path / "old", "--seed", "7")
    new, _, _ = make(corpus, tmp_path / "new", "--seed", "7", "--kinds", "title,keyword,area_keyword,template,describe")
    assert "describe" not in old_manifest["kinds"]
    assert [p for p in new if p["kind"] != "describe"] == old


def test_a_description_needs_words_that_describe():
    from collections import Counter

    from train.pairs import Record, description

    def record(abstract: str) -> Record:
        return Record("x", "DiVeQ: Differentiable Vector Quantization", abstract, (), "")

    titles = Counter({"diveq": 1})
    # The name, the acronym in parentheses and the filler are gone; what is left says what the paper does.
    query, hidden = description(
        record(
            "Codebooks are hard to train. In this work, we propose DiVeQ, a novel technique (DVQ) that treats "
            "quantization as adding an error vector. It works."
        ),
        titles,
    )
    assert query == "technique that treats quantization as adding an error vector"
    assert hidden.startswith("In this work, we propose DiVeQ")
    # With no sentence saying what the paper does, the first one (the problem) is described.
    query, hidden = description(record("Vector quantizers lose gradients at the snapping step. It works."), titles)
    assert query == "vector quantizers lose gradients at the snapping step" and hidden.startswith("Vector quantizers")
    # "We propose DiVeQ." leaves too few words to describe: no query.
    assert (
        description(record("Vector quantizers lose gradients at the snapping step. We propose DiVeQ."), titles) is None
    )
