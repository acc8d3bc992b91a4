"""`rag.llm`: the circuit breaker on a clock the test holds, then the one client against the scripted
OpenAI-compatible server on 127.0.0.1 (its records say which calls reached the endpoint), the eval's judge,
and `RAG_LLM_COOLDOWN`."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from rag.cli import app
from rag.config import Settings
from rag.errors import InputError, LLMError
from rag.llm import BREAKERS, LLM, Breaker, Breakers, redact

from .helpers import ask
from .llm_server import ScriptedLLM

runner = CliRunner()
QUESTION = "which papers study unlearning?"
MESSAGES = [{"role": "user", "content": "Say hello."}]


@pytest.fixture(autouse=True)
def closed_breakers():
    """Each test starts with every endpoint's breaker closed (they are process-wide)."""
    BREAKERS.clear()
    yield
    BREAKERS.clear()


class Clock:
    """Time that passes only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture()
def clock() -> Clock:
    return Clock()


# -- the breaker itself ------------------------------------------------------------------------------------


def test_a_failure_opens_the_breaker_and_calls_fail_at_once_saying_when_it_is_tried_again(clock):
    breaker = Breaker(clock)
    assert breaker.admit(60) is False  # closed: an ordinary call
    breaker.failed("the LLM endpoint at http://h/v1 answered HTTP 500 (internal failure)")
    with pytest.raises(LLMError) as opened:
        breaker.admit(60)
    assert str(opened.value) == (
        "the LLM endpoint at http://h/v1 answered HTTP 500 (internal failure), just now;"
        " the endpoint is tried again in 60s"
    )
    clock.advance(42.5)
    with pytest.raises(LLMError, match=r"\(internal failure\), 42s ago; the endpoint is tried again in 18s$"):
        breaker.admit(60)


def test_after_the_cooldown_one_call_tries_and_its_success_closes_the_breaker(clock):
    breaker = Breaker(clock)
    breaker.failed("cause")
    clock.advance(60)
    assert breaker.admit(60) is True  # half-open: this call is the one try
    with pytest.raises(LLMError, match=r"^cause, 60s ago; the endpoint is being tried again$"):
        breaker.admit(60)  # meanwhile the others still fail at once
    breaker.succeeded()
    assert breaker.admit(60) is False and breaker.admit(60) is False  # closed


def test_a_failed_try_after_the_cooldown_opens_it_for_another_cooldown(clock):
    breaker = Breaker(clock)
    breaker.failed("first cause")
    clock.advance(61)
    assert breaker.admit(60) is True
    breaker.failed("second cause")
    clock.advance(59)
    with pytest.raises(LLMError, match=r"^second cause, 59s ago; the endpoint is tried again in 1s$"):
        breaker.admit(60)
    clock.advance(1)
    assert breaker.admit(60) is True


def test_a_try_that_ends_without_a_verdict_lets_the_next_call_try(clock):
    """Ctrl-C or a stream reader that left during the half-open try: the endpoint's state is still unknown."""
    breaker = Breaker(clock)
    breaker.failed("cause")
    clock.advance(60)
    assert breaker.admit(60) is True
    breaker.abandoned()
    assert breaker.admit(60) is True


def test_a_shorter_cooldown_asked_for_later_applies_at_once(clock):
    breaker = Breaker(clock)
    breaker.failed("cause")
    clock.advance(5)
    with pytest.raises(LLMError):
        breaker.admit(60)
    assert breaker.admit(5) is True


