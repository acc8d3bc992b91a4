"""LLM faults: whatever the endpoint does, `ask` answers (extractively, with one warning line naming the cause),
exits 0 and never shows a traceback. Retries are bounded and only where they can help.

Every case runs the real CLI against the scripted OpenAI-compatible server on 127.0.0.1 (tests/llm_server.py),
whose model name picks the fault.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
import time
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from rag.cli import app
from rag.llm import BREAKERS

from ..llm_server import ScriptedLLM
from .conftest import BIN, CANARY, QUESTION, closed_url, run_chat

runner = CliRunner()
K = "3"
FALLBACK = "; showing the extractive answer instead"

# (model, what the warning says after "the LLM endpoint at URL" or the like, answer requests the server saw)
# with RAG_LLM_RETRIES=2 (three tries at most) and RAG_LLM_TIMEOUT=10 unless the case says otherwise.
FAULTS = [
    pytest.param("error500", "the LLM endpoint at {url} answered HTTP 500 (internal failure) after 3 tries", 3),
    pytest.param("error503", "the LLM endpoint at {url} answered HTTP 503 (overloaded) after 3 tries", 3),
    pytest.param("hangup", "cannot reach the LLM endpoint at {url} (RemoteProtocolError) after 3 tries", 3),
    # A Retry-After longer than RETRY_AFTER_CAP (30 s): give up at once instead of keeping the user waiting.
    pytest.param(
        "rate-limited-long", "the LLM endpoint at {url} answered HTTP 429 (rate limit reached), retry after 120s", 1
    ),
    pytest.param("echo-key-401", "the LLM endpoint at {url} answered HTTP 401 (invalid key in Bearer ***)", 1),
    pytest.param("malformed-json", "the LLM endpoint at {url} sent a malformed reply (not JSON)", 1),
    pytest.param("html", "the LLM endpoint at {url} returned no answer (the reply is not a chat completion)", 1),
    # A timeout is never retried: the user already waited the whole timeout once.
    pytest.param("slow", "the LLM endpoint at {url} did not answer within 1s", 1, id="slow-timeout"),
]


@pytest.fixture(autouse=True)
def closed_breakers():
    """Each test starts with every endpoint's circuit breaker closed: they are process-wide, and a port of an
    earlier test's server may come round again."""
    BREAKERS.clear()
    yield
    BREAKERS.clear()


@pytest.fixture(scope="module")
def extractive(seed_store_dir) -> dict:
    """The extractive answer to QUESTION: what every fallback must show (the session's cleared env: no LLM)."""
    result = runner.invoke(app, ["ask", QUESTION, "--json", "-k", K], env={"RAG_STORE": str(seed_store_dir)})
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["backend"] == "extractive" and payload["warnings"] == []
    return payload


def assert_clean(result) -> None:
    """What no failure may show: a traceback, the API key, an "error:" line."""
    assert "Traceback" not in result.output and CANARY not in result.output
    assert "error:" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(("model", "cause", "tries"), FAULTS)
def test_ask_json_falls_back_to_the_extractive_answer_with_one_warning(use_llm, llm, extractive, model, cause, tries):
    use_llm(model, timeout=1 if model == "slow" else 10)
    result = runner.invoke(app, ["ask", QUESTION, "--json", "-k", K])
    assert result.exit_code == 0, result.output
    assert_clean(result)
    warning = cause.format(url=llm.url) + FALLBACK
    assert result.stderr == f"warning: {warning}\n"
    payload = json.loads(result.stdout)
    assert payload["backend"] == "extractive" and payload["warnings"] == [warning]
    assert payload["answer"] == extractive["answer"] and payload["citations"] == extractive["citations"]
    assert set(payload["citations"]) <= {s["id"] for s in payload["sources"]}
    assert payload["usage"] is None
    assert llm.answer_requests(model) == tries
    if model == "slow":  # gave up at the 1 s timeout: it hung up, the 20 s reply was never sent
        assert (llm.hung_up(model), llm.answered(model)) == (1, 0)


@pytest.mark.parametrize("model", ["error500", "slow", "hangup"])
def test_ask_text_prints_the_extractive_answer_and_a_warning_on_stderr(use_llm, llm, extractive, model):
    use_llm(model, timeout=1 if model == "slow" else 10, retries=1)
    result = runner.invoke(app, ["ask", QUESTION, "-k", K])
    assert result.exit_code == 0, result.output
    assert_clean(result)
    assert result.stdout.startswith(extractive["answer"] + "\n\nSources:\n")
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: ") and lines[0].endswith(FALLBACK)


