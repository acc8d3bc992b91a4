"""`rag chat`: a REPL that holds a conversation about the papers.

What a follow-up means ("the second one", "it", "and in 2025?", "compare them") is decided by the pure rules
in `rag/followups.py` and applied by `rag/conversation.py` (the same conversation the web page and the
OpenAI-compatible endpoint hold); this module is the terminal around it: the slash commands, the prompt_toolkit
loop and piped mode. What it prints is drawn by `rag/render.py`, as the CLI's is.
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
from .conversation import Conversation, condense_messages
from .errors import RagError
from .followups import ChatState, Resolution, describe_query, is_year
from .lexical import get_index
from .pipeline import Pipeline
from .query import STATUS_FILTERS, Query, status_filter, within_facets
from .wire import answer_json

if TYPE_CHECKING:
    from .config import Settings
    from .embedding import Embedder
    from .store import Store

__all__ = ["Chat", "condense_messages", "run_chat"]

PROMPT = "rag> "

COMMANDS: dict[str, str] = {
    "/help": "this list",
    "/sources": "the last answer's sources, with scores",
    "/show ID": "a paper's full abstract (an id, or a number from the last list)",
    "/k N": "papers quoted per question (1-100)",
    "/year Y|off": "only papers from year Y for new questions, or any year",
    "/area NAME|off": "only papers of this primary area for new questions (/area lists them), or any",
    "/status S|off": "only accepted, oral, spotlight, poster, rejected or withdrawn papers for new questions, or any",
    "/backend NAME": "extractive | openai | local",
    "/json": "toggle JSON output",
    "/reset": "forget the conversation (settings stay)",
    "/quit": "leave (Ctrl-D also works)",
}


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
        self.conversation = Conversation(Pipeline(store, embedder, settings), state)

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
        if self.interactive:
            # Ctrl-C must stop an answer even when the chat was started with SIGINT ignored (a parent shell's
            # background job passes that on, and Python then installs no handler): restore Python's own.
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            for event in self.conversation.run(question):
                if event.type == "query" and event.resolved is not None:
                    self.begin_answer(event.resolved, event.query)
                elif event.type == "text":
                    self.on_text(event.text)
                elif event.type == "warning":
                    self.warn(event.text)
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
        turn_answer = self.state.last
        assert turn_answer is not None and self.state.last_query is not None  # remembered by Conversation.ask
        if self.state.json_output:
            payload = answer_json(turn_answer, self.state.history[-1].question, self.state.last_query)
            self.out.print(
                json.dumps(payload, ensure_ascii=False, indent=2 if self.interactive else None), markup=False
            )
        else:
            render.end_answer(turn_answer)
        if self.interactive:
            self.out.print()

    def begin_answer(self, resolution: Resolution, query: Query | None = None) -> None:
        """The question as understood (with the area and status filters applied), then the answer's own output."""
        filters = [f"area {query.area}" if query.area else "", query.status or ""] if query else []
        described = resolution.describe()
        if query and query.excluded:  # "but not the multi-view ones": what was searched, and what was left out
            described = describe_query(replace(resolution.to_query(), search=query.search), resolution.paper_ids)
            filters.append(f"excluding {query.excludes}")
        self.note(" · ".join([described, *(part for part in filters if part)]))
        self.begin_output()

    def on_text(self, piece: str) -> None:
        if not self.state.json_output:
            render.write_stream(piece)

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
                self.note(
                    f"k = {state.k}: {state.k} papers quoted per question (a list names further members by title)"
                )
        elif name == "/year":
            if arg.lower() in ("off", "any", "none", "all"):
                state.year = None
                self.note("year filter off: new questions search every year")
            elif is_year(arg):
                state.year = int(arg)
                self.note(f"year filter {state.year}: new questions search only {state.year} papers")
            else:
                self.hint("/year takes a year or off, e.g. /year 2025")
        elif name == "/area":
            self.set_area(arg)
        elif name == "/status":
            if arg.lower() in ("off", "any", "none", "all"):
                state.status = None
                self.note("status filter off: new questions search every decision")
            else:
                try:
                    state.status = status_filter(arg)
                except RagError:
                    self.hint(f"/status takes one of {', '.join(STATUS_FILTERS)}, or off")
                    return True
                if state.status:
                    self.note(f"status filter {state.status}: new questions search only {state.status} papers")
                else:
                    self.hint(f"/status takes one of {', '.join(STATUS_FILTERS)}, or off")
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
            self.note("conversation forgotten (k, year, area and status filters and backend kept)")
        else:
            self.hint(f"unknown command {name}: /help lists the commands")
        return True

    def set_area(self, arg: str) -> None:
        """`/area NAME`: the area as the store writes it (any case); `/area` alone lists the store's areas."""
        state = self.state
        if arg.lower() in ("off", "any", "none", "all"):
            state.area = None
            self.note("area filter off: new questions search every area")
            return
        facets = get_index(self.store).facets()["areas"]
        if not arg:
            listed = "; ".join(f"{name} ({n})" for name, n in sorted(facets.items()))
            self.note(f"areas: {listed}" if listed else "the store's papers have no primary area")
            return
        try:
            query = within_facets(Query(text=arg, search=arg, area=arg), facets, {})
        except RagError as exc:
            self.hint(str(exc))
            return
        state.area = query.area
        self.note(f"area filter {state.area}: new questions search only papers of that area")

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
    area: str | None = None,
    status: str | None = None,
) -> int:
    """Run the chat until /quit, Ctrl-D or the end of piped input. Returns the exit status."""
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    state = ChatState(k=k or settings.k, backend=settings.backend, year=year, status=status_filter(status))
    chat = Chat(store, embedder, settings, state, interactive)
    if area:  # as the store writes it; one the store does not have is refused in one line (rag.cli.friendly)
        state.area = within_facets(
            Query(text=area, search=area, area=area), get_index(store).facets()["areas"], {}
        ).area
    chat.banner()
    if interactive:
        chat.loop_interactive()
        return 0
    chat.loop_lines(sys.stdin)
    return 1 if chat.failures else 0