def test_of_many_threads_at_the_end_of_the_cooldown_exactly_one_tries(clock):
    breaker = Breaker(clock)
    breaker.failed("cause")
    clock.advance(60)
    start = threading.Barrier(16)
    admitted: list[bool] = []

    def call() -> None:
        start.wait()
        try:
            admitted.append(breaker.admit(60))
        except LLMError:
            admitted.append(False)

    threads = [threading.Thread(target=call) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(admitted) == [False] * 15 + [True]


def test_each_endpoint_and_model_has_its_own_breaker(clock):
    breakers = Breakers(clock)
    breakers.get(("http://a/v1", "m")).failed("cause")
    assert breakers.get(("http://a/v1", "m")) is breakers.get(("http://a/v1", "m"))
    with pytest.raises(LLMError):
        breakers.get(("http://a/v1", "m")).admit(60)
    assert breakers.get(("http://a/v1", "other-model")).admit(60) is False
    assert breakers.get(("http://b/v1", "m")).admit(60) is False
    breakers.clear()
    assert breakers.get(("http://a/v1", "m")).admit(60) is False


# -- the client, against a real server ---------------------------------------------------------------------


class Switchable(ScriptedLLM):
    """The scripted server, plus an endpoint that is down (HTTP 500 to everything) until the test says not,
    and `too-long`: HTTP 400, as for a prompt beyond the model's context."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    def respond(self, handler, body: dict) -> None:
        if self.down:
            self._json(handler, 500, {"error": {"message": "internal failure", "type": "server_error"}})
        elif body.get("model") == "too-long":
            error = {"error": {"message": "maximum context length exceeded", "type": "invalid_request_error"}}
            self._json(handler, 400, error)
        else:
            super().respond(handler, body)


@pytest.fixture()
def llm():
    with Switchable() as server:
        yield server


def settings_for(server: ScriptedLLM, model: str, **changes) -> Settings:
    base = replace(Settings(), llm_base_url=server.url, llm_model=model, llm_timeout=10, llm_max_retries=2)
    return replace(base, **changes)


def tried(server: ScriptedLLM, model: str) -> int:
    """Requests for `model` that reached the server."""
    return sum(1 for r in server.requests if r.get("model") == model)


def test_only_the_first_failed_call_reaches_the_endpoint_until_the_cooldown_ends(llm, clock):
    client = LLM(settings_for(llm, "error500"), Breakers(clock))
    with pytest.raises(LLMError, match=r"answered HTTP 500 \(internal failure\) after 3 tries$"):
        client.complete(MESSAGES, 20)
    assert tried(llm, "error500") == 3  # the retries, paid once
    for _ in range(2):
        with pytest.raises(LLMError, match=r"\(internal failure\), just now; the endpoint is tried again in 60s$"):
            client.complete(MESSAGES, 20)
    assert tried(llm, "error500") == 3  # no request at all
    clock.advance(60)
    with pytest.raises(LLMError) as probe:
        client.complete(MESSAGES, 20)
    assert str(probe.value) == f"the LLM endpoint at {llm.url} answered HTTP 500 (internal failure)"  # one try
    assert tried(llm, "error500") == 4
    with pytest.raises(LLMError, match=r"the endpoint is tried again in 60s$"):
        client.complete(MESSAGES, 20)  # open again, for another cooldown
    assert tried(llm, "error500") == 4


def test_an_endpoint_back_after_the_cooldown_is_used_again(llm, clock):
    client = LLM(settings_for(llm, "normal", llm_max_retries=0), Breakers(clock))
    llm.down = True
    with pytest.raises(LLMError):
        client.complete(MESSAGES, 20)
    llm.down = False  # back up, but the breaker does not know yet
    with pytest.raises(LLMError, match=r"tried again in 60s$"):
        client.complete(MESSAGES, 20)
    assert tried(llm, "normal") == 1
    clock.advance(60)
    assert client.complete(MESSAGES, 20).startswith("The most relevant paper")  # the half-open try, answered
    assert client.complete(MESSAGES, 20).startswith("The most relevant paper")  # closed: no wait, no warning
    assert tried(llm, "normal") == 3


def test_the_breaker_is_per_endpoint_and_model(llm, clock):
    breakers = Breakers(clock)
    with pytest.raises(LLMError):
        LLM(settings_for(llm, "error500", llm_max_retries=0), breakers).complete(MESSAGES, 20)
    # The same server under another model name, and the same model on another server: their own breakers.
    assert LLM(settings_for(llm, "normal"), breakers).complete(MESSAGES, 20)
    with ScriptedLLM() as other:
        with pytest.raises(LLMError, match=r"answered HTTP 500 \(internal failure\)$"):
            LLM(settings_for(other, "error500", llm_max_retries=0), breakers).complete(MESSAGES, 20)
        assert tried(other, "error500") == 1
    assert (tried(llm, "error500"), tried(llm, "normal")) == (1, 1)


def test_a_refused_request_leaves_the_breaker_closed_and_a_refused_key_opens_it(llm, clock):
    """A 400 is about one request (the next question sends another); a 401 fails every question alike."""
    breakers = Breakers(clock)
    for _ in range(2):
        with pytest.raises(LLMError, match=r"answered HTTP 400 \(maximum context length exceeded\)$"):
            LLM(settings_for(llm, "too-long"), breakers).complete(MESSAGES, 20)
    assert tried(llm, "too-long") == 2
    key = "sk-test-DO-NOT-LEAK-4242"
    bad_key = settings_for(llm, "echo-key-401", llm_api_key=key)
    for _ in range(2):
        with pytest.raises(LLMError) as refused:
            LLM(bad_key, breakers).complete(MESSAGES, 20)
        assert "answered HTTP 401 (invalid key in Bearer ***)" in str(refused.value) and key not in str(refused.value)
    assert str(refused.value).endswith("; the endpoint is tried again in 60s")
    assert tried(llm, "echo-key-401") == 1


def test_cooldown_0_turns_the_breaker_off(llm, clock):
    breakers = Breakers(clock)
    off = settings_for(llm, "error500", llm_max_retries=1, llm_cooldown=0)
    for _ in range(3):
        with pytest.raises(LLMError, match=r"answered HTTP 500 \(internal failure\) after 2 tries$"):
            LLM(off, breakers).complete(MESSAGES, 20)
    assert tried(llm, "error500") == 6  # every call with its retry: not even a half-open single try


# -- what `ask` shows while the breaker is open --------------------------------------------------------------

OPEN = r", (just now|\d+s ago); the endpoint is tried again in \d+s; showing the extractive answer instead"


@pytest.mark.parametrize(
    ("model", "cause"),
    [
        ("error503", r"the LLM endpoint at {url} answered HTTP 503 \(overloaded\)"),
        ("slow", r"the LLM endpoint at {url} did not answer within 1s"),
        ("rate-limited-long", r"the LLM endpoint at {url} answered HTTP 429 \(rate limit reached\), retry after 120s"),
        ("hangup", r"cannot reach the LLM endpoint at {url} \(RemoteProtocolError\)"),
        ("stream-cut", r"the answer stream from {url} ended before the model finished"),
    ],
    ids=["5xx", "timeout", "429", "unreachable", "broken-stream"],
)
def test_after_any_fallback_the_next_question_is_answered_extractively_at_once(seed_store, llm, model, cause):
    store, embedder = seed_store
    llm.slow_seconds = 20.0  # `slow` outlasts the 1 s timeout by far
    settings = settings_for(llm, model, llm_max_retries=0, llm_timeout=1, llm_cooldown=3600)
    streamed = model.startswith("stream")
    first = ask(QUESTION, store, embedder, settings, "openai", k=3, stream=streamed)
    assert first.backend == "extractive" and len(first.warnings) == 1
    assert tried(llm, model) == 1
    second = ask(QUESTION, store, embedder, settings, "openai", k=3)
    assert second.backend == "extractive" and second.answer == first.answer
    assert re.fullmatch(cause.format(url=re.escape(llm.url)) + OPEN, second.warnings[0]), second.warnings
    llm.wait_settled()
    assert tried(llm, model) == 1  # the second question never reached the endpoint


# -- the eval's judge ---------------------------------------------------------------------------------------


class JudgeDown(ScriptedLLM):
    """Answers questions, but every judge request fails."""

    def respond(self, handler, body: dict) -> None:
        if str((body.get("messages") or [{}])[0].get("content", "")).startswith("You grade"):
            self._json(handler, 500, {"error": {"message": "judge unavailable", "type": "server_error"}})
        else:
            super().respond(handler, body)


def test_a_failing_judge_leaves_its_scores_empty_and_does_not_stop_the_answers(seed_store_dir, tmp_path, monkeypatch):
    questions = tmp_path / "questions.jsonl"
    rows = [
        {"qid": "q1", "type": "topic", "question": QUESTION, "gold_ids": ["001-02"], "must_mention": []},
        {"qid": "q2", "type": "fact", "question": "what is DiVeQ?", "gold_ids": ["000-01"], "must_mention": []},
    ]
    questions.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with JudgeDown() as server:
        monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
        monkeypatch.setenv("RAG_LLM_BASE_URL", server.url)
        monkeypatch.setenv("RAG_LLM_MODEL", "normal")
        monkeypatch.setenv("RAG_LLM_RETRIES", "0")
        result = runner.invoke(app, ["eval", str(questions), "--json"])
    assert result.exit_code == 0, result.output
    graded = json.loads(result.stdout)["runs"][0]["questions"]
    assert [q["answer"].startswith("The most relevant paper") for q in graded] == [True, True]  # the LLM's
    assert [q["metrics"]["judge_faithfulness"] for q in graded] == [None, None]
    judged = [r for r in server.requests if str(r["messages"][0]["content"]).startswith("You grade")]
    assert (len(server.requests) - len(judged), len(judged)) == (2, 2)  # each answer asked, then graded


# -- configuration and redaction ----------------------------------------------------------------------------


def test_rag_llm_cooldown_is_read_from_the_environment_and_checked(seed_store_dir, monkeypatch):
    assert Settings.from_env().llm_cooldown == 60.0
    monkeypatch.setenv("RAG_LLM_COOLDOWN", "2.5")
    assert Settings.from_env().llm_cooldown == 2.5
    monkeypatch.setenv("RAG_LLM_COOLDOWN", "0")
    assert Settings.from_env().llm_cooldown == 0.0
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    for value, message in (("-1", "is out of range (at least 0)"), ("soon", "is not a number")):
        monkeypatch.setenv("RAG_LLM_COOLDOWN", value)
        with pytest.raises(InputError):
            Settings.from_env()
        result = runner.invoke(app, ["ask", QUESTION])
        assert (result.exit_code, result.stderr) == (2, f"error: RAG_LLM_COOLDOWN={value!r} {message}\n")


def test_the_key_is_redacted_wherever_it_appears_but_a_short_one_is_left_alone():
    key = "sk-secret-123"
    assert redact(f"Bearer {key} and {key}", key) == "Bearer *** and ***"
    assert redact("an error", None) == "an error"
    assert redact("the word abc", "abc") == "the word abc"  # too short to be a key: redacting it would garble
