"""`Settings.from_env`: what each `RAG_*` variable does, seen where a user sees it (the CLI's output, the endpoint
it calls); a bad value is one line naming the variable, never a traceback."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag.cli import app
from rag.config import Settings
from rag.errors import InputError
from rag.local_model import models_dir

from .conftest import REPO
from .helpers import BIN, cli_env
from .llm_server import ScriptedLLM

runner = CliRunner()
QUESTION = "which papers study unlearning?"


def rag(*args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess:
    """The installed `rag` command with `env` added to the (isolated) environment."""
    return subprocess.run(
        [str(BIN / "rag"), *args], input=stdin, capture_output=True, text=True, env=cli_env(**env), timeout=120
    )


@pytest.fixture()
def llm():
    with ScriptedLLM() as server:
        yield server


# -- bad values --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("RAG_K", "abc", "RAG_K='abc' is not a number"),
        ("RAG_MIN_SCORE", "x", "RAG_MIN_SCORE='x' is not a number"),
        ("RAG_K", "2.5", "RAG_K=2.5 is not a whole number"),
        # These parse as floats, but mean nothing: they used to surface as "unexpected ValueError", or (nan)
        # silently switch abstention off, since no score is below nan.
        ("RAG_K", "nan", "RAG_K='nan' is not a number"),
        ("RAG_K", "inf", "RAG_K='inf' is not a number"),
        ("RAG_MIN_SCORE", "nan", "RAG_MIN_SCORE='nan' is not a number"),
        # The CLI flags' own bounds (-k 1..100, --timeout >= 0.1): RAG_K=0 used to reach Chroma ("Number of
        # requested results 0 ..."), RAG_LLM_TIMEOUT=0 blamed the endpoint ("cannot reach ...").
        ("RAG_K", "0", "RAG_K='0' is out of range (from 1 to 100)"),
        ("RAG_K", "101", "RAG_K='101' is out of range (from 1 to 100)"),
        ("RAG_LLM_TIMEOUT", "0", "RAG_LLM_TIMEOUT='0' is out of range (at least 0.1)"),
        ("RAG_LLM_RETRIES", "two", "RAG_LLM_RETRIES='two' is not a number"),
    ],
)
def test_a_bad_number_is_a_one_line_error_naming_the_variable(seed_store_dir, variable, value, message):
    result = rag("ask", QUESTION, RAG_STORE=str(seed_store_dir), **{variable: value})
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"error: {message}\n")


def test_numbers_in_range_and_empty_strings_are_accepted(seed_store_dir):
    """The bounds are inclusive, and an empty value means unset: the same answer as with nothing set."""
    default = rag("ask", QUESTION, "--json", RAG_STORE=str(seed_store_dir))
    assert default.returncode == 0, default.stderr
    empty = {name: "" for name in ("RAG_K", "RAG_MIN_SCORE", "RAG_BACKEND", "RAG_LLM_BASE_URL", "RAG_LLM_MODEL")}
    emptied = rag("ask", QUESTION, "--json", RAG_STORE=str(seed_store_dir), OPENAI_BASE_URL="", **empty)
    assert emptied.returncode == 0, emptied.stderr
    without_timings = [{**json.loads(r.stdout), "timings_ms": None} for r in (default, emptied)]
    assert without_timings[0] == without_timings[1]
    assert without_timings[0]["backend"] == "extractive" and len(without_timings[0]["sources"]) <= 5
    assert rag("ask", QUESTION, RAG_STORE=str(seed_store_dir), RAG_K="100", RAG_LLM_TIMEOUT="0.1").returncode == 0


def test_rag_k_sets_how_many_papers_are_retrieved(seed_store_dir):
    """The variable is used, not just parsed: -k's default comes from it."""
    payload = json.loads(rag("search", "neural networks", "--json", RAG_STORE=str(seed_store_dir), RAG_K="7").stdout)
    assert len(payload["results"]) == 7
    payload = json.loads(rag("search", "neural networks", "--json", RAG_STORE=str(seed_store_dir)).stdout)
    assert len(payload["results"]) == 5


# -- which endpoint, which backend ---------------------------------------------------------------------------


def test_openai_base_url_is_the_endpoint_when_rag_llm_base_url_is_unset(llm, seed_store_dir, monkeypatch):
    """The OpenAI SDK's own variable works too; an endpoint alone means "use the LLM" (with the default model)."""
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
    result = runner.invoke(app, ["ask", QUESTION, "--json"])
    assert result.exit_code == 0 and result.stderr == "", result.output
    assert json.loads(result.stdout)["backend"] == "openai"
    assert llm.answer_requests("gpt-4o-mini") == 1


