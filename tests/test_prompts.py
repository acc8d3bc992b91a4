"""Prompt templates: `RAG_PROMPTS_DIR` overrides them one file at a time, and what the LLM endpoint receives is
the override; a template that is nowhere to be found is a one-line error naming it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag.cli import app
from rag.prompts import load_prompt

from .conftest import REPO
from .helpers import cli_env
from .llm_server import ScriptedLLM

runner = CliRunner()
QUESTION = "which papers study unlearning?"
BUNDLED = REPO / "prompts"
OVERRIDE_SYSTEM = "OVERRIDDEN SYSTEM PROMPT: answer in one sentence, citing [ID]."


@pytest.fixture(autouse=True)
def fresh_prompt_cache():
    """load_prompt is cached per (name, directory): each test starts from, and leaves, an empty cache."""
    load_prompt.cache_clear()
    yield
    load_prompt.cache_clear()


@pytest.fixture()
def llm():
    with ScriptedLLM() as server:
        yield server


def test_an_override_template_is_what_the_endpoint_receives(llm, seed_store_dir, tmp_path, monkeypatch):
    override = tmp_path / "prompts"
    override.mkdir()
    (override / "answer_system.md").write_text(OVERRIDE_SYSTEM + "\n")
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    monkeypatch.setenv("RAG_LLM_BASE_URL", llm.url)
    monkeypatch.setenv("RAG_LLM_MODEL", "normal")
    monkeypatch.setenv("RAG_PROMPTS_DIR", str(override))
    result = runner.invoke(app, ["ask", QUESTION, "--json", "-k", "2"])
    assert result.exit_code == 0 and json.loads(result.stdout)["backend"] == "openai", result.output
    read = len(json.loads(result.stdout)["sources"])  # the top 2, and a list's members below them

    (request,) = llm.requests
    system, user = (message["content"] for message in request["messages"])
    assert system == OVERRIDE_SYSTEM
    # The templates the override lacks come from the bundled ones: the user message and each source in it.
    bundled_user = (BUNDLED / "answer_user.md").read_text()
    head, tail = bundled_user.split("{sources}")
    assert user.startswith(head) and user.endswith(tail.replace("{question}", QUESTION))
    assert read >= 2 and user.count('<source id="') == read and "You answer questions about research papers" not in user


def test_without_an_override_the_bundled_templates_are_sent(llm, seed_store_dir, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    monkeypatch.setenv("RAG_LLM_BASE_URL", llm.url)
    monkeypatch.setenv("RAG_LLM_MODEL", "normal")
    assert runner.invoke(app, ["ask", QUESTION, "--json", "-k", "2"]).exit_code == 0
    (request,) = llm.requests
    assert request["messages"][0]["content"] == (BUNDLED / "answer_system.md").read_text().strip()


def test_chat_condenses_follow_ups_with_the_override(llm, seed_store_dir, tmp_path):
    """The chat's rewrite prompt is a template too; the override reaches the endpoint from `rag chat`."""
    override = tmp_path / "prompts"
    override.mkdir()
    template = (BUNDLED / "condense.md").read_text()
    (override / "condense.md").write_text("OVERRIDDEN CONDENSE PROMPT\n" + template)
    env = cli_env(
        RAG_STORE=str(seed_store_dir),
        RAG_LLM_BASE_URL=llm.url,
        RAG_LLM_MODEL="normal",
        RAG_LLM_RETRIES="0",
        RAG_PROMPTS_DIR=str(override),
    )
    lines = f"{QUESTION}\ntell me more about the second one\n"
    rag = Path(sys.executable).parent / "rag"
    result = subprocess.run([str(rag), "chat", "-k", "3"], input=lines, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    condense = [r for r in llm.requests if llm.condense_question(r) is not None]
    assert len(condense) == 1
    assert condense[0]["messages"][0]["content"].startswith("OVERRIDDEN CONDENSE PROMPT\n")


@pytest.fixture()
def install_without_prompts(tmp_path) -> Path:
    """A copy of the package with no bundled prompts beside it (a broken install): only an override can serve."""
    root = tmp_path / "install"
    shutil.copytree(REPO / "rag", root / "rag", ignore=shutil.ignore_patterns("__pycache__", "_data"))
    return root


@pytest.mark.parametrize("missing", ["answer_system.md", "answer_user.md", "source.md"])
def test_a_missing_template_is_a_one_line_error_naming_it(
    install_without_prompts, llm, seed_store_dir, tmp_path, missing
):
    override = tmp_path / "prompts"
    override.mkdir()
    for template in ("answer_system.md", "answer_user.md", "source.md"):
        if template != missing:
            shutil.copy(BUNDLED / template, override / template)
    env = cli_env(
        PYTHONPATH=str(install_without_prompts),
        RAG_STORE=str(seed_store_dir),
        RAG_LLM_BASE_URL=llm.url,
        RAG_LLM_MODEL="normal",
        RAG_PROMPTS_DIR=str(override),
    )
    result = subprocess.run(
        [sys.executable, "-m", "rag", "ask", QUESTION, "--json"],
        cwd=install_without_prompts,
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"error: prompt template {missing!r} not found (looked in {override})\n"
    assert llm.requests == []  # nothing half-built was sent
