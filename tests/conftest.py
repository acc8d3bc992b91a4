"""Shared fixtures: every test runs offline against real Chroma stores in temporary directories."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SEEDS = REPO / "seeds"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    """No test sees the user's configuration or store: RAG_*/OPENAI_* cleared, data dir redirected."""
    for name in list(os.environ):
        if name.startswith(("RAG_", "OPENAI_")):
            monkeypatch.delenv(name)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    # Belt and braces: nothing may reach a hub or phone home.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    yield


@pytest.fixture(scope="session")
def seed_papers():
    from rag.corpus import load_papers

    return load_papers([SEEDS])


@pytest.fixture(scope="session")
def seed_store_dir(tmp_path_factory, seed_papers) -> Path:
    """A store holding the 95 seeds, built once per session with the real model (read-only for tests)."""
    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.store import Store

    path = tmp_path_factory.mktemp("seed-store") / "store"
    settings = replace(Settings(), store=path)
    Store(settings).ingest(seed_papers, get_embedder(settings))
    return path


@pytest.fixture()
def seed_settings(seed_store_dir):
    from rag.config import Settings

    return replace(Settings(), store=seed_store_dir)


@pytest.fixture()
def seed_store(seed_settings):
    from rag.embedding import get_embedder
    from rag.store import Store

    return Store(seed_settings), get_embedder(seed_settings)


@pytest.fixture()
def store_copy(seed_store_dir, tmp_path) -> Path:
    """A private copy of the seed store for tests that change it."""
    target = tmp_path / "store"
    shutil.copytree(seed_store_dir, target)
    return target
