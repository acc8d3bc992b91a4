"""The CLI as a user drives it: real output, --json shapes, first-run seeding, one-line errors."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag import __version__
from rag.cli import app, ask_app

from .conftest import REPO

runner = CliRunner()
BIN = Path(sys.executable).parent

SOURCE_KEYS = {"id", "title", "label", "year", "venue", "url", "area", "status", "score", "relevance", "snippet"}


@pytest.fixture()
def use_seed_store(seed_store_dir, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"rag {__version__}"


def test_ask_prints_cited_answer_then_sources(use_seed_store):
    result = runner.invoke(ask_app, ["which papers study unlearning?"])
    assert result.exit_code == 0, result.output
    answer, _, sources = result.stdout.partition("\nSources:\n")
    assert "papers match:" in answer and "[001-02]" in answer
    source_lines = [line.strip() for line in sources.splitlines() if line.strip()]
    assert source_lines and all(line.startswith("[") for line in source_lines)
    assert any(line.startswith("[001-02] 2026") for line in source_lines)


def test_ask_json_has_the_documented_shape(use_seed_store):
    result = runner.invoke(app, ["ask", "which papers study unlearning?", "--json", "--k", "4"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) == {
        "question",
        "query",
        "answer",
        "citations",
        "sources",
        "quoted",
        "abstained",
        "backend",
        "dropped_citations",
        "timings_ms",
        "usage",
        "warnings",
    }
    assert set(payload["quoted"]) == set(payload["citations"])  # an extractive answer quotes every paper it cites
    assert payload["backend"] == "extractive" and payload["abstained"] is False and payload["usage"] is None
    assert payload["warnings"] == []
    assert len(payload["sources"]) <= 4 and all(set(s) == SOURCE_KEYS for s in payload["sources"])
    assert set(payload["citations"]) <= {s["id"] for s in payload["sources"]}
    assert set(payload["timings_ms"]) == {"retrieve", "generate", "total"}
    assert all(f"[{c}]" in payload["answer"] for c in payload["citations"])


def test_ask_json_shows_what_the_question_was_understood_to_ask(use_seed_store):
    def understood(question: str) -> dict:
        result = runner.invoke(app, ["ask", question, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    payload = understood("which ICLR 2025 papers study clustering?")
    assert payload["query"] == {
        "search": "clustering",
        "year": 2025,
        "since": None,
        "until": None,
        "venue": "ICLR 2025",
        "area": None,
        "status": None,
        "list": True,
        "excluding": None,
        "excluded": [],
    }
    assert payload["sources"] and all(s["venue"] == "ICLR 2025" for s in payload["sources"])
    assert understood("which paper proposes PURGE?")["query"]["list"] is False  # one paper, named
    # A venue the store does not use is not applied (nor shown as understood); the year still is.
    assert understood("which NeurIPS 2025 papers study clustering?")["query"] == {
        "search": "clustering",
        "year": 2025,
        "since": None,
        "until": None,
        "venue": None,
        "area": None,
        "status": None,
        "list": True,
        "excluding": None,
        "excluded": [],
    }


def test_a_venue_flag_in_any_case_finds_the_stored_venue(use_seed_store):
    for venue in ("iclr 2025", "ICLR 2025", "Iclr'2025"):
        result = runner.invoke(app, ["search", "clustering", "--venue", venue, "--json"])
        assert result.exit_code == 0, result.output
        results = json.loads(result.stdout)["results"]
        assert results and all(r["venue"] == "ICLR 2025" for r in results), venue


def test_search_json_shape_and_year_flag(use_seed_store):
    result = runner.invoke(app, ["search", "clustering", "--json", "--year", "2025", "-k", "3"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["query"] == "clustering" and len(payload["results"]) == 3
    assert all(set(r) == SOURCE_KEYS and r["year"] == 2025 for r in payload["results"])


def test_search_text_lists_ranked_papers(use_seed_store):
    result = runner.invoke(app, ["search", "vector quantization codebook"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].startswith(" 1. [000-01] 2026")


def test_search_snippets_read_as_text_and_json_keeps_the_stored_text(use_seed_store):
    shown = runner.invoke(app, ["search", "PURGE unlearning effectiveness on RWKU", "-k", "1"])
    assert "reaches 11% unlearning effectiveness" in shown.stdout and "\\%" not in shown.stdout
    raw = runner.invoke(app, ["search", "PURGE unlearning effectiveness on RWKU", "-k", "1", "--json"])
    assert "reaches 11\\% unlearning" in json.loads(raw.stdout)["results"][0]["snippet"]


def test_show_prints_the_whole_abstract(use_seed_store, seed_papers):
    result = runner.invoke(app, ["show", "[004-19]"])
    assert result.exit_code == 0
    assert result.stdout.startswith("[004-19] ICLR 2025")
    assert seed_papers[-1].abstract in " ".join(result.stdout.split())
    payload = json.loads(runner.invoke(app, ["show", "004-19", "--json"]).stdout)
    assert payload["abstract"] == seed_papers[-1].abstract and payload["year"] == 2025


@pytest.mark.parametrize(
    ("args", "message", "code"),
    [
        (["ask", "  "], "error: the question is empty", 2),
        (["show", "999-99"], "error: no paper with id '999-99'", 1),
        (
            ["ingest", "/nonexistent/papers.jsonl"],
            "error: /nonexistent/papers.jsonl: no such file or directory",
            2,
        ),
        (["ask", "x", "--backend", "gpt"], "error: unknown backend 'gpt'", 2),
        (["ask", "x", "--retriever", "foo"], "error: unknown retriever 'foo' (choose from: hybrid, hybrid-rrf", 2),
        (["search", "x", "--retriever", "foo"], "error: unknown retriever 'foo'", 2),
    ],
)
def test_errors_are_one_line_with_nonzero_exit(use_seed_store, args, message, code):
    result = runner.invoke(app, args)
    assert result.exit_code == code
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_failed_ingest_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(tmp_path / "store"))
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "g1", "abstract": "Sparse mixture of experts routing."}\n')
    assert runner.invoke(app, ["ingest", str(good)]).exit_code == 0
    more = tmp_path / "more.jsonl"
    more.write_text('{"id": "m1", "abstract": "Diffusion models for audio."}\n')
    bad = tmp_path / "bad.csv"
    bad.write_text("id,abstract\nb1,fine\nb2,\n")
    result = runner.invoke(app, ["ingest", str(more), str(bad)])
    assert result.exit_code == 2 and "bad.csv:3: missing the 'abstract' field" in result.stderr
    shown = runner.invoke(app, ["search", "diffusion audio", "--json"])
    assert [r["id"] for r in json.loads(shown.stdout)["results"]] == ["g1"]  # m1 was not half-written


def test_ingest_reports_added_then_unchanged(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(tmp_path / "store"))
    path = tmp_path / "p.csv"
    path.write_text("id,abstract,title\np1,We study tokenizers.,Tokenizers\np2,We study optimizers.,Optimizers\n")
    first = runner.invoke(app, ["ingest", str(path)])
    assert first.exit_code == 0 and "2 added, 0 updated, 0 unchanged" in first.stdout
    second = runner.invoke(app, ["ingest", str(path)])
    assert "0 added, 0 updated, 2 unchanged (0 chunks embedded" in second.stdout
    # The count is the store's, not the run's: a second file adds to the two already there.
    other = tmp_path / "q.csv"
    other.write_text("id,abstract,title\nq1,We study schedulers.,Schedulers\n")
    third = runner.invoke(app, ["ingest", str(other)])
    assert third.stdout.startswith(f"3 papers in {tmp_path / 'store'}: 1 added, 0 updated, 0 unchanged")


def test_missing_named_store_is_reported_and_not_created(tmp_path, monkeypatch):
    missing = tmp_path / "typo" / "store"
    monkeypatch.setenv("RAG_STORE", str(missing))
    for command in (["ask", "anything"], ["search", "anything"], ["show", "000-01"], ["eval", "--type", "fact"]):
        result = runner.invoke(app, command)
        assert result.exit_code == 1, command
        assert f"no store at {missing}: add papers with `rag ingest FILE... --store {missing}`" in result.stderr
        assert "the bundled seed abstracts: `rag ingest " in result.stderr
    assert not (tmp_path / "typo").exists()  # a mistyped path leaves nothing behind


def test_the_hint_for_a_store_given_by_flag_fills_that_store(tmp_path):
    """Copied as printed, the hint's commands fill the store the user named, not the default one."""
    named = tmp_path / "my store"
    result = runner.invoke(app, ["ask", "anything", "--store", str(named)])
    assert result.exit_code == 1
    quoted = f"'{named}'"  # a path with a space, quoted for the shell
    assert f"add papers with `rag ingest FILE... --store {quoted}`" in result.stderr
    assert f"(the bundled seed abstracts: `rag ingest {REPO / 'seeds'} --store {quoted}`)" in result.stderr


