"""The packaged cross-encoder reranker and its calibration (rag/rerank.py): the shipped files match their model
card, a damaged install is a one-line error, the model orders a small hand-built case, its calibrated relevance
decides abstention and citations, and the calibration was fitted on dev questions only."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from rag.config import Settings
from rag.errors import ModelError
from rag.policy import Policy, load_calibration
from rag.rerank import FEATURES, MODEL_DIR, Reranker, get_reranker
from rag.wire import source_json
from tests.helpers import ask, cli_env, retrieve

REPO = Path(__file__).resolve().parent.parent


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_packaged_model_matches_its_model_card():
    manifest = json.loads((MODEL_DIR / "model.json").read_text())
    model = MODEL_DIR / manifest["file"]
    card = (MODEL_DIR / "MODEL_CARD.md").read_text()
    on_card = dict(re.findall(r"`([\w.]+)` ([0-9a-f]{64})", card))
    assert on_card[model.name] == _sha256(model) == manifest["sha256"]
    assert on_card["tokenizer.json"] == _sha256(MODEL_DIR / "tokenizer.json")
    assert model.stat().st_size <= 25_000_000  # issue 16's limit per shipped model
    for heading in ("Base model", "License", "Data", "Training command", "sha256"):
        assert heading in card


def _copy_model(tmp_path: Path) -> Path:
    folder = tmp_path / "reranker"
    shutil.copytree(MODEL_DIR, folder)
    return folder


def test_a_corrupt_model_file_is_a_one_line_error(tmp_path):
    folder = _copy_model(tmp_path)
    model = folder / json.loads((folder / "model.json").read_text())["file"]
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte in the weights: loads fine, ranks wrong
    model.write_bytes(bytes(data))
    with pytest.raises(ModelError) as error:
        Reranker(folder)
    assert "corrupt" in str(error.value) and "\n" not in str(error.value)


def test_a_missing_model_file_or_calibration_is_a_one_line_error(tmp_path):
    folder = _copy_model(tmp_path)
    (folder / "calibration.json").unlink()
    with pytest.raises(ModelError, match="not installed") as error:
        load_calibration(folder)
    assert "\n" not in str(error.value)
    with pytest.raises(ModelError, match="not installed"):  # the pipeline's policy reads it from the folder
        Policy.from_settings(replace(Settings(), reranker_model=folder))
    (folder / json.loads((folder / "model.json").read_text())["file"]).unlink()
    with pytest.raises(ModelError, match="not installed"):
        Reranker(folder)


def test_the_cli_reports_a_corrupt_install_in_one_line_and_fails(tmp_path, seed_store_dir):
    """An installed copy of the package whose model file was truncated: `ask` says so in one line, exit 1."""
    copy = tmp_path / "site"
    shutil.copytree(REPO / "rag", copy / "rag", ignore=shutil.ignore_patterns("__pycache__"))
    model = copy / "rag" / "models" / "reranker" / json.loads((MODEL_DIR / "model.json").read_text())["file"]
    model.write_bytes(model.read_bytes()[:1000])
    env = cli_env(PYTHONPATH=str(copy), RAG_STORE=str(seed_store_dir), HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "rag", "ask", "which papers study spiking neural networks?"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,  # not the checkout: `-m rag` must import the damaged copy
        timeout=120,
    )
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "corrupt" in lines[0] and "Traceback" not in done.stderr
    # Switched off, the same install answers.
    done = subprocess.run(
        [sys.executable, "-m", "rag", "ask", "which papers study spiking neural networks?"],
        capture_output=True,
        text=True,
        env={**env, "RAG_RERANKER": "off"},
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0 and "[002-15]" in done.stdout


def test_the_reranker_puts_the_paper_on_the_topic_above_papers_sharing_its_words(seed_papers):
    """Spiking neural networks: the SNN paper (002-15) above an RNN trained by equilibrium propagation (003-03,
    "brain-like", "neural") and the Kolmogorov-Arnold network paper (003-11, "neural networks")."""
    papers = {p.id: p for p in seed_papers}
    reranker = get_reranker()
    ids = ["003-03", "003-11", "002-15"]
    logits = reranker.logits("which papers study spiking neural networks?", [papers[i].abstract for i in ids])
    assert ids[int(logits.argmax())] == "002-15"
    # and the other way round: the KAN question puts the KAN paper first
    logits = reranker.logits("Kolmogorov-Arnold networks", [papers[i].abstract for i in ids])
    assert ids[int(logits.argmax())] == "003-11"


def test_a_question_longer_than_the_models_window_is_answered(seed_store, seed_settings, seed_papers):
    """A question of more tokens than the cross-encoder reads (128) is cut to fit, beside the passage, instead of
    failing the whole ask; a question of ordinary length is scored exactly as the model was trained (only the
    passage is cut)."""
    from tokenizers import Tokenizer

    store, embedder = seed_store
    long_question = "which papers study spiking neural networks " + "trained with surrogate gradients " * 40
    answer = ask(long_question, store, embedder, seed_settings)
    # The cross-encoder read the cut question: the spiking-network paper is the most relevant source (a refusal
    # shows first the paper its message names, so the first row need not be it).
    assert answer.sources and max(answer.sources, key=lambda s: s.relevance or 0.0).id == "002-15"

    reranker = get_reranker()
    trained = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    trained.enable_truncation(max_length=reranker.max_length, strategy="only_second")
    question, passage = "which papers study spiking neural networks?", seed_papers[0].abstract
    assert reranker.tokenizer.encode(question, passage).ids == trained.encode(question, passage).ids


def test_relevance_is_a_probability_and_orders_the_sources(seed_store, seed_settings):
    store, embedder = seed_store
    sources = retrieve("which papers study spiking neural networks?", store, embedder, seed_settings, k=5).sources
    relevance = [s.relevance for s in sources]
    assert all(r is not None and 0.0 <= r <= 1.0 for r in relevance)
    assert relevance == sorted(relevance, reverse=True)
    assert sources[0].id == "002-15"
    assert source_json(sources[0])["relevance"] == round(relevance[0], 4)
    off = retrieve(
        "which papers study spiking neural networks?", store, embedder, replace(seed_settings, reranker=False)
    )
    assert all(s.relevance is None for s in off.sources) and "relevance" not in source_json(off.sources[0])


def test_relevance_decides_abstention(seed_store, seed_settings):
    store, embedder = seed_store
    bar = load_calibration().relevance_bar
    # Read as a question about one thing (the rules' reading), the relevance bar refuses it; the list reader reads
    # it as a list request, and the facet rule refuses it first, naming the word no paper holds.
    question = "what is the best recipe for sourdough bread?"
    off_topic = ask(question, store, embedder, replace(seed_settings, list_reader="rules"))
    assert off_topic.abstained and f"below the bar {bar:g}" in off_topic.answer
    assert max(s.relevance for s in off_topic.sources) < bar
    as_list = ask(question, store, embedder, seed_settings)
    assert as_list.abstained and "no paper found covers" in as_list.answer and "sourdough”" in as_list.answer
    answered = ask("which papers study spiking neural networks?", store, embedder, seed_settings)
    assert not answered.abstained and answered.citations[0] == "002-15"
    # papers the user chose (a follow-up about them), or min_score 0, apply no bar, reranked or not
    chosen = ask(
        "what is the best recipe for sourdough bread?",
        store,
        embedder,
        seed_settings,
        paper_ids=["002-15"],
        policy=replace(Policy.from_settings(seed_settings), papers_chosen=True),
    )
    assert not chosen.abstained
    bars_off = ask(
        "what is the best recipe for sourdough bread?",
        store,
        embedder,
        replace(seed_settings, min_score=0.0),
        paper_ids=["002-15"],
    )
    assert not bars_off.abstained


def test_a_coined_name_a_paper_writes_is_answered_by_that_paper_under_the_bar(seed_store, seed_settings):
    """UEMCP's paper scores under the relevance bar for "what is UEMCP?" (MiniLM and the cross-encoder score rare
    names low); a paper that writes the name answers. A name no paper writes is still abstained on."""
    store, embedder = seed_store
    bar = load_calibration().relevance_bar
    uemcp = ask("what is UEMCP?", store, embedder, seed_settings)
    assert max(s.relevance for s in uemcp.sources) < bar
    assert not uemcp.abstained and uemcp.citations == ["000-02"]
    assert ask("what is CAMEL?", store, embedder, seed_settings).citations == ["002-06"]
    assert ask("what is Zorblax?", store, embedder, seed_settings).abstained
    # the paper quoted is the one writing the name, not a higher-ranked one writing only "VQ-VAE"
    vae = ask("what is a VAE?", store, embedder, seed_settings)
    assert vae.sources[0].id == "000-01" and vae.citations == ["002-05"]


def test_only_papers_at_the_cite_bar_are_cited(seed_store, seed_settings):
    store, embedder = seed_store
    bar = load_calibration().cite_bar
    answer = ask("which papers study spiking neural networks?", store, embedder, seed_settings, k=10)
    relevance = {s.id: s.relevance for s in answer.sources}
    assert answer.citations and all(relevance[c] >= bar for c in answer.citations[1:])
    assert answer.citations[0] == answer.sources[0].id


def test_the_calibration_was_never_fitted_on_a_reported_question():
    """calibration.json is fitted on the dev part and the spent sets the abstention bar is chosen on (dev2-4,
    sealed-sealed10) with the off-domain fit half: never the test part, held-out or a set reported on."""
    from rag.evaluation.questions import load_questions, load_split, select_split
    from train.calibrate import dev_questions

    split_file = REPO / "evals" / "split.json"
    questions_file = REPO / "evals" / "questions.jsonl"
    split = load_split(split_file)
    test_qids = {q.qid for q in select_split(load_questions([questions_file]), "test", split)}
    # the calibration code reads the dev part (and the extra sets it is given) only ...
    assert not {q.qid for q in dev_questions(questions_file, split_file, [REPO / "evals" / "dev2.jsonl"])} & test_qids
    dev = dev_questions(questions_file, split_file)
    assert dev and not {q.qid for q in dev} & test_qids
    # ... and the shipped calibration names the files it read, each one the bar is chosen on, and their qids
    shipped = json.loads((MODEL_DIR / "calibration.json").read_text())
    fitted = shipped["fitted_on"]
    allowed = {f"{name}.jsonl" for name in ("dev2", "dev3", "dev4", "sealed", *(f"sealed{n}" for n in range(2, 11)))}
    assert fitted["part"] == "dev" and fitted["split_file_sha256"] == _sha256(split_file)
    assert set(fitted["extra_files"]) <= allowed | {"off_domain_fit.jsonl"}
    extra = [REPO / ("train/data" if n == "off_domain_fit.jsonl" else "evals") / n for n in fitted["extra_files"]]
    assert set(fitted["qids"]) == {q.qid for q in dev} | {q.qid for q in load_questions(extra)}
    assert not set(fitted["qids"]) & test_qids
    assert set(shipped["relevance_bar_chosen"]["calibrated_on"]) == {
        "dev",
        *(n.removesuffix(".jsonl") for n in allowed),
    }
    assert shipped["features"] == list(FEATURES)


def test_rag_reranker_off_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("RAG_RERANKER", "off")
    assert Settings.from_env().reranker is False
    monkeypatch.delenv("RAG_RERANKER")
    assert Settings.from_env().reranker is True


def test_loading_is_lazy_on_the_cli_path():
    """`import rag` and `rag --help` must not load onnxruntime for the reranker."""
    code = "import sys, rag.cli; assert 'rag.rerank' not in sys.modules; assert 'onnxruntime' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_a_compound_topic_no_paper_covers_is_abstained_on_by_the_facet_rule(seed_store, seed_settings):
    """The cross-encoder calls an unlearning paper relevant to "federated unlearning" (it covers half the topic);
    the facet rule applies to topic questions, and the message says which rule abstained."""
    store, embedder = seed_store
    asked = ask("which papers study federated unlearning?", store, embedder, seed_settings)
    assert asked.abstained and asked.citations == []
    assert max(s.relevance for s in asked.sources) >= load_calibration().relevance_bar
    assert "no paper found covers “federated unlearning”" in asked.answer and "relevance" in asked.answer
