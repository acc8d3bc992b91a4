"""Follow-ups in `rag chat`, as pure functions over the conversation: no terminal, no store, no LLM.

The conversation is a plain dataclass (`ChatState`). Turning a follow-up ("the second one", "what datasets
does it use?", "and in 2025?", "but not the multi-view ones", "compare them") into a standalone query is done by
`resolve`, and `remember` folds an answer back in, so the rules are unit-testable without a terminal. With an LLM
backend the REPL
(`rag/chat.py`) also has the question rewritten through the condense prompt; `parse_condensed` and
`apply_condensed` take that reply, the rules still decide which papers and which year are meant.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .errors import InputError
from .lexicon import (
    ANY_YEAR,
    COMPARISON,
    CONDENSED_LABEL,
    CONTINUATION,
    COUNT_WORDS,
    FOLLOWUP_FILLER,
    FUNCTION_WORDS,
    ORDINAL,
    ORDINAL_NUMBER,
    ORDINAL_RANGE,
    ORDINAL_WORDS,
    PLURAL_REFERENCE,
    SINGULAR_REFERENCE,
)
from .query import FOCUS_MANY, FOCUS_ONE, Query, asks_for_list, exclusion, parse, search_text, year_range
from .terms import keyword_pair

if TYPE_CHECKING:
    from .types import Answer

# What "tell me more about X" searches when the conversation has no topic yet.
GENERIC_QUERY = "main contribution and results"
HISTORY_TURNS = 3  # exchanges remembered, and shown to the condense prompt
MAX_CONDENSED_CHARS = 500


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
    area: str | None = None  # the sticky filters from /area and /status (or --area, --status), for new questions
    status: str | None = None
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
    """ "↳ searching: unlearning · year 2025 · ICLR 2025 · area learning theory · accepted · papers 001-02": the
    parsed query, as a user reads it."""
    parts = [f"↳ searching: {query.search}"]
    if query.year is not None:
        parts.append(f"year {query.year}")
    if query.since is not None:
        parts.append(f"years {query.since}-{query.until}" if query.until is not None else f"from {query.since}")
    if query.venue:
        parts.append(query.venue)
    if query.area:
        parts.append(f"area {query.area}")
    if query.status:
        parts.append(query.status)
    if paper_ids:
        parts.append(f"papers {', '.join(paper_ids)}")
    return " · ".join(parts)


# -- follow-up resolution (pure) ---------------------------------------------------------------------

# Formats only (ids, tokens, a year, words); the words a follow-up is read by (ordinals, pronouns, "any year",
# "what about", "compare", the filler words) are in rag.lexicon.
_BRACKETS = re.compile(r"\[([^\[\]]{1,300})\]")
_ID_SPLIT = re.compile(r"\s*[,;]\s*")
_TOKEN = re.compile(r"[A-Za-z0-9][\w.:/\-]*")
_SEED_ID = re.compile(r"^\d{3}-\d{2}$")
_YEAR = re.compile(r"(?<![\w\-])((?:19|20)\d\d)(?![\w\-])")
_WORD = re.compile(r"[a-z][a-z0-9\-]*")


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
    return ORDINAL_WORDS[word] if word in ORDINAL_WORDS else int(re.sub(r"\D", "", word))


def find_ordinals(question: str) -> list[tuple[int, int, list[int]]]:
    """Ordinal references as (start, end, positions): 1-based positions, -1 for "the last one"."""
    found: list[tuple[int, int, list[int]]] = []
    for match in ORDINAL_RANGE.finditer(question):
        count = match.group(1).lower()
        n = COUNT_WORDS[count] if count in COUNT_WORDS else int(count)
        found.append((match.start(), match.end(), list(range(1, n + 1))))
    spans = [(a, b) for a, b, _ in found]
    for pattern in (ORDINAL, ORDINAL_NUMBER):
        for match in pattern.finditer(question):
            if _overlaps(match.start(), match.end(), spans):
                continue
            word = next(g for g in match.groups() if g)
            found.append((match.start(), match.end(), [_ordinal_value(word)]))
            spans.append((match.start(), match.end()))
    return sorted(found, key=lambda hit: hit[0])


def _ordinal_name(n: int) -> str:
    names = {v: k for k, v in ORDINAL_WORDS.items()}
    return names.get(n, f"#{n}")


def find_year(question: str) -> tuple[int | None, bool, list[tuple[int, int]]]:
    """(the year asked for, whether "any year" was asked for, where those words are). Years joined ("2025 or
    2026": rag.query.year_range) are no one year: they lift the conversation's year as "any year" does, and the
    question's own text, which keeps them, is parsed as a range."""
    joined = year_range(question)
    spans: list[tuple[int, int]] = [joined[1]] if joined else []
    year = None
    for match in _YEAR.finditer(question):
        if joined and joined[1][0] <= match.start() < joined[1][1]:
            continue
        year = int(match.group(1))
        spans.append(match.span())
    any_year = joined is not None
    for match in ANY_YEAR.finditer(question):
        any_year = True
        spans.append(match.span())
    return (None if any_year else year), any_year, spans


def _without_years(question: str) -> str:
    """`question` without the joined years a follow-up added to it ("… unlearning? from 2025 or 2026")."""
    joined = year_range(question)
    return " ".join((question[: joined[1][0]] + question[joined[1][1] :]).split()) if joined else question


def _no_dangling_grammar(text: str) -> str:
    """`text` without the grammar words its removed years leave at its end ("unlearning from ?" → "unlearning")."""
    words = text.rstrip(" ?.!,;:").split()
    while len(words) > 1 and words[-1].lower() in FUNCTION_WORDS:
        words.pop()
    return " ".join(words)


def is_year(text: str) -> bool:
    """Whether `text` is just a year, as `/year 2025` takes it."""
    return _YEAR.fullmatch(text) is not None


def content_words(text: str) -> list[str]:
    """The words that say what is asked about (not who or which): "what datasets does it use?" → datasets."""
    return [w for w in _WORD.findall(text.lower()) if w not in FOLLOWUP_FILLER and len(w) > 1]


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
        for match in PLURAL_REFERENCE.finditer(masked):
            # "them" after drilling into one paper means the papers of the list, not the one in focus.
            target = state.focus if len(state.focus) > 1 else state.listing or state.focus
            refs += [(match.start(), pid) for pid in target]
            spans.append(match.span())
        masked = _mask(text, spans)
        for match in SINGULAR_REFERENCE.finditer(masked):
            refs += [(match.start(), pid) for pid in (state.focus or state.listing[:1])]
            spans.append(match.span())

    year, any_year, year_spans = find_year(_mask(text, spans))
    residual = _mask(text, spans + year_spans)
    content = content_words(residual)
    ids = list(dict.fromkeys(pid for _, pid in sorted(refs, key=lambda ref: ref[0])))
    if not ids and named and not listing_question:
        ids = list(dict.fromkeys(named))
    topic = state.topic

    if not ids and COMPARISON.search(text) and not content and (state.focus or state.listing):
        ids = state.focus if len(state.focus) > 1 else state.listing
    if not ids and not content and year is None and not any_year and (state.focus or state.listing):
        ids = state.focus or state.listing[:1]  # "more?", "why?": about the paper under discussion

    if ids:
        if content:
            # Standalone wording for the search and the answer; the papers travel as a filter.
            placeholder = FOCUS_ONE if len(ids) == 1 else FOCUS_MANY
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
        # "and in 2025?": the same question, narrowed; "and 2025 or 2026?": the same question over those years (read
        # from its words, which the topic then keeps); "any year?" lifts both.
        joined = year_range(text)
        topic = _without_years(topic)
        if joined:
            return Resolution(f"{topic.rstrip(' ?.!')} {text[slice(*joined[1])]}", (), None, opens_topic=True)
        return Resolution(topic, (), year, opens_topic=True)

    kept, left_out = exclusion(text, keyword_pair)
    if left_out is not None and topic and not content_words(kept):
        # "but not the multi-view ones": the same question, leaving those out (the pipeline reads the clause).
        return Resolution(f"{topic.rstrip(' ?.!')}, {text.strip(' ?.!')}", (), state.topic_year, opens_topic=True)

    continuation = CONTINUATION.match(text)
    if continuation and topic and content:
        # "what about diffusion?": the previous question about a new subject, with its filters. Joined years live in
        # the topic's words (not `topic_year`): they are carried over unless the follow-up names its own.
        core = " ".join(_mask(text, year_spans)[continuation.end() :].strip(" ?.!").split()) or text
        core = _no_dangling_grammar(core) if year_spans else core  # "diffusion in 2026" → "diffusion"
        joined = year_range(topic)
        previous = _no_dangling_grammar(_without_years(topic).strip(" ,;:")) if joined else topic
        previous_core = search_text(previous)
        replaceable = previous_core != previous and previous_core in previous
        query = previous.replace(previous_core, core) if replaceable else core
        if joined and year is None and not any_year:
            query = f"{query.rstrip(' ?.!')} {topic[slice(*joined[1])]}"
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


# -- the LLM's rewrite --------------------------------------------------------------------------------


def parse_condensed(text: str) -> str | None:
    """The rewritten question from an LLM's reply, or None when the reply is not usable."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    line = CONDENSED_LABEL.sub("", lines[0])
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