def test_empty_named_store_says_how_to_fill_it(tmp_path, monkeypatch):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    # a Chroma database with no collection in it
    chromadb.PersistentClient(path=str(tmp_path / "empty"), settings=ChromaSettings(anonymized_telemetry=False))
    monkeypatch.setenv("RAG_STORE", str(tmp_path / "empty"))
    result = runner.invoke(app, ["ask", "anything"])
    assert result.exit_code == 1
    assert f"is empty: add papers with `rag ingest FILE... --store {tmp_path / 'empty'}`" in result.stderr


def run_installed(args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_first_ask_on_a_fresh_machine_indexes_the_seeds_then_answers(tmp_path):
    """The README's quick start: the installed `ask`, from any directory, no configuration, no network."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    first = run_installed([str(BIN / "ask"), "which papers study unlearning?"], env, tmp_path)
    assert first.returncode == 0, first.stderr
    assert "First run: indexing the 95 bundled seed abstracts" in first.stderr
    assert "[001-02]" in first.stdout and "Sources:" in first.stdout
    assert (tmp_path / "data" / "rag-papers" / "store").is_dir()
    second = run_installed([str(BIN / "rag"), "ask", "which papers study unlearning?"], env, tmp_path)
    assert second.returncode == 0 and "First run" not in second.stderr
    assert second.stdout == first.stdout


def test_installed_command_errors_have_no_traceback(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env["RAG_STORE"] = str(tmp_path / "s")
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"id": "x", "abstract": "caf\xe9"}\n')
    result = run_installed([str(BIN / "rag"), "ingest", str(bad)], env, REPO)
    assert result.returncode == 2
    assert result.stderr == f"error: {bad}:1: not UTF-8 text (byte 0xe9)\n"


@pytest.mark.parametrize("command", ["ask", "search"])
def test_output_piped_into_head_ends_quietly(seed_store_dir, tmp_path, command):
    """`ask "…" | head -1`: the reader leaves early; no 'BrokenPipeError' message, no traceback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env["RAG_STORE"] = str(seed_store_dir)
    args = [str(BIN / "rag"), command, "which papers study unlearning?", "-k", "20"]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    # The reader is gone before the first line is written (as `head` is after its lines; closing now, not after
    # a read, keeps the test from racing the command's writes into the pipe's buffer).
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 1
    assert stderr == ""


def start_serve(store: Path, tmp_path: Path) -> tuple[subprocess.Popen, str, queue.Queue]:
    """The installed `rag serve` on a free port, once it has printed its URL; its later stderr lines (None at the
    end) come through the queue."""
    args = [str(BIN / "rag"), "serve", "--store", str(store), "--port", "0", "--no-access-log"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    process = subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, daemon=True).start()
    try:
        while (line := lines.get(timeout=120)) is not None:
            if "(the page at /" in line:
                return process, line.split(" · ")[2].split(" ")[0], lines
    except queue.Empty:
        pass
    process.kill()
    raise AssertionError(f"rag serve printed no URL (exit {process.wait()})")


def answers(url: str, seconds: float = 120) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=5) as response:
                return response.status == 200
        except OSError:
            time.sleep(0.2)
    return False


def test_serve_prints_its_url_only_once_it_answers(seed_store_dir, tmp_path):
    process, url, _ = start_serve(seed_store_dir, tmp_path)
    try:
        # At once, no retry: the URL is printed after the warm-up, not seconds before the port listens.
        with urllib.request.urlopen(f"{url}/healthz", timeout=10) as response:
            assert response.status == 200
    finally:
        process.kill()
        process.wait()


def test_ctrl_c_stops_serve_quietly(seed_store_dir, tmp_path):
    process, url, lines = start_serve(seed_store_dir, tmp_path)
    try:
        assert answers(url), "rag serve never answered"  # serving, not still starting
        process.send_signal(signal.SIGINT)  # what Ctrl-C sends
        code = process.wait(timeout=30)
    finally:
        process.kill()
    rest = "".join(iter(lambda: lines.get(timeout=5), None))
    assert (code, rest) == (0, "")  # no "error: interrupted", no traceback
