"""`rag chat`: follow-up rules as pure functions, then the real REPL driven through a pseudo-terminal.

The terminal tests spawn the installed `rag` console script under pexpect against the real seed store and
the real embedding model (LLM cases: the scripted server on 127.0.0.1), and assert what the user sees.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from rag.chat import condense_messages
from rag.followups import (
    ChatState,
    Resolution,
    ResolveError,
    apply_condensed,
    candidate_ids,
    content_words,
    parse_condensed,
    remember,
    resolve,
)
from rag.query import coined_names, parse
from rag.types import Answer, Source

from .llm_server import ScriptedLLM

BIN = Path(sys.executable).parent
TIMEOUT = 30  # seconds per wait: generous, the test machine may have two slow cores
UNLEARNING = ["001-02", "001-18", "001-15"]  # a listing for the rule tests
# What the real hybrid retriever lists for "which papers study unlearning?" over the seeds, in order.
UNLEARNING_LISTED = ["001-02", "001-18", "001-15"]  # what "which papers study unlearning?" lists, in order


# -- follow-up rules (pure) ------------------------------------------------------------------------


def state_after_list(**changes) -> ChatState:
    """The conversation after "which papers study unlearning?" listed three papers."""
    state = ChatState(k=5, backend="extractive")
    state.topic = "which papers study unlearning?"
    state.listing = list(UNLEARNING)
    state.focus = list(UNLEARNING)
    for name, value in changes.items():
        setattr(state, name, value)
    return state


def answer(question: str, cited: list[str], sources: list[str] | None = None) -> Answer:
    found = [
        Source(pid, None, 2026, "ICLR 2026", 0.5, f"snippet {pid}", f"Abstract of {pid}.") for pid in sources or cited
    ]
    text = "\n".join(f"- sentence [{pid}]" for pid in cited)
    return Answer(parse(question), text, cited, found, not cited, "extractive")


def test_an_ordinal_picks_that_paper_of_the_list_and_keeps_the_topic():
    resolution = resolve("tell me more about the second one", state_after_list())
    assert resolution == Resolution("unlearning", ("001-18",), None, about_papers=True, opens_topic=False)
    assert resolution.describe() == "↳ searching: unlearning · papers 001-18"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("the first two", ("001-02", "001-18")),
        ("what about the last one?", ("001-15",)),
        ("compare the third and the first", ("001-15", "001-02")),
        ("and the 3rd paper?", ("001-15",)),
        ("show me #2", ("001-18",)),
    ],
)
def test_ordinal_forms(question, expected):
    assert resolve(question, state_after_list()).paper_ids == expected


def test_ordinal_words_that_do_not_point_at_the_list_are_left_alone():
    resolution = resolve("which papers were the first to study unlearning in LLMs?", state_after_list())
    assert resolution.paper_ids == () and resolution.opens_topic


def test_an_ordinal_beyond_the_list_or_before_any_list_is_a_one_line_error():
    with pytest.raises(ResolveError, match="the last list has 3 papers: there is no fifth one"):
        resolve("the fifth one", state_after_list())
    with pytest.raises(ResolveError, match="ask a question first"):
        resolve("tell me about the second one", ChatState(k=5, backend="extractive"))


def test_ids_bare_or_bracketed_are_references_and_unknown_ones_are_errors():
    known = {"000-01", "003-04"}
    assert resolve("what about 000-01?", state_after_list(), known).paper_ids == ("000-01",)
    assert resolve("compare [003-04, 000-01]", state_after_list(), known).paper_ids == ("003-04", "000-01")
    with pytest.raises(ResolveError, match="no paper with id '999-99'"):
        resolve("tell me about [999-99]", state_after_list(), known)
    with pytest.raises(ResolveError, match="no paper with id '999-98'"):
        resolve("and 999-98?", state_after_list(), known)
    assert candidate_ids("is [001-02] like 003-04 or v2.1 in 2025?") == ["001-02", "003-04", "v2.1"]


def test_it_means_the_paper_under_discussion_and_the_question_becomes_standalone():
    state = state_after_list(focus=["001-18"])
    resolution = resolve("what datasets does it use?", state)
    assert resolution.query == "what datasets does this paper use?"
    assert resolution.paper_ids == ("001-18",) and not resolution.about_papers
    assert resolve("what is its main result?", state).query == "what is this paper's main result?"


def test_them_after_a_drill_down_means_the_listed_papers():
    resolution = resolve("compare them", state_after_list(focus=["001-18"]))
    assert resolution.paper_ids == tuple(UNLEARNING) and resolution.about_papers
    assert resolution.query == "unlearning"


def test_a_year_alone_narrows_the_previous_question():
    resolution = resolve("and in 2025?", state_after_list())
    assert resolution == Resolution("which papers study unlearning?", (), 2025, opens_topic=True)
    assert resolve("and in any year?", state_after_list(topic_year=2025)).year is None


def test_a_new_subject_after_and_keeps_the_question_form_and_the_year():
    resolution = resolve("what about graph neural networks?", state_after_list(topic_year=2025))
    assert resolution == Resolution("which papers study graph neural networks?", (), 2025, opens_topic=True)


def test_a_new_list_question_is_not_a_follow_up_even_with_pronouns():
    resolution = resolve("which papers show that they generalize?", state_after_list(), named=["001-02"])
    assert resolution == Resolution("which papers show that they generalize?", (), None, opens_topic=True)


def test_a_new_question_uses_the_sticky_year_and_pronouns_mean_nothing_before_a_conversation():
    state = ChatState(k=5, backend="extractive", year=2025)
    assert resolve("is it possible to unlearn facts?", state) == Resolution(
        "is it possible to unlearn facts?", (), 2025, opens_topic=True
    )


def test_a_named_paper_is_searched_first():
    resolution = resolve("what does PURGE reach on RWKU?", ChatState(k=5, backend="extractive"), named=["001-02"])
    assert resolution.paper_ids == ("001-02",) and resolution.query == "what does PURGE reach on RWKU?"
    assert coined_names("does SF-DiVeQ beat DiVeQ on ImageNet or the GAN?") == [
        "SF-DiVeQ",
        "DiVeQ",
        "ImageNet",
        "GAN",
    ]


def test_a_paper_outside_the_topic_is_asked_about_in_general():
    resolution = resolve("tell me about 000-01", state_after_list(), known_ids={"000-01"})
    assert resolution.query == "main contribution and results" and resolution.about_papers


def test_content_words_ignore_scaffolding_and_references():
    assert content_words("tell me more about the second one") == []
    assert content_words("what datasets does it use?") == ["datasets"]


def test_remember_sets_the_list_on_open_questions_and_keeps_it_on_drill_downs():
    state = ChatState(k=5, backend="extractive")
    remember(
        state, "which papers study unlearning?", Resolution("which papers study unlearning?"), answer("q", UNLEARNING)
    )
    assert state.listing == UNLEARNING and state.focus == UNLEARNING
    assert state.topic == "which papers study unlearning?"
    drill = resolve("tell me more about the second one", state)
    remember(state, "tell me more about the second one", drill, answer("unlearning", ["001-18"]))
    assert state.listing == UNLEARNING and state.focus == ["001-18"]
    assert resolve("and the third one?", state).paper_ids == ("001-15",)  # still counts in the list shown
    abstained = answer("x", [], sources=["004-01", "004-02"])
    remember(state, "which papers study baking?", Resolution("which papers study baking?"), abstained)
    assert state.listing == ["004-01", "004-02"] and state.focus == []  # "Closest papers" are what was shown


def test_condense_prompt_carries_the_numbered_conversation_as_data():
    state = ChatState(k=5, backend="openai")
    remember(state, "which papers study <unlearning>?", Resolution("q"), answer("q", ["001-02", "001-18"]))
    (message,) = condense_messages(state, "tell me more about the second one")
    content = message["content"]
    assert "<conversation>" in content and "which papers study ‹unlearning›?" in content
    assert "1. [001-02]" in content and "2. [001-18]" in content
    assert "<latest>\ntell me more about the second one\n</latest>" in content


def test_condensed_replies_are_cleaned_or_refused():
    assert parse_condensed('Standalone question: "What datasets does [001-18] use?"\n') == (
        "What datasets does [001-18] use?"
    )
    assert parse_condensed("  \n") is None
    assert parse_condensed("x" * 600) is None
    state = state_after_list()
    # The rules found no reference; the LLM resolved "the PURGE one" to a paper of the conversation.
    rewritten = apply_condensed(Resolution("tell me about the PURGE one"), "Tell me about PURGE [001-02]", state)
    assert rewritten.paper_ids == ("001-02",) and not rewritten.opens_topic
    kept = apply_condensed(Resolution("unlearning", ("001-18",), about_papers=True), "Tell me about SAM", state)
    assert kept.paper_ids == ("001-18",) and kept.query == "Tell me about SAM"


# -- the real REPL in a pseudo-terminal ------------------------------------------------------------

_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78]|\r")
PROMPT = "\nrag>"  # a fresh prompt starts a line; prompt_toolkit's redraws of the typed line do not


def visible(raw: str) -> str:
    """Terminal output as the user reads it: escape sequences and carriage returns removed."""
    return _ESCAPES.sub("", raw)


class Terminal:
    """`rag chat` in a pseudo-terminal. Waits are for text to appear (never for time to pass)."""

    def __init__(self, env: dict[str, str], *args: str, preexec_fn=None) -> None:
        self.child = pexpect.spawn(
            str(BIN / "rag"),
            ["chat", *args],
            env=env,
            encoding="utf-8",
            dimensions=(50, 220),
            timeout=TIMEOUT,
            preexec_fn=preexec_fn,
        )
        self.raw = ""
        self.wait_for(PROMPT, 0)
        self.banner = self.text

    @property
    def text(self) -> str:
        return visible(self.raw)

    def wait_for(self, needle: str, start: int) -> int:
        """Read until `needle` shows at or after `start`; the position just after it."""
        deadline = time.monotonic() + TIMEOUT
        while (found := self.text.find(needle, start)) < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"{needle!r} did not show within {TIMEOUT}s; the screen shows:\n{self.text[start:]}"
                )
            try:
                self.raw += self.child.read_nonblocking(65536, timeout=min(remaining, 1.0))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                raise AssertionError(f"rag chat ended before {needle!r}; it showed:\n{self.text[start:]}") from None
        return found + len(needle)

    def send(self, line: str) -> str:
        """Type a line and press Enter; what the REPL printed before its next prompt."""
        start = len(self.text)
        self.child.sendline(line)
        end = self.wait_for(PROMPT, start)
        reply = self.text[start : end - len(PROMPT) + 1]  # up to and with the newline before the prompt
        return reply.split("\n", 1)[1] if "\n" in reply else ""  # drop the echo of the typed line

    def exit_with_ctrl_d(self) -> int:
        self.child.sendeof()
        self.child.expect(pexpect.EOF)
        self.raw += self.child.before or ""
        self.child.close()
        return self.child.exitstatus


def cited(reply: str) -> list[str]:
    """The ids cited in the answer, in order: not the searching line, not the Sources block."""
    answer = re.split(r"\n(?:Sources|Closest papers):", reply)[0]
    text = "\n".join(line for line in answer.splitlines() if not line.startswith("↳"))
    return list(dict.fromkeys(re.findall(r"\[(\d{3}-\d{2})\]", text)))


def source_lines(reply: str) -> list[str]:
    block = reply.split("\nSources:\n", 1)[1] if "\nSources:\n" in reply else ""
    return [line.strip() for line in block.splitlines() if line.strip()]


@pytest.fixture()
def chat_env(seed_store_dir, tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env.update(
        RAG_STORE=str(seed_store_dir),
        XDG_DATA_HOME=str(tmp_path / "data"),  # the history file lands here
        HOME=str(tmp_path / "home"),
        TERM="xterm-256color",
        LANG="C.UTF-8",
        PROMPT_TOOLKIT_NO_CPR="1",  # pexpect does not answer cursor-position requests
    )
    return env


@pytest.fixture()
def llm():
    with ScriptedLLM(slow_seconds=2.0) as server:
        yield server


def with_llm(env: dict[str, str], server: ScriptedLLM, model: str) -> dict[str, str]:
    return {**env, "RAG_LLM_BASE_URL": server.url, "RAG_LLM_MODEL": model, "RAG_LLM_RETRIES": "0"}


def test_a_conversation_in_the_terminal(chat_env, seed_store_dir, seed_papers, tmp_path):
    term = Terminal(chat_env)
    assert f"store {seed_store_dir}" in term.banner and "95 papers" in term.banner
    assert "backend extractive" in term.banner

    broad = term.send("which papers study unlearning?")
    assert "↳ searching: unlearning\n" in broad and "3 papers match:" in broad
    listed = cited(broad)
    assert listed == UNLEARNING_LISTED
    assert [line.split("  ")[0] for line in source_lines(broad)] == [f"[{pid}] 2026" for pid in UNLEARNING_LISTED]

    first = term.send("tell me more about the first one")
    assert f"↳ searching: unlearning · papers {listed[0]}" in first
    assert cited(first) == [listed[0]] and "PURGE" in first  # 001-02's method
    assert [line.split()[0] for line in source_lines(first)] == [f"[{listed[0]}]"]

    it = term.send("is it tested on RWKU?")
    assert "↳ searching: is this paper tested on RWKU · papers 001-02" in it
    assert cited(it) == ["001-02"] and "11% unlearning effectiveness" in it

    by_id = term.send("what about 001-18?")
    assert "· papers 001-18" in by_id and cited(by_id) == ["001-18"] and "Sharp MinMax" in by_id

    clustering = term.send("which papers study clustering?")
    assert {"004-05", "000-16"} <= set(cited(clustering))  # 2025 and 2026 papers
    narrowed = term.send("and in 2025?")
    assert "↳ searching: clustering · year 2025" in narrowed
    assert cited(narrowed) and all(pid.startswith("004-") for pid in cited(narrowed))
    assert all(line.split()[1] == "2025" for line in source_lines(narrowed))

    sources = term.send("/sources")
    assert "Sources of the last answer (searched: which papers study clustering?):" in sources
    assert len(re.findall(r"^  \[004-\d\d\] 2025  0\.\d\d  ", sources, re.M)) >= 2

    compared = term.send("compare them")
    assert "side by side" in compared and cited(compared) == cited(narrowed)

    assert term.send("/frobnicate") == "unknown command /frobnicate: /help lists the commands\n"
    assert term.send("/k 0") == "/k takes a number of papers from 1 to 100, e.g. /k 8\n"
    assert term.send("the ninth one") == "error: the last list has 2 papers: there is no ninth one\n"

    shown = term.send("/show 004-07")
    assert shown.startswith("[004-07] ICLR 2025\n")
    abstract = next(p.abstract for p in seed_papers if p.id == "004-07")
    assert " ".join(abstract.split()) in " ".join(shown.split())

    assert term.exit_with_ctrl_d() == 0
    assert "Traceback" not in term.text

    # The history outlives the session: ↑ in a new one brings back the last line typed.
    history = tmp_path / "data" / "rag-papers" / "chat_history"
    assert "which papers study unlearning?" in history.read_text()
    again = Terminal(chat_env)
    start = len(again.text)
    again.child.send("\x1b[A")  # the up arrow
    again.wait_for("/show 004-07", start)
    recalled = again.send("")
    assert recalled.startswith("[004-07] ICLR 2025\n")
    again.child.sendline("/quit")
    again.child.expect(pexpect.EOF)
    again.child.close()
    assert again.child.exitstatus == 0


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_stops_a_streaming_answer_and_the_session_goes_on(chat_env, llm, inherited):
    # "ignored": started by a parent that ignores SIGINT (a shell's background job does), where Python installs
    # no KeyboardInterrupt handler of its own; the chat must still stop the answer.
    preexec = _ignore_sigint if inherited == "ignored" else None
    term = Terminal(with_llm(chat_env, llm, "slow-stream"), preexec_fn=preexec)  # one word every 2 s
    assert "backend openai (slow-stream at http://127.0.0.1:" in term.banner
    start = len(term.text)
    term.child.sendline("which papers study unlearning?")
    term.wait_for("The most", start)  # the answer is streaming: two words are on screen
    term.child.sendintr()
    end = term.wait_for(PROMPT, term.wait_for("(interrupted)", start))
    reply = term.text[start:end]
    assert "A second one is related" not in reply and "Sources:" not in reply
    assert "Traceback" not in reply
    assert (
        term.send("/k 3") == "k = 3: 3 papers quoted per question (a list names further members by title)\n"
    )  # still running, still listening
    assert term.exit_with_ctrl_d() == 0


def test_with_an_llm_follow_ups_are_condensed_and_restricted_to_the_papers_meant(chat_env, llm):
    term = Terminal(with_llm(chat_env, llm, "stream"))
    first = term.send("which papers study unlearning?")
    top, runner_up = llm.source_ids(llm.requests[-1])[:2]
    assert f"The most relevant paper studies this directly [{top}]. A second one is related [{runner_up}]." in first

    follow = term.send("tell me more about the second one")
    condense = next(r for r in llm.requests if "<latest>" in r["messages"][0]["content"])
    assert "which papers study unlearning?" in condense["messages"][0]["content"]
    assert f"2. [{runner_up}]" in condense["messages"][0]["content"] and not condense.get("stream")
    assert f"↳ searching: tell me more about the second one (standalone) · papers {runner_up}" in follow
    assert llm.source_ids(llm.requests[-1]) == [runner_up]  # the answer saw only that paper
    assert cited(follow) == [runner_up]
    assert term.exit_with_ctrl_d() == 0


def test_an_llm_error_is_one_warning_line_then_the_extractive_answer(chat_env, llm):
    key = "sk-test-DO-NOT-LEAK-4242"
    term = Terminal({**with_llm(chat_env, llm, "error500"), "OPENAI_API_KEY": key})
    failed = term.send("which papers study unlearning?")
    lines = failed.splitlines()
    assert lines[1] == (
        f"warning: the LLM endpoint at {llm.url} answered HTTP 500 (internal failure);"
        " showing the extractive answer instead"
    )
    assert lines[2] == "3 papers match:" and cited(failed) == UNLEARNING_LISTED
    assert "error:" not in failed
    assert term.exit_with_ctrl_d() == 0
    assert key not in term.text and "Traceback" not in term.text


def test_piped_questions_are_answered_in_turn_as_plain_text(chat_env):
    questions = "which papers study unlearning?\ntell me more about the second one\n/json\nand the third one?\n"
    result = subprocess.run(
        [str(BIN / "rag"), "chat"], input=questions, capture_output=True, text=True, env=chat_env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "rag>" not in result.stdout
    blocks = result.stdout.split("\n\n")  # answer, its sources, the next answer, ...
    assert blocks[0].startswith("3 papers match:") and cited(blocks[0]) == UNLEARNING_LISTED
    assert re.match(r"Sources:\n  \[001-02\] 2026  [01]\.\d\d  ", blocks[1])  # id, year, relevance
    assert blocks[2].startswith("1 paper says:") and cited(blocks[2]) == ["001-18"]
    payload = json.loads(result.stdout.splitlines()[-1])  # /json: one object per line
    assert payload["question"] == "and the third one?" and payload["citations"] == ["001-15"]
    resolved = {k: v for k, v in payload["resolved"].items() if k != "described"}
    assert resolved == {"query": "unlearning", "paper_ids": ["001-15"], "year": None}
    assert payload["resolved"]["described"].startswith("↳ searching: unlearning")
    assert "↳ searching: unlearning · papers 001-18" in result.stderr


# -- slash commands, piped ---------------------------------------------------------------------------


def piped_chat(env: dict[str, str], *lines: str) -> subprocess.CompletedProcess:
    """`rag chat` reading `lines` from a pipe: answers on stdout, notes (one per line) on stderr."""
    typed = "".join(line + "\n" for line in lines)
    return subprocess.run([str(BIN / "rag"), "chat"], input=typed, capture_output=True, text=True, env=env, timeout=180)


def quoted_lines(answer: str) -> int:
    """How many of a list answer's lines quote a sentence; the rest name a further member by its label (a seed's
    label is its abstract's first words, ending in "…")."""
    return sum(1 for line in answer.splitlines()[1:] if line.startswith("- ") and not re.search(r"… \[[^]]+\]$", line))


