"""What a question asks, decided once: `parse(question) -> Query`. Every later stage reads the `Query`.

The search text (scaffolding such as "which papers study" removed), the year and venue it restricts to (written
in the question or given as flags), whether it asks for a list of papers, its content terms and the coined names
in it. Retrieval, the backends, abstention and the chat's follow-up rules all take these from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import InputError
from .text import content_words

MAX_QUESTION_CHARS = 4000


def clean_question(question: str) -> str:
    """The question with control characters and surrounding space removed; empty is an error."""
    text = "".join(c if c.isprintable() else " " for c in question)
    text = " ".join(text.split())
    if not text:
        raise InputError("the question is empty")
    return text[:MAX_QUESTION_CHARS]


# -- the search text ---------------------------------------------------------------------------------------

# "which papers study X?" → "X": the scaffolding carries no topic and drags every question's vector
# towards the same generic "papers study" direction. Verbs may come in pairs ("propose or analyze").
_VERB = (
    r"(?:study|studies|studying|address|addresses|addressing|investigate|investigates|tackle|tackles|"
    r"explore|explores|consider|considers|focus on|focuses on|look at|deal with|deals with|are about|"
    r"is about|about|on|propose|proposes|use|uses|using|with|for|in|analy[sz]e|analy[sz]es|work with|"
    r"works with|involve|involves|introduce|introduces|present|presents|apply|applies|develop|develops)"
)
_SCAFFOLD = re.compile(
    r"^\s*(?:(?:which|what|are there|is there|any|list|find|show me|give me)\s+)?"
    r"(?:the\s+|recent\s+|other\s+)*(?:iclr\s*)?(?:(?:19|20)\d\d\s+)?"
    r"(?:papers?|works?|studies|articles|publications)\s+"
    r"(?:(?:that|which|do|does)\s+)?"
    rf"(?:{_VERB}(?:\s+(?:or|and)\s+{_VERB})*\b)?\s*",
    re.I,
)


def search_text(question: str) -> str:
    """The part of a question worth embedding: scaffolding such as "which papers study" removed."""
    stripped = _SCAFFOLD.sub("", question, count=1).strip(" ?.!")
    return stripped if len(stripped) >= 3 else question


# -- year and venue ----------------------------------------------------------------------------------------

VENUES = {"iclr": "ICLR", "neurips": "NeurIPS", "icml": "ICML", "cvpr": "CVPR", "acl": "ACL", "emnlp": "EMNLP"}
_YEAR = r"((?:19|20)\d\d)(?![\w\-]|\.\d)"  # not "2025-bench", "2025b", "2025.5"
# Phrases that restrict by year: "ICLR 2025 papers", "in 2026", "from 2025", "2025 papers". A year glued
# to a name ("GPT-2025", "Model2025") or a number ("2025.5") is not a filter.
_SHORT_YEAR = r"['’](\d\d)(?![\w\-]|\.\d)"  # "ICLR'26", "ICLR ’25": a venue's own shorthand, 20xx
_VENUE_YEAR = re.compile(rf"(?<![\w\-])({'|'.join(VENUES)})\s*(?:['’]?{_YEAR}|{_SHORT_YEAR})", re.I)
_YEAR_PHRASE = re.compile(
    rf"(?<![\w\-.])(?:(?:published|presented|accepted|submitted)\s+)?(?:in|from|of|during|at|for)\s+(?:the\s+)?"
    rf"(?:year\s+)?{_YEAR}|(?<![\w\-.]){_YEAR}\s+(?=(?:papers?|submissions?|works?|abstracts?|articles?)\b)",
    re.I,
)
_VENUE_ONLY = re.compile(rf"^\s*({'|'.join(VENUES)})\s*(?:['’]?((?:19|20)\d\d)|['’](\d\d))\s*$", re.I)


def _year_of(match: re.Match, group: int) -> int:
    """The year in `group`, or the two-digit shorthand in the group after it ('26 → 2026)."""
    return int(match.group(group)) if match.group(group) else 2000 + int(match.group(group + 1))


def normalize_venue(venue: str) -> str:
    """A venue as the stores write it: "iclr 2025", "ICLR'2025", "ICLR'25" → "ICLR 2025"; anything else as
    given, trimmed."""
    match = _VENUE_ONLY.match(venue)
    if match:
        return f"{VENUES[match.group(1).lower()]} {_year_of(match, 2)}"
    return " ".join(venue.split())


@dataclass(frozen=True)
class QueryFilters:
    """A question with its restrictions taken out: what to search for, and where."""

    text: str
    year: int | None = None
    venue: str | None = None


def parse_filters(question: str) -> QueryFilters:
    """Year and venue restrictions written in the question itself, removed from the search text."""
    year: int | None = None
    venue: str | None = None
    text = question
    match = _VENUE_YEAR.search(text)
    if match:
        year = _year_of(match, 2)
        venue = f"{VENUES[match.group(1).lower()]} {year}"
        text = text[: match.start()] + text[match.end() :]
    else:
        match = _YEAR_PHRASE.search(text)
        if match:
            year = int(match.group(1) or match.group(2))
            text = text[: match.start()] + text[match.end() :]
    return QueryFilters(" ".join(text.split()), year, venue)


# -- list or one -------------------------------------------------------------------------------------------

# A question asks for a list when it asks for papers in the plural ("which papers …", "what methods …", "are
# there works on …", "papers on …") or says "list". "which paper studies X?" asks for one: "studies" is its
# verb, and a singular noun ("paper") between the question word and a plural one ends the look-ahead.
_PLURAL = r"(?:papers|works|studies|articles|publications|submissions|methods|approaches)"
_SINGULAR = r"(?:paper|work|study|article|publication|submission|method|approach)"
_LIST_QUESTION = re.compile(
    r"^\s*(?:please\s+)?list\b"
    rf"|\b(?:which|what|any|find|show me|give me|are there|is there)\s+(?:(?!{_SINGULAR}\b)[\w'\-]+\s+){{0,4}}?"
    rf"{_PLURAL}\b"
    rf"|^\s*{_PLURAL}\b",
    re.I,
)


def asks_for_list(question: str) -> bool:
    """Whether the answer is a list of papers (one line each) rather than what one paper says."""
    return bool(_LIST_QUESTION.search(question))


# A question about a detail opens with a question word or an auxiliary ("how many parameters does X have?",
# "does X use Y?"); a topic is typed bare ("adversarial robustness of graph neural networks"), short.
_ASKS = re.compile(
    r"^\s*(?:what|how|which|why|when|where|who|whose|whom|does|do|did|is|are|was|were|can|could|should|would|"
    r"will|has|have|compare|contrast|explain|describe|summari[sz]e|tell|give)\b",
    re.I,
)
TOPIC_WORDS = 8  # a bare phrase this long or shorter names a topic; a longer one describes a paper


def names_a_topic(question: str, search: str, wants_list: bool) -> bool:
    """Whether the question names a topic (a list question, or a bare short phrase) rather than asking about a
    detail ("which paper says to cite X?": its scaffolding removed, the rest is no topic) or describing one paper
    in its own words."""
    if wants_list:
        return True
    return not _ASKS.match(question) and not _ASKS.match(search) and len(search.split()) <= TOPIC_WORDS


# -- what a count question counts --------------------------------------------------------------------------

# "how many baselines was FeDaL compared against?" counts baselines: the words after "how many", up to an
# auxiliary, "and", a preposition or the end.
_COUNT = re.compile(
    r"\bhow\s+many\s+((?:(?!(?:does|do|did|is|are|was|were|has|have|had|can|could|will|would|should|and|or|"
    r"in|on|of|for|with|per)\b)[\w\-]+\s*){1,4})",
    re.I,
)


def counted_noun(question: str) -> str | None:
    """What a "how many …?" question counts ("parameters", "datasets"), or None for any other question: the
    first plural in the words after "how many" ("how many benchmarks evaluate FedSal …" counts benchmarks), else
    the first of them ("how many people …")."""
    match = _COUNT.search(question)
    if not match:
        return None
    words = [w.lower() for w in match.group(1).split()]
    return next((w for w in words if len(w) > 3 and w.endswith("s") and not w.endswith("ss")), words[0])


# -- coined names ---------------------------------------------------------------------------------------------

_NAME = re.compile(r"(?<![\w\-\[])[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?![\w\-\]])")


def coined_names(text: str) -> list[str]:
    """Words that look like a method's name ("PURGE", "DiVeQ", "SF-DiVeQ"): two capitals or more, in order."""
    names = []
    for match in _NAME.finditer(text):
        word = match.group(0)
        if sum(c.isupper() for c in word) >= 2 and len(word) >= 3:
            names.append(word)
    return list(dict.fromkeys(names))


def names_any(names: tuple[str, ...], text: str) -> bool:
    """Whether `text` writes one of the coined names, as a whole word, in any case."""
    return any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.I) for name in names)