def test_connection_refused_is_retried_then_falls_back(use_llm, extractive):
    url = closed_url()
    use_llm("normal", url=url)
    result = runner.invoke(app, ["ask", QUESTION, "--json", "-k", K])
    assert result.exit_code == 0, result.output
    assert_clean(result)
    warning = f"cannot reach the LLM endpoint at {url} (ConnectError) after 3 tries{FALLBACK}"
    assert result.stderr == f"warning: {warning}\n"
    payload = json.loads(result.stdout)
    assert payload["backend"] == "extractive" and payload["warnings"] == [warning]
    assert payload["answer"] == extractive["answer"]


def test_retries_back_off_exponentially(use_llm, llm):
    use_llm("error500", retries=2)
    assert runner.invoke(app, ["ask", QUESTION, "--json", "-k", K]).exit_code == 0
    arrivals = [r["_at"] for r in llm.requests if r.get("model") == "error500"]
    assert len(arrivals) == 3
    first_gap, second_gap = arrivals[1] - arrivals[0], arrivals[2] - arrivals[1]
    # Lower bounds only, which no machine's speed can break: the client's wait starts after the server recorded
    # the previous arrival (it waits for the reply), so a gap is never shorter than the backoff itself.
    assert first_gap >= 0.5 * 0.75 and second_gap >= 1.0 * 0.75  # 0.5 s then 1 s, less at most 25% jitter


def test_one_server_error_is_retried_and_the_llm_answers(use_llm, llm):
    use_llm("flaky500", retries=1)
    result = runner.invoke(app, ["ask", QUESTION, "--json", "-k", K])
    assert result.exit_code == 0 and result.stderr == ""
    payload = json.loads(result.stdout)
    assert payload["backend"] == "openai" and payload["warnings"] == []
    assert payload["answer"].startswith("The most relevant paper studies this directly")
    assert llm.answer_requests("flaky500") == 2


def test_429_is_retried_after_its_retry_after(use_llm, llm):
    use_llm("rate-limited", retries=1)
    result = runner.invoke(app, ["ask", QUESTION, "--json", "-k", K])
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout)["backend"] == "openai"
    arrivals = [r["_at"] for r in llm.requests if r.get("model") == "rate-limited"]
    assert len(arrivals) == 2
    assert arrivals[1] - arrivals[0] >= 1.0  # Retry-After: 1 (a lower bound: see the backoff test)


def test_a_retry_after_beyond_the_timeout_budget_is_not_waited_for(use_llm, llm):
    llm.retry_after = "5"
    use_llm("rate-limited", timeout=2, retries=3)
    result = runner.invoke(app, ["ask", QUESTION, "--json", "-k", K])
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["backend"] == "extractive"
    assert payload["warnings"][0].startswith(f"the LLM endpoint at {llm.url} answered HTTP 429 (rate limit reached)")
    assert llm.answer_requests("rate-limited") == 1


def test_timeouts_are_not_retried_and_the_timeout_flag_overrides_the_environment(use_llm, llm):
    use_llm("slow", timeout=60, retries=3)  # the 20 s reply would arrive well within the environment's 60 s
    result = runner.invoke(app, ["ask", QUESTION, "--json", "-k", K, "--timeout", "1"])
    assert result.exit_code == 0
    warning = f"the LLM endpoint at {llm.url} did not answer within 1s{FALLBACK}"
    assert json.loads(result.stdout)["warnings"] == [warning]
    # One try, hung up on at the flag's 1 s: neither retried (4 tries) nor waited out (a reply sent).
    assert (llm.answer_requests("slow"), llm.hung_up("slow"), llm.answered("slow")) == (1, 1, 0)


# -- a stream that dies halfway ---------------------------------------------------------------------------

BROKEN_STREAMS = [
    pytest.param("stream-cut", "the answer stream from {url} ended before the model finished"),
    pytest.param("stream-reset", "the answer stream from {url} broke off (RemoteProtocolError)"),
    pytest.param("stream-garbage", "the answer stream from {url} sent an event that is not JSON"),
]
INCOMPLETE = "; the answer above is incomplete, here is the extractive answer instead"


@pytest.mark.parametrize(("model", "cause"), BROKEN_STREAMS)
def test_a_stream_dying_halfway_ends_the_half_answer_then_shows_the_extractive_one(
    use_llm, llm, extractive, model, cause
):
    use_llm(model)
    result = runner.invoke(app, ["ask", QUESTION, "-k", K])
    assert result.exit_code == 0, result.output
    assert_clean(result)
    first = llm.source_ids(llm.requests[-1])[0]
    # The half answer as it was shown: its valid citation, the invalid [999-99] already removed, the unclosed
    # "[998-" never shown; then a line break, so the extractive answer starts on a line of its own.
    half = f"The most relevant paper studies this [{first}]. Another agrees. And\n"
    assert result.stdout.startswith(half + extractive["answer"] + "\n\nSources:\n")
    assert "999-99" not in result.stdout and "998" not in result.stdout
    assert result.stderr.splitlines() == [
        f"warning: {cause.format(url=llm.url)}{INCOMPLETE}",
        "note: removed 1 citation(s) to papers that were not retrieved: 999-99",
    ]
    assert llm.answer_requests(model) == 1  # text was shown: never retried (it would print twice)