def answers(stdout: str) -> list[tuple[str, list[str]]]:
    """Each answer shown, with the years of its Sources lines (piped output: answer, blank line, sources)."""
    blocks = stdout.strip("\n").split("\n\n")
    return [
        (text, [line.split()[1] for line in source_lines("\n" + sources)])
        for text, sources in zip(blocks[::2], blocks[1::2], strict=True)
    ]


def test_year_command_restricts_new_questions_until_turned_off(chat_env):
    question = "which papers study clustering?"  # the seeds have 2025 and 2026 papers on it
    result = piped_chat(chat_env, "/year 2025", "/year 20x5", question, "/year off", question)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[1:] == [
        "year filter 2025: new questions search only 2025 papers",
        "/year takes a year or off, e.g. /year 2025",  # and the filter stays as it was
        "↳ searching: clustering · year 2025",
        "year filter off: new questions search every year",
        "↳ searching: clustering",
    ]
    (restricted, restricted_years), (open_, open_years) = answers(result.stdout)
    assert cited(restricted) and restricted_years and set(restricted_years) == {"2025"}
    assert {"2025", "2026"} <= set(open_years) and set(cited(restricted)) != set(cited(open_))


def test_backend_command_switches_the_answering_backend_and_refuses_unknown_ones(chat_env, llm):
    env = {**with_llm(chat_env, llm, "normal"), "RAG_BACKEND": "extractive"}
    result = piped_chat(
        env,
        "which papers study unlearning?",
        "/backend openai",
        "which papers study graph neural networks?",
        "/backend gpt-5",
        "/backend extractive",
        "which papers study clustering?",
    )
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if not line.startswith("↳")]
    assert notes == [
        f"rag chat · store {chat_env['RAG_STORE']} · 95 papers · backend extractive",
        "backend openai",
        "/backend takes one of: extractive, openai, local (now openai)",
        "backend extractive",
    ]
    (before, _), (switched, _), (back, _) = answers(result.stdout)
    assert re.match(r"\d papers? match:\n", before) and re.match(r"\d papers? match:\n", back)
    assert switched.startswith("The most relevant paper studies this directly [")
    assert llm.answer_requests("normal") == 1  # only the question asked while the backend was openai


