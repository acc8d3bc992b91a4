"""What a question asks, decided once: `parse(question) -> Query`. Every later stage reads the `Query`.

The search text (scaffolding such as "which papers study" removed), the year and venue it restricts to (written
in the question or given as flags), whether it asks for a list of papers, its content terms and the coined names
in it. Retrieval, the backends, abstention and the chat's follow-up rules all take these from here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache

from .errors import InputError
from .lexicon import (
    DECISION_PHRASE,
    DEFINITION_QUESTION,
    EXCLUSION,
    HOW_MANY,
    LEAD_IN,
    LIST_QUESTION,
    ONE_PAPER_ASKED,
    PAPER_REQUEST,
    PAPERS_NOUN,
    PLACE_PREPOSITION,
    PRESENTATION,
    QUESTION_OPENER,
    REQUEST_PHRASES,
    REQUEST_WORDS_NOT_FIRST,
    REQUEST_WORDS_NOT_LAST,
    SCAFFOLD,
    VENUE_YEAR,
    VENUES,
    WORK_IN_GENERAL,
    YEAR_PHRASE,
    YEAR_RANGE,
    YEAR_SINCE,
)
from .text import bm25_stopwords, content_words

MAX_QUESTION_CHARS = 4000
# What a follow-up's standalone wording calls the papers in focus ("and a link to it?" → "and a link to this
# paper?", the papers travelling as a filter): rag.followups writes it, rag.record reads it as the paper asked of.
FOCUS_ONE, FOCUS_MANY = "this paper", "these papers"


def clean_question(question: str) -> str:
    """The question with control characters and surrounding space removed; empty is an error."""
    text = "".join(c if c.isprintable() else " " for c in question)
    text = " ".join(text.split())
    if not text:
        raise InputError("the question is empty")
    return text[:MAX_QUESTION_CHARS]


# -- the search text ---------------------------------------------------------------------------------------

# The words and patterns read here (the request around a question, its scaffolding, the year and venue phrases,
# the list, count and definition cues) are in rag.lexicon, each with what it is for.
_LONGEST_PHRASE = max(len(phrase.split()) for phrase in REQUEST_PHRASES)
_TOKEN = re.compile(r"[\w'-]+")


def _request_words_trimmed(text: str) -> str:
    """`text` less the request words and phrases at either end, longest first."""
    tokens = list(_TOKEN.finditer(text.replace("’", "'")))
    words = [t.group(0).lower() for t in tokens]

    def phrase_at(i: int, forwards: bool) -> int:
        """The length of the longest request phrase starting (forwards) or ending (backwards) at word i; 0: none."""
        for n in range(_LONGEST_PHRASE, 0, -1):
            span = words[i : i + n] if forwards else words[max(0, i - n + 1) : i + 1]
            if len(span) == n and " ".join(span) in REQUEST_PHRASES:
                return n
        return 0

    first = 0
    while first < len(words) and (n := phrase_at(first, True)):
        if n == 1 and words[first] in REQUEST_WORDS_NOT_FIRST:
            break
        first += n
    last = len(words) - 1
    while last >= first and (n := phrase_at(last, False)):
        # "kernel methods" keeps its last word; "the existing methods" does not
        if n == 1 and words[last] in REQUEST_WORDS_NOT_LAST and not (last > first and phrase_at(last - 1, False)):
            break
        last -= n
    if last < first:
        return ""
    return text[tokens[first].start() : tokens[last].end()]


def _scaffolding_removed(question: str) -> str:
    """The question without the request and the scaffolding around its topic."""
    text = LEAD_IN.sub("", question, count=1)
    scaffold = SCAFFOLD.match(text)
    if scaffold and (scaffold.group("noun") or (scaffold.group("work") and scaffold.group("verb"))):
        text = text[scaffold.end() :]
    if PAPER_REQUEST.search(question):
        trimmed = _request_words_trimmed(text)
        text = trimmed if len(trimmed) >= 3 else text
    return text.strip(" ?.!,;:")


def search_text(question: str) -> str:
    """The part of a question worth embedding: the request and scaffolding around the topic removed ("could you
    find papers on X?", "has anyone studied X", "X papers pls" → "X")."""
    stripped = _scaffolding_removed(question)
    return stripped if len(stripped) >= 3 else question


def exclusion(text: str, one_term: Callable[[str, str], bool] = lambda cue, word: False) -> tuple[str, str | None]:
    """`text` without its clause leaving papers out, and what that clause leaves out, its request words trimmed:
    "clustering papers but NOT the multi-view ones pls" → ("clustering papers", "multi-view"); (`text`, None)
    when it leaves nothing out by name: a role ("not papers that just use X"), a year ("skip the 2025 ones", which
    the year phrase reads). `one_term(cue, word)`: whether a cue and the word after it are one term of the field
    ("skip connections"), no clause. The pipeline reads it (`Pipeline.with_exclusion`)."""
    for match in EXCLUSION.finditer(text):
        excluded = match.group("excluded") or ""
        cue_words, excluded_words = match.group(0)[: match.start("excluded") - match.start()].split(), excluded.split()
        if excluded and cue_words and excluded_words and one_term(cue_words[-1], excluded_words[0]):
            continue
        left_out = _request_words_trimmed(excluded or match.group("counted") or "")
        if not any(not word.isdigit() for word in content_words(left_out)):
            return text, None
        rest = text[match.end() :]
        if match.group(0).lstrip().startswith("(") and rest.lstrip().startswith(")"):  # "X (not Y)": both go
            rest = rest.lstrip()[1:]
        kept = " ".join(f"{text[: match.start()]} {rest}".split()).replace(" ,", ",")
        return kept.strip(" ,;:-."), left_out
    return text, None


# -- year and venue ----------------------------------------------------------------------------------------


def _year_of(match: re.Match, group: int) -> int:
    """The year in `group`, or the two-digit shorthand in the group after it ('26 → 2026)."""
    return int(match.group(group)) if match.group(group) else 2000 + int(match.group(group + 1))


def normalize_venue(venue: str) -> str:
    """A venue as the stores write it: "iclr 2025", "ICLR'2025", "ICLR'25" → "ICLR 2025"; anything else as
    given, trimmed."""
    match = VENUE_YEAR.fullmatch(venue.strip())
    if match:
        return f"{VENUES[match.group(1).lower()]} {_year_of(match, 2)}"
    return " ".join(venue.split())


@dataclass(frozen=True)
class QueryFilters:
    """A question with its restrictions taken out: what to search for, and where."""

    text: str
    year: int | None = None
    venue: str | None = None
    since: int | None = None  # the first year a bound admits ("since 2023", "2023 onwards", "after 2022")
    until: int | None = None  # the last year a range admits ("2025 or 2026", "2024-2026")
    venue_named: tuple[str, ...] = ()  # venues named with no year ("ICLR or NeurIPS papers on X"): each year of each


def parse_filters(question: str) -> QueryFilters:
    """Year and venue restrictions written in the question itself, removed from the search text: a venue and
    year, a lower bound on the year, or one year; two years joined ("ICLR 2025/2026", "2025 or 2026") are the
    years from the first to the last, of any venue (a venue's name and one year name a single venue)."""
    year: int | None = None
    venue: str | None = None
    since: int | None = None
    until: int | None = None
    text = question
    joined = year_range(text)
    match = VENUE_YEAR.search(text)
    if joined:
        (since, until), span = joined
        if since == until:
            year, since, until = since, None, None
        text = text[: span[0]] + text[span[1] :]
    elif match:
        year = _year_of(match, 2)
        venue = f"{VENUES[match.group(1).lower()]} {year}"
        text = _without_venue(text, match.start(), match.end())
    elif bound := next((m for m in YEAR_SINCE.finditer(text) if not _follows_a_name(text, m)), None):
        first, inclusive, strict = bound.groups()
        since = int(first or inclusive) if not strict else int(strict) + 1  # "after 2023" admits 2024 on
        text = text[: bound.start()] + text[bound.end() :]
    else:
        match = next((m for m in YEAR_PHRASE.finditer(text) if not _follows_a_name(text, m)), None)
        if match:
            year = int(next(group for group in match.groups() if group))
            text = text[: match.start()] + text[match.end() :]
    venues_named: list[str] = []  # "ICLR or NeurIPS papers on X": either
    while named := _venue_alone(text):  # every mention: "ICLR" is no method's name either
        if venue is None and named[0] not in venues_named:
            venues_named.append(named[0])
        text = named[1]
    return QueryFilters(" ".join(text.split()), year, venue, since, until, tuple(venues_named))


def _venue_alone(text: str) -> tuple[str, str] | None:
    """The first venue `text` names without a year, as the stores write it, and `text` without it ("what's out
    there on X at iclr" → ("ICLR", "what's out there on X")), the preposition tying it to the papers with it. None:
    no venue named."""
    for token in _TOKEN.finditer(text):
        word = token.group(0).lower().removesuffix("'s").removesuffix("’s")
        if word in VENUES:
            return VENUES[word], _without_venue(text, token.start(), token.end())
    return None


def _without_venue(text: str, start: int, end: int) -> str:
    """`text` without the venue written at [start, end) and the preposition tying it to the papers, unless the
    word after it names them: "published at ICLR on X" → "published on X", "papers in ICLR papers" keeps "in"."""
    before = list(_TOKEN.finditer(text[:start]))
    after = _TOKEN.search(text, end)
    names_papers = after is not None and re.fullmatch(PAPERS_NOUN, after.group(0), re.I) is not None
    if before and re.fullmatch(PLACE_PREPOSITION, before[-1].group(0), re.I) and not names_papers:
        start = before[-1].start()
    return text[:start] + text[end:]


_NAME_BEFORE = re.compile(r"([\w\-]+)\s*$")


def year_range(text: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """((first, last) year, where they are written) of the first years joined in `text` that restrict the papers
    (`lexicon.YEAR_RANGE`): joined with a venue's name or after "between", or where their last year alone would be
    a year phrase ("papers from 2025 or 2026", "diffusion 2024-2026"). Not years of a name ("ImageNet 2012 and
    2014"), a year and month ("2024-05"), or numbers ("the 2020-2021 pandemic", "2048 or 2049 dims")."""
    for match in YEAR_RANGE.finditer(text):
        written = match.group()
        years = _joined_years(written)
        if years is None:
            continue  # "2024-05", "2023/12": a month
        start = match.start()
        if not (VENUE_YEAR.search(written) or match.group(1)):
            if _name_before(text, match):
                continue
            alone = text[:start] + str(years[-1]) + text[match.end() :]
            phrase = next((m for m in YEAR_PHRASE.finditer(alone) if m.start() <= start < m.end()), None)
            if phrase is None:
                continue
            start = phrase.start()  # "from 2023, 2024 or 2025": the phrase's words go with the years
        return (min(years), max(years)), (start, match.end())
    return None


def _joined_years(written: str) -> list[int] | None:
    """The years of a YEAR_RANGE match, a shorthand one in the century of the year before it ("ICLR'25/'26",
    "2025/26"); None when a shorthand after a year is not later than it: a month ("2024-05")."""
    years: list[int] = []
    for number in re.findall(r"(?<!\d)\d{2,4}(?!\d)", written):
        if len(number) == 4:
            years.append(int(number))
            continue
        century = years[-1] - years[-1] % 100 if years else 2000
        if years and century + int(number) <= years[-1]:
            return None
        years.append(century + int(number))
    return years


def _follows_a_name(text: str, match: re.Match[str]) -> bool:
    """A bare year after a name with inner capitals or digits is part of it: "ImageNet 2012", "WMT 2014"."""
    if not match.group().strip().isdigit():
        return False  # "in 2014", "2014 only": a phrase, whatever precedes it
    return _name_before(text, match)


def _name_before(text: str, match: re.Match[str]) -> bool:
    """Whether the word before `match` is a name with inner capitals or digits ("ImageNet 2012 and 2014")."""
    before = _NAME_BEFORE.search(text[: match.start()])
    word = before.group(1) if before else ""
    return any(ch.isdigit() for ch in word) or any(ch.isupper() for ch in word[1:])


# -- list or one -------------------------------------------------------------------------------------------


def asks_for_list(question: str) -> bool:
    """Whether the answer is a list of papers (one line each) rather than what one paper says."""
    # A lead-in ("hey, can you …") and an "X papers" tail rule were read here once: on the 390 questions of
    # questions, heldout, dev2, dev3 and the phrasing sets they changed no answer, so they are gone.
    return bool(
        LIST_QUESTION.search(question)
        or WORK_IN_GENERAL.search(question)
        or (PAPER_REQUEST.search(question) and not ONE_PAPER_ASKED.search(question))
    )


# What the rules read in a question, as evidence for the list reader (rag.policy.ListReader), which weighs them with
# the question's vector instead of letting them decide: the request words, "what is X?" asking for the paper
# defining a name, and a question word opening it (a topic is typed bare).
LIST_EVIDENCE = (
    "list_question",
    "work_in_general",
    "paper_request",
    "one_paper_asked",
    "defines_name",
    "question_opener",
)


def list_evidence(question: str) -> tuple[float, ...]:
    """`LIST_EVIDENCE` of `question` (1.0 or 0.0 each), read where `asks_for_list` reads: after the year and venue."""
    text = parse_filters(clean_question(question)).text
    rules = (LIST_QUESTION, WORK_IN_GENERAL, PAPER_REQUEST, ONE_PAPER_ASKED)
    read = [bool(rule.search(text)) for rule in rules]
    read += [defined_name(text) is not None, bool(QUESTION_OPENER.match(text))]
    return tuple(float(r) for r in read)


TOPIC_WORDS = 8  # a topic named in this many words or fewer is a topic; a longer phrase describes a paper


def names_a_topic(question: str, search: str, wants_list: bool, topic: str | None = None) -> bool:
    """Whether the question names a topic (a list question, or a bare short phrase) rather than asking about a
    detail ("which paper says to cite X?": its scaffolding removed, the rest is no topic) or describing one paper
    in its own words. `topic` is the words that name what it is about: the search text when parsed, and for a
    list request in the pipeline the part of it the corpus reads as topic words (`reads_as_topic`,
    rag.terms.topic_words), so the words a request wraps a topic in ("… I'm writing a grant proposal and need to
    show I know the prior work on X") do not make it a description."""
    if wants_list and LIST_QUESTION.search(question) and topic is None:
        return True  # parsed, "which papers study X" is a topic list however long X is; the pipeline counts its topic
    # A topic that runs past 8 topic words describes what it wants ("learning classifiers when the annotations are
    # imprecise - noisy, ambiguous, or only indirectly informative labels"): no part of it is one every paper holds.
    if len((search if topic is None else topic).split()) > TOPIC_WORDS:
        return False  # "is there work on replacing plain adding-up … with a learned power-mean-like average": a paper
    return wants_list or (not QUESTION_OPENER.match(question) and not QUESTION_OPENER.match(search))


def reads_as_topic(query: Query, topic: str) -> bool:
    """`names_a_topic` for a parsed query whose topic words are `topic` (a part of its search text). A list request
    is read by its topic words, short inside a long request or long however it opens ("which papers …"); a question
    about one paper keeps its whole text, as a paper described in other words holds few topic words ("scrubbing
    banned facts out of a released chatbot with an rl objective …" would read as the topic "rl"; on the dev sets
    that refused 5 right answers)."""
    question = LEAD_IN.sub("", parse_filters(query.text).text, count=1)
    return names_a_topic(question, query.search, query.wants_list, topic if query.wants_list else None)


# -- what a count question counts --------------------------------------------------------------------------


# What a paper count counts: the store's own items ("how many papers / works / submissions …?").
_PAPERS = re.compile(PAPERS_NOUN, re.I)


def counted_noun(question: str) -> str | None:
    """What a "how many …?" question counts ("parameters", "datasets"), or None for any other question: the
    first plural in the words after "how many" ("how many benchmarks evaluate FedSal …" counts benchmarks), else
    the first of them ("how many people …")."""
    match = HOW_MANY.search(question)
    if not match:
        return None
    words = [w.lower() for w in match.group(1).split()]
    return next((w for w in words if len(w) > 3 and w.endswith("s") and not w.endswith("ss")), words[0])


# -- coined names ---------------------------------------------------------------------------------------------

_NAME = re.compile(r"(?<![\w\-\[])[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?![\w\-\]])")


def coined_names(text: str) -> list[str]:
    """Words that look like a method's name ("PURGE", "DiVeQ", "SF-DiVeQ"): two capitals or more, in order; not a
    stopword in capitals for emphasis ("NOT the game-theory ones", "ONLY 2025")."""
    names = []
    for match in _NAME.finditer(text):
        word = match.group(0)
        if sum(c.isupper() for c in word) >= 2 and len(word) >= 3 and not _emphasis(word):
            names.append(word)
    return list(dict.fromkeys(names))


def _emphasis(word: str) -> bool:
    return word.isupper() and word.lower() in _stopwords()


@cache
def _stopwords() -> frozenset[str]:
    return frozenset(bm25_stopwords())


def specific_names(text: str) -> list[str]:
    """What a question names specifically: coined names, and words mixing letters and digits ("CIFAR-10", "A100",
    "macro-F1", "MIRFlickr-25K"): a method, dataset, benchmark, metric or model an abstract writes as such."""
    return list(dict.fromkeys(m.group(0) for m in _NAME.finditer(text) if _is_specific(m.group(0))))


def _is_specific(word: str) -> bool:
    letters_and_digits = any(c.isdigit() for c in word) and any(c.isalpha() for c in word)
    coined = sum(c.isupper() for c in word) >= 2 and len(word) >= 3 and not _emphasis(word)
    return len(word) >= 2 and (letters_and_digits or coined)


def _squeezed(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def mentions(name: str, text: str) -> bool:
    """Whether `text` writes `name`, leniently: case, hyphens and spaces aside, anywhere ("CIFAR10" for "CIFAR-10",
    "ImageNet-1K" holds "ImageNet"), or the coined name a hyphenated one is built on ("SAM" for "SAM-based", "ResNet"
    for "ResNet-18"; not "F1" for "macro-F1", a variant of the metric). Lenient on purpose: a miss here refuses an
    answer (rag.judge's detail rule)."""
    squeezed = _squeezed(text)
    parts = [name, *(part for part in name.split("-") if "-" in name and coined_names(part) == [part])]
    return any(_squeezed(part) in squeezed for part in parts)


def names_any(names: tuple[str, ...], text: str) -> bool:
    """Whether `text` writes one of the coined names, as a whole word, in any case."""
    return any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.I) for name in names)


def defined_name(text: str) -> str | None:
    """The coined name a question asks the meaning of ("what is CAMEL?" → "CAMEL"), else None."""
    match = DEFINITION_QUESTION.match(text.strip())
    if not match:
        return None
    subject = next(g for g in match.groups() if g).strip()
    names = coined_names(subject)
    # "MinPV principle" asks about MinPV; "the best optimizer for transformers" names nothing.
    return names[0] if len(names) == 1 and len(subject.split()) <= 3 else None


# -- primary area and decision -----------------------------------------------------------------------------

# `--status` values → the decisions stored (rag.corpus.DECISIONS) each keeps. "accept": accepted, presentation not
# given.
STATUS_FILTERS: dict[str, tuple[str, ...]] = {
    "accepted": ("oral", "spotlight", "poster", "accept"),
    "oral": ("oral",),
    "spotlight": ("spotlight",),
    "poster": ("poster",),
    "rejected": ("reject",),
    "withdrawn": ("withdrawn",),
}
_STATUS_ALIASES = {"accept": "accepted", "reject": "rejected", "withdraw": "withdrawn"}


def status_filter(value: str | None) -> str | None:
    """A `--status` value as a key of STATUS_FILTERS (any case; "accept", "reject" too); None for none."""
    if value is None or not value.strip():
        return None
    word = value.strip().lower()
    word = _STATUS_ALIASES.get(word, word)
    if word not in STATUS_FILTERS:
        raise InputError(f"unknown status {value.strip()!r}: use one of {', '.join(STATUS_FILTERS)}")
    return word


def decisions_kept(status: str) -> tuple[str, ...]:
    """The stored decisions a status keeps: a key of STATUS_FILTERS, or keys joined by "+" ("oral+spotlight")."""
    return tuple(decision for key in status.split("+") for decision in STATUS_FILTERS[key])


def within_facets(query: Query, areas: dict[str, int], decisions: dict[str, int]) -> Query:
    """`query` with its area as the store writes it (matched in any case); an area the store does not have, or a
    status none of its papers has, is an `InputError` naming what it has (`areas`, `decisions`: papers of each)."""
    if query.area:
        by_case = {name.casefold(): name for name in areas}
        stored = by_case.get(query.area.casefold())
        if stored is None:
            held = "; ".join(f"{name} ({areas[name]})" for name in sorted(areas)) or "none: its papers have no area"
            raise InputError(f"no papers of area {query.area!r} in the store; its areas: {held}")
        query = replace(query, area=stored)
    if query.status and query.status_in_text and not decisions:
        # "accepted papers on X" asked of a store that keeps no decisions: the words asked nothing it can filter.
        query = replace(query, status=None, status_in_text=False)
    if query.status and not any(decisions.get(d) for d in decisions_kept(query.status)):
        held = ", ".join(f"{name} ({decisions[name]})" for name in sorted(decisions)) or "none: its papers have none"
        raise InputError(f"no {query.status} papers in the store; its decisions: {held}")
    return query


# -- the parsed question -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """A question as understood: what to search for, where, and what kind of answer it wants."""

    text: str  # the question, cleaned
    search: str  # what retrieval embeds and matches: scaffolding and the year/venue phrase removed
    year: int | None = None
    venue: str | None = None
    venue_in_text: bool = False  # written in the question (applied only if the store uses it), not a flag
    # Venues named with no year ("ICLR papers on X", "ICLR or NeurIPS papers on X"): their papers of every year;
    # retrieval filters by them only where the store holds other venues' papers too.
    venue_named: tuple[str, ...] = ()
    since: int | None = None  # papers of this year or later ("since 2023", "nothing older than 2023")
    until: int | None = None  # papers of this year or earlier, with `since` a range ("2025 or 2026", "2024-2026")
    area: str | None = None  # only papers of this primary area (given as a flag; as the store writes it once applied)
    status: str | None = None  # only papers of this decision: a key of STATUS_FILTERS
    status_in_text: bool = False  # written in the question (applied only if the store holds decisions), not a flag
    wants_list: bool = False
    is_topic: bool = False  # names a topic, whose every part an answering paper must hold (rag.facets)
    terms: frozenset[str] = frozenset()  # content words of the question
    names: tuple[str, ...] = ()  # coined names and acronyms, as written
    counts: str | None = None  # what a "how many …?" question counts ("parameters"): a paper must give a number of it
    defines: str | None = None  # the coined name a "what is X?" question asks about: a paper naming it answers
    # The field of its paper's record the question asks for ("authors", "code", "decision"; rag.record), read by
    # the pipeline once the paper is found; None: it asks what the abstract says.
    asks_record: str | None = None
    # Coined names and letter-digit words of the search text ("DiVeQ", "ImageNet", "CIFAR-10"): a question naming
    # a paper and a detail that paper never writes is a near miss (rag.judge.lacking_details).
    specifics: tuple[str, ...] = ()
    # The words of the search text naming its topic (rag.terms.topic_words), set by the pipeline when they keep the
    # question's meaning (`Pipeline.with_topic`); None: the whole search text is the topic.
    topic_cut: str | None = None
    # What the question leaves out ("… but NOT the multi-view ones" → "multi-view ones"; `exclusion`), and the
    # papers the pipeline left out for it, by id (`Pipeline.without_excluded`).
    excludes: str | None = None
    excluded: tuple[str, ...] = ()

    @property
    def counts_papers(self) -> bool:
        """ "how many papers study X?": a count of the store's papers on a topic (rag.trend), not of a number the
        papers give ("how many baselines …?")."""
        return self.counts is not None and _PAPERS.fullmatch(self.counts) is not None

    @property
    def decisions(self) -> tuple[str, ...] | None:
        """The stored decisions the status filter keeps (None: no status filter)."""
        return decisions_kept(self.status) if self.status else None

    @property
    def topic(self) -> str:
        """What the question is about: what a list is judged on, its facets are cut from, and messages name ("no
        paper found covers “federated unlearning”"), without the request around it ("… for my thesis")."""
        return self.topic_cut or self.search


def decision_in_text(text: str) -> tuple[str, str | None]:
    """`text` without a decision that qualifies its papers ("accepted orals on diffusion" → "on diffusion"), and
    that decision as a key of STATUS_FILTERS ("oral"), or presentations joined by "+" ("orals or spotlights only"
    → "oral+spotlight"); None when the question names none."""
    match = DECISION_PHRASE.search(text)
    if not match:
        return text, None
    if match.group(2):  # presentations, one or several: "orals", "oral + spotlight"
        shown = dict.fromkeys(word.lower().rstrip("s") for word in re.findall(PRESENTATION, match.group(2), re.I))
        status = "+".join(shown)
    else:
        word = next(group for group in match.group(1, 3, 4, 5, 6, 7) if group).lower()
        status = _STATUS_ALIASES.get(word, word)
    # "orals on X" names the papers asked for: they stay "papers" ("papers on X", a list); an adjective ("accepted
    # papers", "oral papers") goes.
    named_after = re.match(rf"\s*{PAPERS_NOUN}\b", text[match.end() :], re.I) is not None
    kept = text[: match.start()] + ("papers" if match.group(2) and not named_after else "") + text[match.end() :]
    return " ".join(kept.split()), status


def parse(
    question: str,
    year: int | None = None,
    venue: str | None = None,
    area: str | None = None,
    status: str | None = None,
) -> Query:
    """`question` as a `Query`. `year`/`venue` given as flags win over those written in the question; `area` and
    `status` are flags only (the store checks the area when the query is applied: `within_facets`)."""
    text = clean_question(question)
    status = status_filter(status)
    area = " ".join(area.split()) if area else None
    # A decision written in the question ("rejected papers about RLHF"), read with the venue it may name ("accepted
    # at ICLR 2026"); one given as a flag wins.
    without_decision, status_written = decision_in_text(text)
    filters = parse_filters(without_decision if status is None and status_written is not None else text)
    search = search_text(filters.text)
    wants_list = asks_for_list(filters.text)  # "2025 papers on X" is "papers on X"
    return Query(
        text=text,
        search=search,
        year=year if year is not None else filters.year,
        venue=normalize_venue(venue) if venue else filters.venue,
        venue_in_text=not venue and filters.venue is not None,
        venue_named=() if venue else filters.venue_named,
        since=filters.since,
        until=filters.until,
        area=area or None,
        status=status if status is not None else status_written,
        status_in_text=status is None and status_written is not None,
        wants_list=wants_list,
        is_topic=names_a_topic(LEAD_IN.sub("", filters.text, count=1), search, wants_list),
        terms=frozenset(content_words(text)),
        names=tuple(coined_names(filters.text)),  # not the venue: "ICLR" names no paper
        counts=counted_noun(filters.text),
        defines=defined_name(filters.text),
        specifics=tuple(specific_names(search)),
    )
