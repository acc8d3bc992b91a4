"""Helpers shared by test modules that drive the installed commands in subprocesses."""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def cli_env(**extra: str) -> dict[str, str]:
    """The environment without the user's RAG_*/OPENAI_* settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env.update(extra)
    return env


def write_jsonl_gz(papers, path: Path) -> Path:
    """Papers in the corpus format (gzipped JSONL), with a title each so chunks carry one."""
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for p in papers:
            row = {"id": p.id, "title": f"Paper {p.id}", "abstract": p.abstract, "year": p.year, "venue": p.venue}
            f.write(json.dumps(row) + "\n")
    return path


def chroma_chunk_rows(store: Path) -> int:
    """Chunk records committed so far, read from Chroma's SQLite file as a progress probe (read-only)."""
    db = store / "chroma.sqlite3"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    except sqlite3.Error:
        return 0