def test_backend_openai_without_an_endpoint_says_where_answers_will_go(chat_env):
    result = piped_chat(chat_env, "/backend openai")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[1:] == [
        "backend openai",
        "no RAG_LLM_BASE_URL is set: answers go to https://api.openai.com/v1",
    ]


def test_reset_forgets_the_conversation_but_keeps_the_settings(chat_env):
    follow_up = "tell me more about the second one"
    result = piped_chat(
        chat_env,
        "/k 2",
        "which papers study unlearning?",
        follow_up,
        "/reset",
        follow_up,
        "which papers study clustering?",
    )
    assert result.returncode == 1  # the follow-up after /reset failed: a piped run says so in its status
    notes = [line for line in result.stderr.splitlines()[1:] if not line.startswith("↳")]
    assert notes == [
        "k = 2: 2 papers quoted per question (a list names further members by title)",
        "conversation forgotten (k, year, area and status filters and backend kept)",
        "error: there is no list to count in yet: ask a question first",
    ]
    assert "↳ searching: unlearning · papers 001-18" in result.stderr  # before /reset it did resolve
    listed, drilled, fresh = answers(result.stdout)
    # k = 2: two papers quoted, the list's third member named by title and id
    assert cited(listed[0]) == UNLEARNING_LISTED and cited(drilled[0]) == ["001-18"]
    assert quoted_lines(listed[0]) == 2
    assert quoted_lines(fresh[0]) == 2  # k = 2 outlived the reset (5 papers on clustering quoted otherwise)


def test_help_lists_every_command(chat_env):
    result = piped_chat(chat_env, "/help")
    assert result.returncode == 0, result.stderr
    listed = [line.split("  ")[1] for line in result.stdout.splitlines() if line.startswith("  /")]
    assert listed == [
        "/help",
        "/sources",
        "/show ID",
        "/k N",
        "/year Y|off",
        "/area NAME|off",
        "/status S|off",
        "/backend NAME",
        "/json",
        "/reset",
        "/quit",
    ]
    assert "  Follow-ups: “the second one”" in result.stdout
    assert piped_chat(chat_env, "/?").stdout == result.stdout  # the short form