def test_rag_llm_base_url_wins_over_openai_base_url(seed_store_dir, monkeypatch):
    with ScriptedLLM() as ours, ScriptedLLM() as sdk_default:
        monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
        monkeypatch.setenv("RAG_LLM_BASE_URL", ours.url)
        monkeypatch.setenv("OPENAI_BASE_URL", sdk_default.url)
        monkeypatch.setenv("RAG_LLM_MODEL", "normal")
        result = runner.invoke(app, ["ask", QUESTION, "--json"])
        assert result.exit_code == 0 and json.loads(result.stdout)["backend"] == "openai", result.output
        assert (ours.answer_requests("normal"), len(sdk_default.requests)) == (1, 0)


def test_rag_backend_wins_over_a_configured_endpoint(llm, seed_store_dir, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    monkeypatch.setenv("RAG_LLM_BASE_URL", llm.url)
    monkeypatch.setenv("RAG_LLM_MODEL", "normal")
    monkeypatch.setenv("RAG_BACKEND", "extractive")
    result = runner.invoke(app, ["ask", QUESTION, "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["backend"] == "extractive", result.output
    assert llm.requests == []  # the endpoint was never asked


@pytest.mark.parametrize(
    ("env", "banner"),
    [
        ({}, "backend extractive"),
        ({"RAG_LLM_MODEL": "my-model"}, "backend openai (my-model at https://api.openai.com/v1)"),
        ({"RAG_LLM_BASE_URL": "http://127.0.0.1:9/v1"}, "backend openai (gpt-4o-mini at http://127.0.0.1:9/v1)"),
        ({"RAG_LLM_MODEL": "my-model", "RAG_BACKEND": "extractive"}, "backend extractive"),
        ({"RAG_LLM_MODEL": "", "RAG_LLM_BASE_URL": "", "RAG_BACKEND": ""}, "backend extractive"),
    ],
    ids=["nothing", "a-model", "an-endpoint", "rag-backend-wins", "empty-is-unset"],
)
def test_the_backend_is_inferred_from_what_is_configured(seed_store_dir, env, banner):
    """`rag chat` names its backend before any question (so nothing is sent anywhere)."""
    result = rag("chat", RAG_STORE=str(seed_store_dir), **env)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0].endswith(f"· 95 papers · {banner}")


# -- clamps, paths ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value", "field", "clamped"),
    [
        ("RAG_INGEST_WINDOW", "0", "ingest_window", 1),
        ("RAG_LOCAL_CONTEXT", "100", "local_context", 512),
        ("RAG_LOCAL_PAPERS", "0", "local_papers", 1),
        ("RAG_LOCAL_SENTENCES", "-2", "local_sentences", 1),
        ("RAG_LOCAL_MAX_TOKENS", "3", "local_max_tokens", 16),
        ("RAG_LOCAL_THREADS", "-1", "local_threads", 0),
        ("RAG_CHUNK_OVERLAP", "-5", "chunk_overlap", 0),
    ],
)
def test_values_below_a_floor_are_raised_to_it(monkeypatch, variable, value, field, clamped):
    monkeypatch.setenv(variable, value)
    assert getattr(Settings.from_env(), field) == clamped
    monkeypatch.setenv(variable, str(clamped + 7))  # above the floor: kept as given
    assert getattr(Settings.from_env(), field) == clamped + 7


def test_a_negative_chunk_overlap_ingests_as_no_overlap(tmp_path):
    """It used to fail the whole ingest with "unexpected ValidationError" from the sentence splitter."""
    papers = tmp_path / "papers.jsonl"
    papers.write_text('{"id": "a1", "abstract": "Quantum error correction with surface codes. It scales."}\n')
    result = rag("ingest", str(papers), "--store", str(tmp_path / "store"), RAG_CHUNK_OVERLAP="-5")
    assert result.returncode == 0, result.stderr
    assert "1 paper in " in result.stdout and "1 added" in result.stdout


def test_paths_expand_the_home_directory_and_empty_means_the_default(monkeypatch, tmp_path):
    home = tmp_path / "me"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("RAG_MODEL_DIR", "~/models")
    monkeypatch.setenv("RAG_PROMPTS_DIR", "~/prompts")
    monkeypatch.setenv("RAG_STORE", "~/store")
    settings = Settings.from_env()
    assert (settings.model_dir, settings.prompts_dir, settings.store) == (
        home / "models",
        home / "prompts",
        home / "store",
    )
    assert models_dir(settings.model_dir) == home / "models"  # where the local model is assembled

    for name in ("RAG_MODEL_DIR", "RAG_PROMPTS_DIR", "RAG_STORE"):
        monkeypatch.setenv(name, "")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    settings = Settings.from_env()
    assert (settings.model_dir, settings.prompts_dir) == (None, None)
    assert settings.store == tmp_path / "data" / "rag-papers" / "store"
    assert models_dir(settings.model_dir) == tmp_path / "cache" / "rag-papers" / "models"


# -- one declaration per setting: the defaults, the README, replace ------------------------------------------


def test_settings_without_the_environment_are_the_defaults(monkeypatch):
    """`Settings()` is the declared defaults; only `from_env` reads variables, and with none set it agrees."""
    monkeypatch.setenv("RAG_K", "9")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123456")
    assert (Settings().k, Settings().llm_api_key, Settings.from_env().k) == (5, None, 9)
    for name in ("RAG_K", "OPENAI_API_KEY", "RAG_MODEL_DIR"):  # the last set by conftest for every test
        monkeypatch.delenv(name)
    assert Settings.from_env() == Settings()


def test_replace_overrides_fields_and_checks_them_as_the_environment_is_checked(monkeypatch):
    """The CLI's flags and the API's arguments override settings with `dataclasses.replace`."""
    monkeypatch.setenv("RAG_LLM_MODEL", "my-model")
    settings = Settings.from_env()
    changed = replace(settings, k=7, store=Path("~/elsewhere"))
    assert (changed.k, changed.store, changed.backend, changed.llm_model) == (
        7,
        Path.home() / "elsewhere",
        "openai",
        "my-model",
    )
    assert settings.k == 5  # frozen: a copy
    with pytest.raises(InputError, match=r"^k=0 is out of range \(from 1 to 100\)$"):
        replace(settings, k=0)
    assert replace(settings, local_context=100).local_context == 512  # the same floors
    assert "sk-" not in repr(replace(settings, llm_api_key="sk-test-123456"))


@pytest.mark.parametrize(("value", "debug"), [("1", True), ("yes", True), ("0", False), ("false", False), ("", False)])
def test_rag_debug_is_a_setting(monkeypatch, value, debug):
    monkeypatch.setenv("RAG_DEBUG", value)
    assert Settings.from_env().debug is debug
    monkeypatch.setenv("RAG_K", "abc")  # the error handler reads it alone: another bad variable must not matter
    assert Settings.env_value("debug") is debug


def test_env_value_reads_one_setting_as_from_env_does(monkeypatch):
    assert Settings.env_value("llm_api_key") is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123456")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert (Settings.env_value("llm_api_key"), Settings.env_value("llm_base_url")) == (
        "sk-test-123456",
        "http://127.0.0.1:9/v1",
    )


