"""Shared fixtures: every test runs offline against real Chroma stores in temporary directories."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SEEDS = REPO / "seeds"


pytest_plugins = ["tests.ci_guard", "pytester"]


def _isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """The user's configuration cleared (RAG_*/OPENAI_*), and every per-user directory under `home`."""
    for name in list(os.environ):
        if name.startswith(("RAG_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    for variable, folder in (("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"), ("XDG_CONFIG_HOME", "config")):
        monkeypatch.setenv(variable, str(home / folder))
    # Belt and braces: nothing may reach a hub or phone home.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")


@pytest.fixture(scope="session", autouse=True)
def session_env(tmp_path_factory) -> Iterator[Path]:
    """Isolation for the session- and module-scoped fixtures too, which are built before any test's own.

    Yields the shared model directory: the local model is assembled there once per session (never into the
    user's ~/.cache); `isolated_env` points every test at it through RAG_MODEL_DIR.
    """
    models = tmp_path_factory.mktemp("models")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _isolate(monkeypatch, tmp_path_factory.mktemp("session-home"))
        monkeypatch.setenv("RAG_MODEL_DIR", str(models))
        yield models


@pytest.fixture(autouse=True)
def isolated_env(session_env, tmp_path_factory, monkeypatch):
    """No test sees the user's configuration or store, nor another test's: a fresh home for each, and no
    endpoint another test left marked as failing (the circuit breakers are process-wide, and a scripted
    server's port can come round again within a cooldown)."""
    from rag.llm import BREAKERS

    _isolate(monkeypatch, tmp_path_factory.mktemp("home"))
    monkeypatch.setenv("RAG_MODEL_DIR", str(session_env))
    BREAKERS.clear()
    yield
    BREAKERS.clear()


@pytest.fixture(scope="session")
def seed_papers():
    from rag.corpus import load_papers

    return load_papers([SEEDS])


@pytest.fixture(scope="session")
def seed_store_dir(tmp_path_factory, seed_papers) -> Path:
    """A store holding the 95 seeds, built once per session with the real model (read-only for tests)."""
    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.ingest import write
    from rag.store import Store

    path = tmp_path_factory.mktemp("seed-store") / "store"
    settings = replace(Settings(), store=path)
    write(Store(settings), seed_papers, get_embedder(settings))
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
