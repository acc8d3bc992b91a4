"""Secrets: the API key never shows, in any output, `--json`, log record or error message, on success or on any
failure path. The key is a recognisable canary; each test also checks it really was in play (sent to the
server), so a pass is not the accident of a key that was never set.
"""

from __future__ import annotations

import json
import logging
import traceback
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag.backends.openai_compatible import OpenAICompatibleBackend
from rag.cli import app
from rag.config import Settings
from rag.errors import LLMError
from rag.types import Source

from ..helpers import generated
from .conftest import CANARY, QUESTION, closed_url, run_chat
from .test_injection import INJECTED

runner = CliRunner()

# Every fault script of tests/llm_server.py, plus success paths. `echo-key-401` is a server that puts the key
# it received into its error message: the one place the key could come back from outside.
FAILING = [
    "error500",
    "error503",
    "hangup",
    "rate-limited-long",
    "echo-key-401",
    "malformed-json",
    "html",
    "slow",
    "stream-cut",
    "stream-reset",
    "stream-garbage",
]
SUCCEEDING = ["normal", "stream", "bad-cite", "abstain", "obey-injection", "flaky500"]


@pytest.fixture(autouse=True)
def debug_logs(caplog):
    """Every log record of every library (openai, httpx, chromadb, ours) at DEBUG, to search for the key."""
    caplog.set_level(logging.DEBUG)
    return caplog


def assert_no_key(*texts: str) -> None:
    for text in texts:
        assert CANARY not in text
        assert CANARY[8:] not in text  # nor a recognisable part of it


def key_was_sent(llm) -> bool:
    return any(r["_auth"] == f"Bearer {CANARY}" for r in llm.requests)


@pytest.mark.parametrize("model", FAILING + SUCCEEDING)
def test_ask_text_and_json_never_show_the_key(use_llm, llm, debug_logs, monkeypatch, model):
    use_llm(model, timeout=1 if model == "slow" else 10, retries=0 if model != "flaky500" else 1)
    monkeypatch.setenv("RAG_DEBUG", "1")  # debug mode shows tracebacks of unexpected errors: none may carry it
    for args in (["ask", QUESTION, "-k", "2"], ["ask", QUESTION, "-k", "2", "--json"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert_no_key(result.stdout, result.stderr, debug_logs.text)
    assert key_was_sent(llm)


def test_connection_refused_and_a_key_in_the_url_never_show(use_llm, debug_logs):
    # A base URL carrying the key as its password (some proxies want that): messages show the host only.
    use_llm("normal", url=closed_url().replace("http://", f"http://user:{CANARY}@"))
    for args in (["ask", QUESTION, "-k", "2"], ["ask", QUESTION, "--json", "-k", "2"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and "warning: cannot reach the LLM endpoint at http://127.0.0.1:" in result.stderr
        # Not the logs here: the openai SDK's own DEBUG records print request URLs as given (docs/RELIABILITY.md).
        assert_no_key(result.stdout, result.stderr)


@pytest.mark.parametrize("model", ["error500", "echo-key-401", "malformed-json", "stream-reset", "slow"])
def test_error_messages_and_tracebacks_of_the_backend_never_carry_the_key(llm, model):
    settings = replace(
        Settings(),
        llm_base_url=llm.url,
        llm_model=model,
        llm_api_key=CANARY,
        llm_timeout=1,
        llm_max_retries=1,
        llm_cooldown=0,  # both calls reach the endpoint: the breaker would answer the second without a request
    )
    sources = [Source("inj-01", None, 2026, "ICLR 2026", 0.9, "s", INJECTED)]
    backend = OpenAICompatibleBackend(settings)
    for stream in (False, True):
        with pytest.raises(LLMError) as caught:
            generated(backend, QUESTION, sources, stream=stream)
        shown = "".join(traceback.format_exception(caught.value))
        assert_no_key(str(caught.value), repr(caught.value), shown)
    assert key_was_sent(llm)
    assert_no_key(repr(settings), str(settings))


@pytest.mark.parametrize("model", ["stream", "echo-key-401"])
def test_chat_never_shows_the_key(chat_env, llm, model):
    env = {**chat_env, "RAG_LLM_BASE_URL": llm.url, "RAG_LLM_MODEL": model}
    result = run_chat(env, f"{QUESTION}\ntell me more about the first one\n/json\nand the second one?\n", "-k", "2")
    assert result.returncode == 0, result.stderr
    assert_no_key(result.stdout, result.stderr)
    assert key_was_sent(llm)


def write_questions(folder: Path) -> Path:
    path = folder / "questions.jsonl"
    rows = [
        {"qid": "s1", "type": "topic", "question": QUESTION, "gold_ids": ["001-02"], "must_mention": []},
        {"qid": "s2", "type": "fact", "question": "what is DiVeQ?", "gold_ids": ["000-01"], "must_mention": []},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_eval_json_with_an_llm_backend_never_shows_the_key(use_llm, llm, tmp_path, debug_logs):
    use_llm("normal")
    result = runner.invoke(app, ["eval", str(write_questions(tmp_path)), "--json", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["meta"]["backend"] == "openai"
    assert payload["runs"][0]["overall"]["judge_faithfulness"] == 0.75  # the judge ran, over the same endpoint
    written = "".join(p.read_text(errors="replace") for p in (tmp_path / "out").iterdir())
    assert_no_key(result.stdout, result.stderr, debug_logs.text, written)
    assert key_was_sent(llm)


@pytest.mark.parametrize("model", ["error500", "echo-key-401"])
def test_eval_with_a_failing_llm_is_one_line_without_the_key(use_llm, llm, tmp_path, debug_logs, model):
    # The eval does not fall back: an extractive answer scored as the LLM's would make its numbers lie.
    use_llm(model, retries=0)
    result = runner.invoke(app, ["eval", str(write_questions(tmp_path)), "--json"])
    assert result.exit_code == 1
    assert result.stderr.endswith("\n") and result.stderr.count("error:") == 1
    assert result.stderr.splitlines()[-1].startswith(f"error: the LLM endpoint at {llm.url} answered HTTP")
    assert "Traceback" not in result.output
    assert_no_key(result.stdout, result.stderr, debug_logs.text)
    assert key_was_sent(llm)