def test_describe_is_one_line_of_help_naming_the_variable_and_the_default():
    assert (
        Settings.describe("k")
        == "papers quoted per question (1–100; a list names its further members by title) [env: RAG_K; default: 5]"
    )
    assert Settings.describe("llm_base_url").endswith(
        "[env: RAG_LLM_BASE_URL or OPENAI_BASE_URL; default: unset (OpenAI's API when the backend is openai)]"
    )
    assert all(
        "\n" not in Settings.describe(name) and Settings.model_fields[name].description
        for name in Settings.model_fields
    )


def _readme_configuration_table() -> list[str]:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("## Configuration")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    return [line for line in lines[start:end] if line.startswith("|")]


def test_the_readme_lists_every_setting_with_its_variable_and_default():
    """The README's table is `python -m rag.config`'s output: it cannot drift from the fields."""
    table = _readme_configuration_table()
    assert "\n".join(table) == Settings.settings_table()
    shown = {}
    for row in table[2:]:
        variables, defaults, _meaning = row.strip("|").split(" | ")
        for variable, default in zip(variables.split(" / "), defaults.split(" / "), strict=True):
            shown[tuple(re.findall(r"`([A-Z][A-Z0-9_]+)`", variable))] = default
    expected = {tuple(Settings.env_names(name)): Settings.shown_default(name) for name in Settings.model_fields}
    assert shown == expected
    assert shown[("RAG_K",)] == "`5`" and shown[("RAG_LLM_BASE_URL", "OPENAI_BASE_URL")].startswith("unset")


def test_every_cli_option_that_names_a_variable_names_a_setting_and_its_default():
    """CLI help like "[env: RAG_K]" or "[env: RAG_RETRIEVER; default hybrid]" must agree with Settings."""
    import re

    import typer

    from rag.cli import app

    variables = {env: name for name in Settings.model_fields for env in Settings.env_names(name)}
    group = typer.main.get_command(app)
    checked = 0
    for command in group.commands.values():
        for param in command.params:
            found = re.search(r"\[env: (\w+)(?:; default:? ([^\]]+))?\]", getattr(param, "help", None) or "")
            if not found:
                continue
            variable, default = found.groups()
            assert variable in variables, f"{command.name} --{param.name}: {variable} is not a setting"
            if default:
                shown = Settings.shown_default(variables[variable]).replace("`", "")
                assert shown.startswith(default.strip()), (command.name, param.name, default, shown)
            checked += 1
    assert checked >= 8  # --store, --chroma-url, --k, --retriever, --backend, --min-score, --timeout on the commands
