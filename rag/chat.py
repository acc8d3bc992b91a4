"""`rag chat`: a REPL that holds a conversation about the papers.

The conversation is a plain dataclass (`ChatState`). Turning a follow-up ("the second one", "what datasets
does it use?", "and in 2025?", "compare them") into a standalone query is done by pure functions over that
state (`resolve`, `remember`), so the rules are unit-testable without a terminal. With an LLM backend the
question text is also rewritten through the condense prompt (`prompts/condense.md`); the rules still decide
which papers and which year are meant, and are the fallback when the endpoint fails.
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from . import render
from .backends import BACKENDS
from .errors import InputError, RagError
from .prompts import load_prompt
from .prompts import render as fill
from .query import Query, asks_for_list, coined_names, parse, search_text

if TYPE_CHECKING:
    from .answer import Answer
    from .config import Settings
    from .embedding import Embedder
    from .store import Store

PROMPT = "rag> "
# What "tell me more about X" searches when the conversation has no topic yet.
GENERIC_QUERY = "main contribution and results"
HISTORY_TURNS = 3  # exchanges shown to the condense prompt
MAX_CONDENSED_CHARS = 500

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


class ResolveError(InputError):
    """A follow-up that points at nothing ("the fifth one" when three papers were listed)."""


# -- conversation state ------------------------------------------------------------------------------


@dataclass
class Exchange:
    """One answered question, as the condense prompt sees it."""

    question: str
    answer: str
    papers: list[tuple[str, str]]  # (id, label) in the order shown


@dataclass
class ChatState:
    """What the REPL remembers: the settings the user changed, and the conversation so far."""

    k: int
    backend: str
    year: int | None = None  # the sticky filter from /year or --year, for new questions
    json_output: bool = False
    # Papers of the last open (not paper-restricted) question, in the order shown: "the second one".
    listing: list[str] = field(default_factory=list)
    # The papers under discussion: those the last answer cited, or the ones the user named.
    focus: list[str] = field(default_factory=list)
    topic: str | None = None  # the last open question, carried into follow-ups
    topic_year: int | None = None  # the year that question was searched with
    history: list[Exchange] = field(default_factory=list)
    last: Answer | None = None
    last_query: Resolution | None = None

    def reset(self) -> None:
        self.listing, self.focus, self.history = [], [], []
        self.topic = self.topic_year = self.last = self.last_query = None

    def conversation_ids(self) -> set[str]:
        ids = set(self.listing) | set(self.focus)
        for exchange in self.history:
            ids.update(pid for pid, _ in exchange.papers)
        return ids


@dataclass(frozen=True)
class Resolution:
    """A question made standalone: what to search, restricted to which papers and which year."""

    query: str
    paper_ids: tuple[str, ...] = ()
    year: int | None = None
    # The user named papers but asked nothing new ("tell me more about the second one", "compare them"):
    # answer about them on the conversation's topic, without the evidence threshold (they chose the papers).
    about_papers: bool = False
    opens_topic: bool = True  # an open search: its answer becomes the new listing and topic

    def to_query(self) -> Query:
        """The standalone question, parsed once: what retrieval and the answer use."""
        return parse(self.query, year=self.year)

    def describe(self) -> str:
        """The dimmed line that shows the user what was understood (the `query` object of `ask --json`)."""
        return describe_query(self.to_query(), self.paper_ids)


def describe_query(query: Query, paper_ids: Sequence[str] = ()) -> str:
    """ "↳ searching: unlearning · year 2025 · ICLR 2025 · papers 001-02": the parsed query, as a user reads it."""
    parts = [f"↳ searching: {query.search}"]
    if query.year is not None:
        parts.append(f"year {query.year}")
    if query.venue:
        parts.append(query.venue)
    if paper_ids:
        parts.append(f"papers {', '.join(paper_ids)}")
    return " · ".join(parts)


# -- follow-up resolution (pure) ---------------------------------------------------------------------

_BRACKETS = re.compile(r"\[([^\[\]]{1,300})\]")
_ID_SPLIT = re.compile(r"\s*[,;]\s*")
_TOKEN = re.compile(r"[A-Za-z0-9][\w.:/\-]*")
_SEED_ID = re.compile(r"^\d{3}-\d{2}$")
_YEAR = re.compile(r"(?<![\w\-])((?:19|20)\d\d)(?![\w\-])")
_ANY_YEAR = re.compile(
    r"\b(?:any|all|every|other)\s+years?\b|\bregardless of (?:the )?years?\b|\bno year\b|\bwhichever year\b", re.I
)

_ORDINAL_WORDS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "last": -1,
}
_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_ORD = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|\d{1,2}(?:st|nd|rd|th))"
_NOUN = r"(?:ones?|papers?|results?|items?|entr(?:y|ies)|sources?|works?|articles?|studies|study)"
# "the first time", "the last year": an ordinal that is not about the list.
_NOT_LIST = r"(?!\s+(?:to|time|times|answer|question|year|years|step|steps|stage|author|authors|layer|layers|order)\b)"
_ORDINAL_RANGE = re.compile(
    rf"\b(?:the\s+)?(?:first|top)\s+(two|three|four|five|six|seven|eight|nine|ten|\d{{1,2}})\b(?:\s+{_NOUN}\b)?",
    re.I,
)
_ORDINAL = re.compile(
    rf"(?:\b(?:the|and|or)\s+|,\s*)({_ORD})\b{_NOT_LIST}(?:\s+{_NOUN}\b)?|\b({_ORD})\s+{_NOUN}\b", re.I
)
_ORDINAL_NUMBER = re.compile(r"(?:#\s*|\b(?:number|no\.|paper|result|item|source)\s+)(\d{1,2})\b", re.I)
_REF_NOUN = r"(?:paper|one|work|method|approach|model|study|article|abstract|framework|technique|algorithm|system)"
_SINGULAR = re.compile(
    rf"\b(?:it|its|itself)\b|\b(?:this|that|the same|said)\s+{_REF_NOUN}\b|\bthe paper\b",
    re.I,
)
_PLURAL = re.compile(
    r"\b(?:they|them|their|theirs|themselves|both|each of them|all of them)\b"
    r"|\b(?:these|those|the)\s+(?:papers|ones|works|methods|approaches|models|studies|two|three|four)\b",
    re.I,
)
# "which papers study X?" starts a new search even if it says "they" or "their".
_CONTINUATION = re.compile(
    r"^\s*(?:and|also|but|so|then|now|ok(?:ay)?|what about|how about|same for|same|only|just|instead)\b[\s,]*", re.I
)
_COMPARE = re.compile(
    r"\b(?:compare[sd]?|comparing|comparison|contrast|differ(?:s|ence|ences)?|versus|vs\.?|similarit(?:y|ies)"
    r"|in common)\b",
    re.I,
)
_WORD = re.compile(r"[a-z][a-z0-9\-]*")
# Words that carry no topic of their own: question scaffolding, references, fillers.
_FILLER = frozenset(
    """
    a about above after again all also an and another any are as at be been being both but by can could
    did do does doing each either else for from further go had has have how i if in into is it its itself
    just least less let like many may me might more most much must my neither no nor now of on one ones
    only onto or other our over own please same say says said shall should so some such than that the their
    them themselves then there these they this those to too under us very was we were what when where which
    while who whom whose why will with would you your
    tell explain describe elaborate detail details talk continue summarize summarise summary overview show
    give list know want instead okay ok
    compare compared compares comparing comparison contrast differ differs difference differences versus vs
    similar similarity similarities common relate related relation
    paper papers work works study studies article articles result results item items entry entries source
    sources abstract abstracts method methods approach approaches model models framework technique algorithm
    system propose proposes proposed use uses used using do year years number top last
    first second third fourth fifth sixth seventh eighth ninth tenth two three four five six seven eight nine ten
    """.split()
)


def _overlaps(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    return any(start < b and a < end for a, b in spans)


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def looks_like_id(token: str) -> bool:
    """A token that could be a paper id: it has a digit and is not a bare year or number."""
    return any(c.isdigit() for c in token) and not token.isdigit()


def candidate_ids(question: str) -> list[str]:
    """Tokens of the question that might be paper ids (bracketed, or bare with a digit): checked in the store."""
    found: list[str] = []
    for match in _BRACKETS.finditer(question):
        found += [p for p in _ID_SPLIT.split(match.group(1).strip()) if p]
    for match in _TOKEN.finditer(question):
        token = match.group(0).rstrip(".:/-")
        if looks_like_id(token):
            found.append(token)
    return list(dict.fromkeys(found))


def find_ids(question: str, known: Collection[str]) -> list[tuple[int, int, str]]:
    """Paper ids in the question, as (start, end, id): "[001-02]", "[001-02, 003-04]" or a bare "001-02".

    A bracketed id or a seed-style id that is not `known` is an error, so a typo is not silently ignored.
    """
    found: list[tuple[int, int, str]] = []
    for match in _BRACKETS.finditer(question):
        for part in _ID_SPLIT.split(match.group(1).strip()):
            if part in known:
                found.append((match.start(), match.end(), part))
            elif looks_like_id(part):
                raise ResolveError(f"no paper with id {part!r} in the store")
    taken = [(a, b) for a, b, _ in found]
    for match in _TOKEN.finditer(question):
        token = match.group(0).rstrip(".:/-")
        end = match.start() + len(token)
        if _overlaps(match.start(), end, taken):
            continue
        if token in known:
            found.append((match.start(), end, token))
        elif _SEED_ID.match(token):
            raise ResolveError(f"no paper with id {token!r} in the store")
    return sorted(found, key=lambda hit: hit[0])


def _ordinal_value(word: str) -> int:
    word = word.lower()
    return _ORDINAL_WORDS[word] if word in _ORDINAL_WORDS else int(re.sub(r"\D", "", word))


def find_ordinals(question: str) -> list[tuple[int, int, list[int]]]:
    """Ordinal references as (start, end, positions): 1-based positions, -1 for "the last one"."""
    found: list[tuple[int, int, list[int]]] = []
    for match in _ORDINAL_RANGE.finditer(question):
        count = match.group(1).lower()
        n = _COUNT_WORDS[count] if count in _COUNT_WORDS else int(count)
        found.append((match.start(), match.end(), list(range(1, n + 1))))
    spans = [(a, b) for a, b, _ in found]
    for pattern in (_ORDINAL, _ORDINAL_NUMBER):
        for match in pattern.finditer(question):
            if _overlaps(match.start(), match.end(), spans):
                continue
            word = next(g for g in match.groups() if g)
            found.append((match.start(), match.end(), [_ordinal_value(word)]))
            spans.append((match.start(), match.end()))
    return sorted(found, key=lambda hit: hit[0])


def _ordinal_name(n: int) -> str:
    names = {v: k for k, v in _ORDINAL_WORDS.items()}
    return names.get(n, f"#{n}")


def find_year(question: str) -> tuple[int | None, bool, list[tuple[int, int]]]:
    """(the year asked for, whether "any year" was asked for, where those words are)."""
    spans: list[tuple[int, int]] = []
    year = None
    for match in _YEAR.finditer(question):
        year = int(match.group(1))
        spans.append(match.span())
    any_year = False
    for match in _ANY_YEAR.finditer(question):
        any_year = True
        spans.append(match.span())
    return (None if any_year else year), any_year, spans


def content_words(text: str) -> list[str]:
    """The words that say what is asked about (not who or which): "what datasets does it use?" → datasets."""
    return [w for w in _WORD.findall(text.lower()) if w not in _FILLER and len(w) > 1]


def mentions(words: Iterable[str], text: str) -> bool:
    """Whether `text` uses any of `words` (or its singular): the paper itself speaks to the question."""
    used = set(_WORD.findall(text.lower()))
    return any(w in used or (w.endswith("s") and w[:-1] in used) for w in words)


def resolve(question: str, state: ChatState, known_ids: Collection[str] = (), named: Sequence[str] = ()) -> Resolution:
    """The standalone query for `question` in the conversation `state`, by deterministic rules.

    `known_ids` are ids that exist (so a bare "001-02" is a reference); `named` are papers the question
    names by a word only they use ("PURGE"), found in the store by the caller.
    """
    text = " ".join(question.split())
    refs: list[tuple[int, str]] = []
    spans: list[tuple[int, int]] = []

    for start, end, pid in find_ids(text, set(known_ids) | state.conversation_ids()):
        refs.append((start, pid))
        spans.append((start, end))
    for start, end, positions in find_ordinals(_mask(text, spans)):
        if not state.listing:
            raise ResolveError("there is no list to count in yet: ask a question first")
        for n in positions:
            if n > len(state.listing):
                listed = len(state.listing)
                raise ResolveError(
                    f"the last list has {listed} paper{'s' if listed != 1 else ''}: there is no {_ordinal_name(n)} one"
                )
            refs.append((start, state.listing[n - 1 if n > 0 else -1]))
        spans.append((start, end))

    listing_question = asks_for_list(text)
    if not listing_question and (state.focus or state.listing):
        masked = _mask(text, spans)
        for match in _PLURAL.finditer(masked):
            # "them" after drilling into one paper means the papers of the list, not the one in focus.
            target = state.focus if len(state.focus) > 1 else state.listing or state.focus
            refs += [(match.start(), pid) for pid in target]
            spans.append(match.span())
        masked = _mask(text, spans)
        for match in _SINGULAR.finditer(masked):
            refs += [(match.start(), pid) for pid in (state.focus or state.listing[:1])]
            spans.append(match.span())

    year, any_year, year_spans = find_year(_mask(text, spans))
    residual = _mask(text, spans + year_spans)
    content = content_words(residual)
    ids = list(dict.fromkeys(pid for _, pid in sorted(refs, key=lambda ref: ref[0])))
    if not ids and named and not listing_question:
        ids = list(dict.fromkeys(named))
    topic = state.topic

    if not ids and _COMPARE.search(text) and not content and (state.focus or state.listing):
        ids = state.focus if len(state.focus) > 1 else state.listing
    if not ids and not content and year is None and not any_year and (state.focus or state.listing):
        ids = state.focus or state.listing[:1]  # "more?", "why?": about the paper under discussion

    if ids:
        if content:
            # Standalone wording for the search and the answer; the papers travel as a filter.
            placeholder = "this paper" if len(ids) == 1 else "these papers"
            query = text
            for start, end in sorted(spans, reverse=True):
                possessive = ("'s" if len(ids) == 1 else "'") if text[start:end].lower() in ("its", "their") else ""
                query = query[:start] + placeholder + possessive + query[end:]
            query = re.sub(rf"({placeholder})(?:\s*(?:and|,|or)\s*{placeholder})+", r"\1", query)
            return Resolution(" ".join(query.split()), tuple(ids), None, about_papers=False, opens_topic=False)
        # The conversation's topic, if these papers came up under it; otherwise what the paper is about.
        on_topic = topic and set(ids) <= set(state.listing) | set(state.focus)
        query = search_text(topic) if on_topic else GENERIC_QUERY
        return Resolution(query, tuple(ids), None, about_papers=True, opens_topic=False)

    if (year is not None or any_year) and not content and topic:
        return Resolution(topic, (), year, opens_topic=True)  # "and in 2025?": the same question, narrowed

    continuation = _CONTINUATION.match(text)
    if continuation and topic and content:
        # "what about diffusion?": the previous question about a new subject, with its filters.
        core = " ".join(_mask(text, year_spans)[continuation.end() :].strip(" ?.!").split()) or text
        previous_core = search_text(topic)
        query = topic.replace(previous_core, core) if previous_core != topic and previous_core in topic else core
        return Resolution(query, (), year if year is not None or any_year else state.topic_year, opens_topic=True)
    return Resolution(text, (), year if year is not None or any_year else state.year, opens_topic=True)


def remember(state: ChatState, question: str, resolution: Resolution, answer: Answer) -> None:
    """Fold an answered question into the conversation."""
    shown = list(answer.citations) or [s.id for s in answer.sources]
    if resolution.opens_topic:
        state.topic, state.topic_year = resolution.query, resolution.year
        state.listing = shown
        state.focus = list(answer.citations)
    else:
        # A drill-down keeps the list, so "the third one" still counts in the list the user saw.
        state.focus = list(answer.citations) or list(resolution.paper_ids)
        if not state.listing:
            state.listing = shown
    labels = {s.id: s.label for s in answer.sources}
    state.history.append(Exchange(question, answer.answer, [(pid, labels.get(pid, "")) for pid in shown]))
    del state.history[:-HISTORY_TURNS]
    state.last, state.last_query = answer, resolution


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


def parse_condensed(text: str) -> str | None:
    """The rewritten question from an LLM's reply, or None when the reply is not usable."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    line = re.sub(r"^(?:standalone question|rewritten question|question)\s*:\s*", "", lines[0], flags=re.I)
    line = line.strip().strip("\"'`“”").strip()
    if not line or len(line) > MAX_CONDENSED_CHARS or line.startswith("INSUFFICIENT_EVIDENCE"):
        return None
    return line


def apply_condensed(resolution: Resolution, condensed: str, state: ChatState) -> Resolution:
    """Use the LLM's wording; the rules' papers and year stand, but ids it resolved from the conversation count."""
    if resolution.paper_ids:
        return replace(resolution, query=condensed)
    known = state.conversation_ids()
    named = [pid for pid in candidate_ids(condensed) if pid in known]
    if named:
        return Resolution(condensed, tuple(dict.fromkeys(named)), None, about_papers=False, opens_topic=False)
    return replace(resolution, query=condensed)


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
            elif _YEAR.fullmatch(arg):
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