def test_a_stream_that_stalls_halfway_times_out_and_is_not_retried(use_llm, llm, extractive):
    use_llm("slow-stream", timeout=1)  # one word, then 20 s of silence
    result = runner.invoke(app, ["ask", QUESTION, "-k", K])
    assert result.exit_code == 0, result.output
    assert_clean(result)
    assert result.stdout.startswith("The\n" + extractive["answer"] + "\n\nSources:\n")  # the held space dropped
    assert result.stderr == f"warning: the answer stream from {llm.url} stalled for more than 1s{INCOMPLETE}\n"
    assert llm.answer_requests("slow-stream") == 1


def test_a_stream_that_fails_before_any_text_is_retried(use_llm, llm):
    use_llm("hangup", retries=1)
    result = runner.invoke(app, ["ask", QUESTION, "-k", K])
    assert result.exit_code == 0 and llm.answer_requests("hangup") == 2
    assert result.stderr.startswith(f"warning: cannot reach the LLM endpoint at {llm.url} (RemoteProtocolError)")


def test_backend_level_fallback_keeps_citations_checked(seed_store, seed_settings, llm):
    """Through the library: the partial stream's dropped citation is still counted in the final answer."""
    from ..helpers import run_events

    store, embedder = seed_store
    settings = replace(seed_settings, llm_base_url=llm.url, llm_model="stream-cut")
    events = run_events(QUESTION, store, embedder, settings, "openai", k=3, stream=True)
    shown = [event.text for event in events if event.type == "text"]
    warnings = [event.text for event in events if event.type == "warning"]
    answer = events[-1].answer
    assert answer.backend == "extractive" and answer.warnings == warnings and len(warnings) == 1
    assert answer.dropped_citations == ["999-99"]
    assert "".join(shown).endswith("\n" + answer.answer)


# -- the chat REPL uses the same fallback ----------------------------------------------------------------


def test_piped_chat_falls_back_with_one_warning_and_exits_0(chat_env, llm, extractive):
    env = {**chat_env, "RAG_LLM_BASE_URL": llm.url, "RAG_LLM_MODEL": "error500"}
    result = run_chat(env, QUESTION + "\n", "-k", K)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(extractive["answer"] + "\n\nSources:\n")
    assert result.stderr.splitlines()[1:] == [
        "↳ searching: unlearning",
        f"warning: the LLM endpoint at {llm.url} answered HTTP 500 (internal failure){FALLBACK}",
    ]
    assert "Traceback" not in result.stderr and "error:" not in result.stderr
    assert CANARY not in result.stdout + result.stderr


def test_chat_follow_up_whose_rewrite_failed_does_not_ask_the_failing_endpoint_again(chat_env, llm):
    # The circuit breaker off: the rewrite itself must reach the endpoint and fail (with it on, the rewrite is
    # not even tried: see the breaker tests below).
    env = {**chat_env, "RAG_LLM_BASE_URL": llm.url, "RAG_LLM_MODEL": "error500", "RAG_LLM_COOLDOWN": "0"}
    result = run_chat(env, f"{QUESTION}\ntell me more about the second one\n", "-k", K)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: the LLM endpoint at {llm.url} answered HTTP 500 (internal failure){FALLBACK}",
        f"warning: the LLM endpoint at {llm.url} answered HTTP 500 (internal failure); the conversation was read"
        " by the rules alone, showing the extractive answer instead",
    ]
    assert "1 paper says:" in result.stdout  # the follow-up, answered from the paper it meant
    assert llm.answer_requests("error500") == 1  # the second turn's answer did not wait on the endpoint
    assert len(llm.requests) == 2  # the first answer and the rewrite


def test_piped_chat_with_a_stream_dying_halfway(chat_env, llm, extractive):
    env = {**chat_env, "RAG_LLM_BASE_URL": llm.url, "RAG_LLM_MODEL": "stream-reset"}
    result = run_chat(env, QUESTION + "\n", "-k", K)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n", 1)[1].startswith(extractive["answer"] + "\n\nSources:\n")
    assert result.stdout.startswith("The most relevant paper studies this [") and "999-99" not in result.stdout
    assert any(line.endswith(INCOMPLETE) for line in result.stderr.splitlines())


# -- the circuit breaker: a dead endpoint is waited on once, not on every turn ----------------------------------

QUESTIONS = [QUESTION, "which papers study clustering?", "what is DiVeQ?"]
SKIPPED = "the conversation was read by the rules alone, showing the extractive answer instead"