# "what is CAMEL?", "what are QUANNs?", "MinPV - what is it", "what does STOD stand for?": the whole question asks
# what one coined name is.
_DEFINITION = re.compile(
    r"^(?:what(?:'s|\s+is|\s+are)|define|explain)\s+(?:an?\s+|the\s+)?(?P<a>.+?)\s*\??$"
    r"|^(?P<b>.+?)\s*[-–—:]+\s*what(?:'s|\s+is|\s+are)\s+(?:it|they|this|that)\s*\??$"
    r"|^what\s+does\s+(?P<c>.+?)\s+stand\s+for\s*\??$",
    re.I,
)


def defined_name(text: str) -> str | None:
    """The coined name a question asks the meaning of ("what is CAMEL?" → "CAMEL"), else None."""
    match = _DEFINITION.match(text.strip())
    if not match:
        return None
    subject = next(g for g in match.groups() if g).strip()
    names = coined_names(subject)
    # "MinPV principle" asks about MinPV; "the best optimizer for transformers" names nothing.
    return names[0] if len(names) == 1 and len(subject.split()) <= 3 else None


# -- the parsed question -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """A question as understood: what to search for, where, and what kind of answer it wants."""

    text: str  # the question, cleaned
    search: str  # what retrieval embeds and matches: scaffolding and the year/venue phrase removed
    year: int | None = None
    venue: str | None = None
    venue_in_text: bool = False  # written in the question (applied only if the store uses it), not a flag
    wants_list: bool = False
    is_topic: bool = False  # names a topic, whose every part an answering paper must hold (rag.facets)
    terms: frozenset[str] = frozenset()  # content words of the question
    names: tuple[str, ...] = ()  # coined names and acronyms, as written
    counts: str | None = None  # what a "how many …?" question counts ("parameters"): a paper must give a number of it
    defines: str | None = None  # the coined name a "what is X?" question asks about: a paper naming it answers

    @property
    def topic(self) -> str:
        """What the question is about, for messages ("no paper found covers “federated unlearning”")."""
        return self.search

    def to_json(self) -> dict:
        return {"search": self.search, "year": self.year, "venue": self.venue, "list": self.wants_list}


def parse(question: str, year: int | None = None, venue: str | None = None) -> Query:
    """`question` as a `Query`. `year`/`venue` given as flags win over those written in the question."""
    text = clean_question(question)
    filters = parse_filters(text)
    search = search_text(filters.text)
    wants_list = asks_for_list(filters.text)  # "2025 papers on X" is "papers on X"
    return Query(
        text=text,
        search=search,
        year=year if year is not None else filters.year,
        venue=normalize_venue(venue) if venue else filters.venue,
        venue_in_text=not venue and filters.venue is not None,
        wants_list=wants_list,
        is_topic=names_a_topic(filters.text, search, wants_list),
        terms=frozenset(content_words(text)),
        names=tuple(coined_names(text)),
        counts=counted_noun(filters.text),
        defines=defined_name(filters.text),
    )


def as_query(question: Query | str) -> Query:
    """`question` as a `Query`: a function that takes either parses text here, once, at its entry."""
    return parse(question) if isinstance(question, str) else question
