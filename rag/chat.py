"""`rag chat`: a REPL that holds a conversation about the papers.

What a follow-up means ("the second one", "it", "and in 2025?", "compare them") is decided by the pure rules
in `rag/followups.py`; this module is the terminal around them: the store lookups those rules need, the LLM
condense step (`prompts/condense.md`, with the rules as the fallback when the endpoint fails), the slash
commands, the prompt_toolkit loop and piped mode. What it prints is drawn by `rag/render.py`, as the CLI's is.
"""

from __future__ import annotations

import json
import signal
import sys
import traceback
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from . import render
from .backends import BACKENDS
from .errors import RagError
from .followups import (
    HISTORY_TURNS,
    ChatState,
    Resolution,
    apply_condensed,
    candidate_ids,
    content_words,
    is_year,
    mentions,
    parse_condensed,
    remember,
    resolve,
)
from .prompts import load_prompt
from .prompts import render as fill
from .query import asks_for_list, coined_names

if TYPE_CHECKING:
    from .answer import Answer
    from .config import Settings
    from .embedding import Embedder
    from .store import Store

PROMPT = "rag> "

COMMANDS: dict[str, str] = {
    "/help": "this list",
    "/sources": "the last answer's sources, with scores",
    "/show ID": "a paper's full abstract (an id, or a number from the last list)",
    "/k N": "papers retrieved per question (1-100)",
    "/year Y|off": "only papers from year Y for new questions, or any year",
    "/backend NAME": "extractive | openai | local",
    "/json": "toggle JSON output",
    "/reset": "forget the conversation (settings stay)",
    "/quit": "leave (Ctrl-D also works)",
}


# -- condensing with an LLM --------------------------------------------------------------------------


def _data(text: str) -> str:
    # The conversation is data for the prompt: no markup of ours can be forged inside it.
    return text.replace("<", "‹").replace(">", "›")


def condense_messages(state: ChatState, question: str, prompts_dir: Path | None = None) -> list[dict]:
    """The chat messages asking an LLM to rewrite `question` as a standalone question."""
    turn = load_prompt("condense_turn.md", prompts_dir)
    turns = []
    for exchange in state.history[-HISTORY_TURNS:]:
        papers = "\n".join(f"{n}. [{pid}] {_data(label)}" for n, (pid, label) in enumerate(exchange.papers, 1))
        answer = exchange.answer if len(exchange.answer) <= 800 else exchange.answer[:800] + " …"
        turns.append(fill(turn, question=_data(exchange.question), answer=_data(answer), papers=papers).strip())
    content = fill(load_prompt("condense.md", prompts_dir), history="\n".join(turns), question=_data(question))
    return [{"role": "user", "content": content.strip()}]


# -- the REPL ----------------------------------------------------------------------------------------


def parse_command(line: str) -> tuple[str, str]:
    name, _, arg = line.strip().partition(" ")
    return name.lower(), arg.strip()


def history_path() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("rag-papers", appauthor=False)) / "chat_history"


