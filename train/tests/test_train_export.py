"""One tiny real training run and its export: train.reranker on a hand-written pairs file (1 layer, 48 tokens,
a few steps), then train.export; the int8 ONNX model loads with onnxruntime + tokenizers and agrees with fp32."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from train.export import main as export_main
from train.onnx_scorer import OnnxCrossEncoder
from train.reranker import main as train_main

PAPERS = [
    ("p1", "Learning with Label Noise", "We study training classifiers when many labels are noisy."),
    ("p2", "Label Smoothing Revisited", "Label smoothing regularises classifiers by softening targets."),
    ("p3", "Product Quantization for Search", "Product quantization compresses vectors for nearest neighbours."),
    ("p4", "Scalar Quantization of Weights", "We quantize network weights to few bits per scalar."),
]


def write_inputs(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    rows = [{"id": i, "title": t, "abstract": a, "keywords": [], "primary_area": None} for i, t, a in PAPERS]
    (corpus / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    pairs = [
        {"query": "which papers study label noise?", "positive_id": "p1", "negative_ids": ["p2"], "kind": "keyword"},
        {"query": "label smoothing", "positive_id": "p2", "negative_ids": ["p1"], "kind": "title"},
        {"query": "product quantization", "positive_id": "p3", "negative_ids": ["p4"], "kind": "keyword"},
        {"query": "weight quantization", "positive_id": "p4", "negative_ids": ["p3"], "kind": "template"},
    ]
    pairs_file = tmp_path / "pairs.jsonl"
    pairs_file.write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    return corpus, pairs_file


def test_train_then_export_int8(tmp_path, capsys):
    corpus, pairs = write_inputs(tmp_path)
    model, onnx_dir = tmp_path / "model", tmp_path / "onnx"
    common = ["--pairs", str(pairs), "--corpus", str(corpus)]
    train_main([*common, "--out", str(model), "--layers", "1", "--max-length", "48", "--epochs", "2",
                "--batch-size", "4", "--log-every", "1", "--minutes", "5"])  # fmt: skip
    log = json.loads((model / "train_log.json").read_text())
    assert log["examples_seen"] == 16 and not log["stopped_by_budget"]
    assert log["settings"]["layers"] == 1
    config = json.loads((model / "config.json").read_text())
    assert config["num_hidden_layers"] == 1
    assert json.loads((model / "reranker.json").read_text())["head"] == "mean"
    assert (model / "head.safetensors").is_file()

    export_main(["--model", str(model), "--out", str(onnx_dir), *common, "--compare", "8", "--max-length", "48"])
    report = json.loads((onnx_dir / "export.json").read_text())
    assert report["pairs_compared"] == 8
    assert report["fp32_onnx_vs_torch_max_abs_diff"] < 1e-3
    assert report["int8_vs_fp32"]["max_abs_diff"] < 0.5
    assert report["size_mb"]["int8"] < report["size_mb"]["fp32"]
    card = (onnx_dir / "MODEL_CARD.md").read_text()
    assert "Apache-2.0" in card and report["sha256"]["model_int8.onnx"] in card

    scorer = OnnxCrossEncoder(onnx_dir, "model_int8.onnx", max_length=48)
    scores = scorer.score("label noise", [PAPERS[0][1], PAPERS[2][1], PAPERS[3][1]])
    assert scores.shape == (3,) and np.isfinite(scores).all()


def test_continue_training_from_a_saved_model_on_a_mix(tmp_path):
    corpus, pairs = write_inputs(tmp_path)
    first, second, onnx_dir = tmp_path / "first", tmp_path / "second", tmp_path / "onnx"
    common = ["--pairs", str(pairs), "--corpus", str(corpus), "--batch-size", "4", "--log-every", "1"]
    train_main([*common, "--out", str(first), "--layers", "1", "--head", "cosine", "--max-length", "48"])
    train_main([*common, "--out", str(second), "--init", str(first), "--max-pairs", "8", "--seed", "1",
                "--mix", "keyword=0.5,template=0.5"])  # fmt: skip
    log = json.loads((second / "train_log.json").read_text())
    assert log["settings"]["init"] == str(first) and log["settings"]["mix"] == {"keyword": 0.5, "template": 0.5}
    assert log["settings"]["head"] == "cosine" and log["settings"]["max_length"] == 48  # the saved model's
    assert log["settings"]["layers"] == 1 and json.loads((second / "config.json").read_text())["num_hidden_layers"] == 1
    assert log["examples_per_kind"] == {"keyword": 4, "template": 2}  # 2 keyword queries fit in 4, 1 template
    assert log["init_train_log"]["examples_seen"] == 8 and "losses" not in log["init_train_log"]
    from safetensors.torch import load_file

    before, after = load_file(str(first / "model.safetensors")), load_file(str(second / "model.safetensors"))
    assert any(not (before[k] == after[k]).all() for k in before)  # it trained on from the first model
    export_main(["--model", str(second), "--out", str(onnx_dir), "--pairs", str(pairs), "--corpus", str(corpus),
                 "--compare", "4", "--max-length", "48"])  # fmt: skip
    assert f"**Continued from** `{first}`" in (onnx_dir / "MODEL_CARD.md").read_text()
    with pytest.raises(SystemExit):
        train_main([*common, "--out", str(tmp_path / "bad"), "--init", str(first), "--max-length", "64"])