@pytest.mark.parametrize("dead", ["error500", "closed-port"])
def test_piped_chat_with_a_dead_endpoint_pays_the_retries_on_the_first_question_only(chat_env, llm, dead):
    url = closed_url() if dead == "closed-port" else llm.url
    env = {**chat_env, "RAG_LLM_BASE_URL": url, "RAG_LLM_MODEL": dead, "RAG_LLM_RETRIES": "2"}
    result = run_chat(env, "".join(q + "\n" for q in QUESTIONS), "-k", K)
    assert result.returncode == 0, result.stderr
    cause = (
        f"cannot reach the LLM endpoint at {url} (ConnectError)"
        if dead == "closed-port"
        else f"the LLM endpoint at {url} answered HTTP 500 (internal failure)"
    )
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings[0] == f"warning: {cause} after 3 tries{FALLBACK}"
    # Questions 2 and 3: the breaker's own line (what failed, when, when it is tried again), no request at all.
    opened = rf"warning: {re.escape(cause)}, (just now|\d+s ago); the endpoint is tried again in \d+s; {SKIPPED}"
    assert len(warnings) == 3 and all(re.fullmatch(opened, w) for w in warnings[1:]), warnings
    assert len(llm.requests) == (0 if dead == "closed-port" else 3)  # the first question's three tries, only
    assert result.stdout.count("\nSources:\n") == 3 and "Traceback" not in result.stderr
    assert CANARY not in result.stdout + result.stderr


FOLLOW_UP = "tell me more about the first one"


class Outage(ScriptedLLM):
    """The scripted server with an outage the test ends: HTTP 500 to every request while `down`."""

    down = False

    def respond(self, handler, body: dict) -> None:
        if self.down:
            self._json(handler, 500, {"error": {"message": "internal failure", "type": "server_error"}})
        else:
            super().respond(handler, body)


class PipedChat:
    """`rag chat` reading questions from a pipe the test writes to as it goes; stderr read line by line."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.process = subprocess.Popen(
            [str(BIN / "rag"), "chat", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.notes: queue.Queue[str] = queue.Queue()
        self.stdout: list[str] = []
        readers = [
            threading.Thread(target=lambda: [self.notes.put(line) for line in self.process.stderr], daemon=True),
            threading.Thread(target=lambda: self.stdout.extend(self.process.stdout), daemon=True),
        ]
        for reader in readers:
            reader.start()
        self.readers = readers

    def ask(self, line: str) -> None:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def wait_for_note(self, prefix: str) -> str:
        """The next stderr line starting with `prefix` (the timeout only guards against a hang)."""
        while not (line := self.notes.get(timeout=180)).startswith(prefix):
            pass
        return line.rstrip("\n")

    def close(self) -> tuple[int, str, list[str]]:
        """Exit status, stdout and the stderr lines not yet read, once the chat has read all its input."""
        self.process.stdin.close()
        status = self.process.wait(timeout=180)
        for reader in self.readers:
            reader.join()
        rest = []
        while not self.notes.empty():
            rest.append(self.notes.get().rstrip("\n"))
        return status, "".join(self.stdout), rest


def test_chat_tries_the_endpoint_again_after_the_cooldown_and_uses_it_once_it_is_back(chat_env):
    with Outage() as server:
        server.down = True
        cooldown = 1.0
        env = {**chat_env, "RAG_LLM_BASE_URL": server.url, "RAG_LLM_MODEL": "stream", "RAG_LLM_COOLDOWN": str(cooldown)}
        chat = PipedChat(env, "-k", K)
        try:
            chat.ask(QUESTION)
            first = chat.wait_for_note("warning:")
            assert first == f"warning: the LLM endpoint at {server.url} answered HTTP 500 (internal failure){FALLBACK}"
            server.down = False
            # The breaker opened before that warning was printed, so after this wait its cooldown is over
            # however slow the machine (a lower bound, no race).
            time.sleep(cooldown)
            during_outage = len(server.requests)
            assert during_outage == 1  # RAG_LLM_RETRIES=0: one try
            chat.ask(FOLLOW_UP)
            chat.ask("what is DiVeQ?")
        finally:
            status, stdout, notes = chat.close()
    assert status == 0, notes
    assert not [line for line in notes if line.startswith(("warning:", "error:"))], notes
    # After the cooldown the next question tried the endpoint again (its follow-up rewrite came first), the
    # endpoint answered, and from then on it was used as usual: a rewrite and an answer for questions 2 and 3.
    server.wait_settled()
    later = server.requests[during_outage:]
    rewrites = [server.condense_question(r) for r in later]
    assert rewrites == [FOLLOW_UP, None, "what is DiVeQ?", None]
    assert all("_answered_at" in r for r in later)
    assert stdout.count("The most relevant paper studies this directly [") == 2  # questions 2 and 3: the LLM's