class Chat:
    """One chat session over a store. `handle` takes a line typed (or piped) and prints the reply."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        settings: Settings,
        state: ChatState,
        interactive: bool,
    ) -> None:
        self.store, self.embedder, self.settings, self.state = store, embedder, settings, state
        self.interactive = interactive
        self.out, self.err = render.stdout_console(), render.stderr_console()
        self.failures = 0
        self.wrote = False  # anything printed on stdout yet (for piped output's separators)
        # Why the LLM failed while rewriting this turn's follow-up: the answer then goes straight to the
        # extractive backend instead of waiting for the same failing endpoint a second time.
        self.llm_failure: str | None = None

    # -- printing --------------------------------------------------------------------------------

    def note(self, text: str, style: str = "dim") -> None:
        """Status for the user: on the terminal in a session, on stderr when piped (stdout carries answers)."""
        (self.out if self.interactive else self.err).print(text, style=style, markup=False)

    def error(self, message: str) -> None:
        self.err.print(render.error_text(message, self.settings.llm_api_key), style="red", markup=False)

    def warn(self, message: str) -> None:
        """One dim line: the LLM failed and the answer that follows is extractive."""
        self.note(render.warning_text(message, self.settings.llm_api_key))

    def banner(self) -> None:
        backend = self.state.backend
        if backend == "openai":
            from .llm import DEFAULT_BASE_URL, safe_url

            where = safe_url(self.settings.llm_base_url or DEFAULT_BASE_URL)  # never user:key@
            backend += f" ({self.settings.llm_model} at {where})"
        elif backend == "local":
            backend += f" ({self.settings.local_model_path or self.settings.local_model}, in-process)"
        papers = self.store.count_papers()
        self.note(f"rag chat · store {self.settings.store_label} · {papers} papers · backend {backend}", "bold")
        if self.interactive:
            self.note(
                "Ask about the papers; follow up with “the second one”, “it”, an id, “and in 2025?”, “compare them”.\n"
                "/help lists the commands; Ctrl-C stops an answer, Ctrl-D leaves."
            )

    # -- one line --------------------------------------------------------------------------------

    def handle(self, line: str) -> bool:
        """Answer a question or run a command; False means leave."""
        line = line.strip()
        if not line:
            return True
        if line.startswith("/"):
            return self.command(line)
        self.answer(line)
        return True

    def answer(self, question: str) -> None:
        self.llm_failure = None
        if self.interactive:
            # Ctrl-C must stop an answer even when the chat was started with SIGINT ignored (a parent shell's
            # background job passes that on, and Python then installs no handler): restore Python's own.
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            resolution = self.resolve(question)
            self.note(resolution.describe())
            result = self.run(question, resolution)
        except KeyboardInterrupt:
            if not self.interactive:
                raise  # piped input: Ctrl-C ends the run, as for any command
            # At the terminal Ctrl-C stops this answer, not the session.
            self.out.print()
            self.note("(interrupted)", "yellow")
            return
        except RagError as exc:
            self.failures += 1
            self.error(str(exc))
            return
        except Exception as exc:
            self.failures += 1
            if render.debug():
                traceback.print_exc()
            self.error(render.unexpected(exc))
            return
        remember(self.state, question, resolution, result)

    def resolve(self, question: str) -> Resolution:
        from .answer import clean_question

        question = clean_question(question)
        known = set(self.store.get_papers(candidate_ids(question)))
        named: list[str] = []
        if not asks_for_list(question):
            for word in coined_names(question):
                papers = self.store.papers_mentioning(word)
                if len(papers) == 1:  # a name only one paper uses
                    named.append(papers[0])
        resolution = resolve(question, self.state, known, named)
        if self.state.backend == "openai" and self.state.history:
            condensed = self.condense(question)
            if condensed:
                resolution = apply_condensed(resolution, condensed, self.state)
        return resolution

    def condense(self, question: str) -> str | None:
        from .llm import LLM

        messages = condense_messages(self.state, question, self.settings.prompts_dir)
        try:  # behind the endpoint's circuit breaker, as the answer is: an endpoint that just failed is not waited on
            reply = LLM(self.settings).complete(messages, 120)
        except RagError as exc:
            self.llm_failure = str(exc)  # reported once, with the extractive answer (see `run`)
            return None
        return parse_condensed(reply)

    def run(self, question: str, resolution: Resolution) -> Answer:
        from .answer import ask

        state = self.state
        settings = self.settings
        if resolution.about_papers or self.named_papers_answer(resolution):
            # The user chose these papers: whether they match the question well enough is not the issue.
            settings = replace(settings, min_score=0.0)
        k = max(state.k, len(resolution.paper_ids))
        paper_ids = list(resolution.paper_ids) or None

        on_text = None if state.json_output else render.write_stream
        backend = state.backend
        skipped: list[str] = []
        if backend == "openai" and self.llm_failure:
            skipped.append(
                f"{self.llm_failure}; the conversation was read by the rules alone, "
                "showing the extractive answer instead"
            )
            self.warn(skipped[0])
            backend = "extractive"
        self.begin_output()
        if resolution.about_papers and len(resolution.paper_ids) > 1 and backend == "extractive":
            result = self.side_by_side(resolution, settings, on_text)
        else:
            result = ask(
                resolution.to_query(),
                self.store,
                self.embedder,
                settings,
                backend,
                k=k,
                on_text=on_text,
                paper_ids=paper_ids,
                on_warning=self.warn,
            )
        result.warnings[:0] = skipped
        if state.json_output:
            payload = {**result.to_json(), "question": question}
            payload["resolved"] = {
                "query": resolution.query,
                "paper_ids": list(resolution.paper_ids),
                "year": resolution.year,
            }
            self.out.print(
                json.dumps(payload, ensure_ascii=False, indent=2 if self.interactive else None), markup=False
            )
        else:
            render.end_answer(result)
        if self.interactive:
            self.out.print()
        return result

    def named_papers_answer(self, resolution: Resolution) -> bool:
        """A question about named papers whose abstracts use its words ("is it tested on RWKU?")."""
        if not resolution.paper_ids:
            return False
        words = content_words(resolution.query)
        papers = self.store.get_papers(resolution.paper_ids).values()
        return bool(words) and any(mentions(words, paper.abstract) for paper in papers)

    def side_by_side(self, resolution: Resolution, settings: Settings, on_text) -> Answer:
        """Extractive "compare them": each paper's best sentences on the topic, so none is dropped as a weaker match."""
        from .answer import Answer, ask
        from .citations import find_citations

        parts = [
            ask(resolution.query, self.store, self.embedder, settings, "extractive", k=1, paper_ids=[pid])
            for pid in resolution.paper_ids
        ]
        lines = [line for part in parts for line in part.answer.splitlines()[1:]]
        text = f"{len(lines)} papers side by side:\n" + "\n".join(lines)
        if on_text:
            on_text(text)
        sources = [part.sources[0] for part in parts if part.sources]
        timings = {key: sum(p.timings_ms.get(key, 0.0) for p in parts) for key in ("retrieve", "generate", "total")}
        return Answer(
            resolution.to_query(), text, find_citations(text), sources, False, "extractive", [], timings, None
        )

    # -- slash commands --------------------------------------------------------------------------

    def command(self, line: str) -> bool:
        name, arg = parse_command(line)
        state = self.state
        if name in ("/quit", "/exit", "/q"):
            return False
        if name in ("/help", "/?"):
            width = max(len(c) for c in COMMANDS)
            for usage, meaning in COMMANDS.items():
                self.out.print(f"  {usage:<{width}}  {meaning}", markup=False)
            self.out.print(
                "  Follow-ups: “the second one”, “the first two”, an id (001-02 or [001-02]), “it”, “them”,"
                " “and in 2025?”, “compare them”.",
                markup=False,
            )
        elif name == "/sources":
            if state.last is None:
                self.hint("no answer yet: ask a question first")
            elif not state.last.sources:
                self.note("the last answer had no sources")
            else:
                searched = state.last_query.query if state.last_query else state.last.question
                self.wrote = True  # the list starts with its own blank line
                render.print_sources(
                    self.out, state.last.sources, f"Sources of the last answer (searched: {searched}):"
                )
        elif name == "/show":
            self.show(arg)
        elif name == "/k":
            if not arg.isdigit() or not 1 <= int(arg) <= 100:
                self.hint("/k takes a number of papers from 1 to 100, e.g. /k 8")
            else:
                state.k = int(arg)
                self.note(f"k = {state.k}: up to {state.k} papers per question")
        elif name == "/year":
            if arg.lower() in ("off", "any", "none", "all"):
                state.year = None
                self.note("year filter off: new questions search every year")
            elif is_year(arg):
                state.year = int(arg)
                self.note(f"year filter {state.year}: new questions search only {state.year} papers")
            else:
                self.hint("/year takes a year or off, e.g. /year 2025")
        elif name == "/backend":
            if arg not in BACKENDS:
                self.hint(f"/backend takes one of: {', '.join(BACKENDS)} (now {state.backend})")
            else:
                state.backend = arg
                self.note(f"backend {arg}")
                if arg == "openai" and not self.settings.llm_base_url:
                    self.note("no RAG_LLM_BASE_URL is set: answers go to https://api.openai.com/v1")
        elif name == "/json":
            state.json_output = not state.json_output
            self.note(f"JSON output {'on' if state.json_output else 'off'}")
        elif name == "/reset":
            state.reset()
            self.note("conversation forgotten (k, year filter and backend kept)")
        else:
            self.hint(f"unknown command {name}: /help lists the commands")
        return True

    def begin_output(self) -> None:
        """Piped output: a blank line between one answer (or abstract) and the next; none between JSON lines."""
        if not self.interactive and self.wrote and not self.state.json_output:
            sys.stdout.write("\n")
        self.wrote = True

    def hint(self, text: str) -> None:
        self.note(text, "yellow")

    def show(self, arg: str) -> None:
        target = arg.strip().strip("[]").strip()
        if not target:
            self.hint("/show takes a paper id, e.g. /show 001-02 (or a number from the last list)")
            return
        if target.isdigit() and target not in self.store.get_papers([target]):
            n = int(target)
            if not 1 <= n <= len(self.state.listing):
                self.hint(f"/show {n}: the last list has {len(self.state.listing)} papers")
                return
            target = self.state.listing[n - 1]
        try:
            paper = self.store.get_paper(target)
        except RagError as exc:
            self.error(str(exc))
            return
        self.begin_output()
        render.print_paper(self.out, paper)
        if self.interactive:
            self.out.print()

    # -- loops -----------------------------------------------------------------------------------

    def loop_interactive(self) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
        from prompt_toolkit.completion import WordCompleter
        from prompt_toolkit.history import FileHistory, InMemoryHistory

        path = history_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            history = FileHistory(str(path))
        except OSError:
            self.note(f"(history is not saved: cannot write {path})")
            history = InMemoryHistory()
        commands = [usage.split()[0] for usage in COMMANDS]
        session: PromptSession[str] = PromptSession(
            history=history,
            auto_suggest=AutoSuggestFromHistory(),
            completer=WordCompleter(commands, sentence=True),
            complete_while_typing=False,  # Tab completes the slash commands; typing stays quiet
        )
        while True:
            try:
                line = session.prompt(PROMPT)
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt clears the line
            except EOFError:
                break
            if not self.handle(line):
                break

    def loop_lines(self, lines: Iterable[str]) -> None:
        for raw in lines:
            line = raw.strip()
            if line.startswith("#"):
                continue  # a comment in a questions file
            if not self.handle(line):
                break


def run_chat(
    store: Store,
    embedder: Embedder,
    settings: Settings,
    *,
    k: int | None,
    year: int | None,
) -> int:
    """Run the chat until /quit, Ctrl-D or the end of piped input. Returns the exit status."""
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    state = ChatState(k=k or settings.k, backend=settings.backend, year=year)
    chat = Chat(store, embedder, settings, state, interactive)
    chat.banner()
    if interactive:
        chat.loop_interactive()
        return 0
    chat.loop_lines(sys.stdin)
    return 1 if chat.failures else 0
