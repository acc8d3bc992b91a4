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
    r"(?:study|studies|studying|studied|address|addresses|addressing|addressed|investigate|investigates|"
    r"investigated|tackle|tackles|tackled|explore|explores|explored|consider|considers|focus on|focuses on|"
    r"look at|looked at|looking at|deal with|deals with|dealing with|are about|is about|about|on|regarding|"
    r"concerning|related to|propose|proposes|proposed|use|uses|using|with|for|in|analy[sz]e|analy[sz]es|"
    r"analy[sz]ed|work with|works with|worked on|work on|involve|involves|introduce|introduces|present|presents|"
    r"apply|applies|develop|develops|published on|done on|written on|out there on|exists? on|is there on|"
    r"are there on)"
)
# A request around the question, which says who asks or how politely, not what: "could you …", "I'm looking for
# …", "recommend …", "tell me about …".
_LEAD_IN = re.compile(
    r"^\s*(?:(?:hi|hey|hello)\b[\s,!.]*)?(?:(?:please|pls|kindly)\s+)?"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:(?:find|show|give|get|list|recommend|suggest)\s+(?:me\s+)?)?"
    r"|i(?:'m|\s+am)\s+(?:looking|searching)\s+for\s+"
    r"|i\s+(?:want|need|would\s+like|'d\s+like)\s+(?:to\s+(?:find|see|read(?:\s+about)?|know\s+about)\s+)?"
    r"|help\s+me\s+find\s+|do\s+you\s+(?:know|have)\s+(?:of\s+)?|tell\s+me\s+about\s+|point\s+me\s+to\s+"
    r"|(?:recommend|suggest|search\s+for|look\s+for|get|pull\s+up)(?:\s+me)?\s+)",
    re.I,
)
# What names papers as such: "papers", "work", "the literature", "prior work".
_PAPERS_NOUN = r"(?:papers?|works?|studies|research|articles|publications|literature|submissions)"
_SCAFFOLD = re.compile(
    r"^\s*(?:(?P<ask>what\s+has\s+been|has\s+anyone|have\s+people|did\s+anyone|does\s+anyone|has\s+there\s+been|"
    r"which|what|are\s+there|is\s+there|any|list|find|show|give|do|does|did)(?:\s+me)?\s+)?"
    r"(?:(?:are|were)\s+)?(?:(?:the|some|any|a|recent|other|good|relevant|existing|prior|related|key|notable)\s+)*"
    r"(?:iclr\s*)?(?:(?:19|20)\d\d\s+)?"
    rf"(?:(?P<noun>{_PAPERS_NOUN})\s+)?"
    r"(?:(?:that|which|do|does|is|are|has\s+been|have\s+been|there)\s+)*"
    rf"(?P<verb>{_VERB}(?:\s+(?:or|and)\s+{_VERB})*\b)?\s*",
    re.I,
)
# Without a word naming papers, only these ask for papers by their verb: "has anyone studied X", "what has been
# published on X" ("what is X" asks what X is, and keeps its words).
_ASKS_FOR_WORK = re.compile(r"has\s+anyone|have\s+people|did\s+anyone|does\s+anyone|what\s+has\s+been", re.I)
# "X papers", "X papers pls": a bare topic, then the kind of thing wanted. ("X studies" and "X research" stay:
# "case studies", "operations research".)
_TAIL = re.compile(r"\s+(?:papers?|publications|articles|literature)(?:\s+(?:pls|please|plz))?\s*[?.!]*\s*$", re.I)


# A message asking for papers in its own words ("I'm writing a related work section on X, what should I cite?",
# "Give me an overview of the literature on X"): it names what it wants with one of these. Not "sota" or "state
# of the art": "what balanced accuracy do sota llms get on …" asks a detail.
_PAPER_REQUEST = re.compile(
    r"\b(?:papers|works|research|literature|studies|articles|publications|refs|references|reads|reading\s+list|"
    r"(?:should|to|can)\s+i\s+cite|survey\s+(?:of|the)|overview\s+of|read\s+up|recommend\w*|suggest\w*|looking\s+for|"
    r"searching\s+for|point\s+me|track\s+down|dig\s+up|work\s+(?:on|about|in|into|regarding|tackling|covering)|"
    r"anyone|anybody|anything\s+on|(?:has|have)\s+been\s+(?:done|proposed|published|written))\b",
    re.I,
)
# The words such a message wraps its topic in, stripped from either end of what is left once the scaffolding
# above is gone. Longest first; only words that do not end a topic may end the message ("kernel methods",
# "neural architecture search" keep theirs), and only words that do not start one may start it ("reading
# comprehension", "state space models").
_REQUEST_WORDS = (
    "i'd like to see their papers|what should i start with|what should i read|what should i cite|should i read|"
    "should i cite|state of the art|related work section|related work|would you mind|do you know of|do you know|"
    "i'd like to|i would like to|i want to|i need to|i'm new to|i am new to|new to|read up on|read up|"
    "learn about|know about|written about|track down|dig up|point me to|point me|help me|tell me about|"
    "introduction to|intro to|overview of|survey of|looking for|searching for|search for|look for|out there|"
    "so far|lately|recently|for my project|for my thesis|for my paper|"
    "papers|paper|works|work|research|literature|studies|articles|article|publications|publication|refs|"
    "references|reads|reading|resources|material|approaches|methods|techniques|anything|something|stuff|"
    "i'm|im|i|me|my|we|our|you|your|can|could|would|will|should|shall|do|does|did|is|are|was|were|has|have|"
    "had|been|there's|there|it's|it|what's|what|which|who|whom|where|how|any|some|a|an|the|of|on|about|in|"
    "into|to|for|from|regarding|concerning|around|related|covering|discussing|addressing|tackling|"
    "investigating|studying|exploring|examining|that|this|these|those|much|many|lots|please|pls|plz|thanks|"
    "thank|kindly|hi|hey|hello|also|just|really|good|great|best|relevant|recent|existing|prior|previous|key|"
    "main|important|seminal|notable|influential|background|find|show|give|get|list|recommend|suggest|"
    "searching|seeking|collect|gather|read|learn|understand|know|survey|cite|start|mind|need|want|like|see|"
    "tell|overview|sota|exist|exists|available|done|published|written|writing|worked|working|and|or|with|by|"
    "anyone|anybody|people|proposed|suggesting|address|addresses|cover|covers|discuss|discusses|tackle|tackles|"
    "investigate|investigates|study|explore|explores|examine|examines|so|far"
)
# Words that may close a message but also end topics, kept at the end: "kernel methods", "case studies",
# "operations research".
_NOT_LAST = frozenset(
    "approaches methods techniques studies research reading search learning work works material".split()
)
# Words that may open a message but also start topics, kept at the start: "reading comprehension".
_NOT_FIRST = frozenset(["reading"])
_REQUEST_PHRASES = frozenset(_REQUEST_WORDS.split("|"))
_LONGEST_PHRASE = max(len(phrase.split()) for phrase in _REQUEST_PHRASES)
_TOKEN = re.compile(r"[\w'-]+")


def _request_words_trimmed(text: str) -> str:
    """`text` less the request words and phrases at either end, longest first."""
    tokens = list(_TOKEN.finditer(text.replace("’", "'")))
    words = [t.group(0).lower() for t in tokens]

    def phrase_at(i: int, forwards: bool) -> int:
        """The length of the longest request phrase starting (forwards) or ending (backwards) at word i; 0: none."""
        for n in range(_LONGEST_PHRASE, 0, -1):
            span = words[i : i + n] if forwards else words[max(0, i - n + 1) : i + 1]
            if len(span) == n and " ".join(span) in _REQUEST_PHRASES:
                return n
        return 0

    first = 0
    while first < len(words) and (n := phrase_at(first, True)):
        if n == 1 and words[first] in _NOT_FIRST:
            break
        first += n
    last = len(words) - 1
    while last >= first and (n := phrase_at(last, False)):
        # "kernel methods" keeps its last word; "the existing methods" does not
        if n == 1 and words[last] in _NOT_LAST and not (last > first and phrase_at(last - 1, False)):
            break
        last -= n
    if last < first:
        return ""
    return text[tokens[first].start() : tokens[last].end()]


def _scaffolding_removed(question: str) -> str:
    """The question without the request and the scaffolding around its topic."""
    text = _LEAD_IN.sub("", question, count=1)
    scaffold = _SCAFFOLD.match(text)
    asks_for_work = scaffold and scaffold.group("ask") and _ASKS_FOR_WORK.fullmatch(scaffold.group("ask"))
    if scaffold and (scaffold.group("noun") or (asks_for_work and scaffold.group("verb"))):
        text = text[scaffold.end() :]
    elif not _ASKS.match(text):
        text = _TAIL.sub("", text)
    if _PAPER_REQUEST.search(question):
        trimmed = _request_words_trimmed(text)
        text = trimmed if len(trimmed) >= 3 else text
    return text.strip(" ?.!,;:")


def search_text(question: str) -> str:
    """The part of a question worth embedding: the request and scaffolding around the topic removed ("could you
    find papers on X?", "has anyone studied X", "X papers pls" → "X")."""
    stripped = _scaffolding_removed(question)
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


# "is there work on X?", "any research on X", "what has been published on X", "has anyone studied X?": papers in
# general, asked for with a mass noun or none.
_WORK_IN_GENERAL = re.compile(
    r"^\s*(?:(?:(?:is|are)\s+there|any|find|show|give|what|which)(?:\s+me)?\s+)?"
    r"(?:(?:the|some|any|recent|prior|existing|relevant)\s+)*(?:work|research|literature)\s+"
    r"(?:on|about|regarding|concerning|related\s+to|in|exists?\s+on|is\s+there\s+on|has\s+been\s+done\s+on)\b"
    r"|^\s*(?:has|have|did|does)\s+(?:anyone|anybody|people)\b|^\s*what\s+has\s+been\s+(?:published|done|written)\b",
    re.I,
)


# "which paper …", "the paper that …": one paper, however the rest is worded.
_ONE_PAPER_ASKED = re.compile(r"\b(?:which|what|the|a|one)\s+(?:\w+\s+)?paper\b(?!s)", re.I)


def asks_for_list(question: str) -> bool:
    """Whether the answer is a list of papers (one line each) rather than what one paper says."""
    text = _LEAD_IN.sub("", question, count=1)
    return bool(
        _LIST_QUESTION.search(text)
        or _WORK_IN_GENERAL.search(text)
        or (_PAPER_REQUEST.search(text) and not _ONE_PAPER_ASKED.search(text))
        or (not _ASKS.match(text) and _TAIL.search(text) and not re.search(r"\bpaper\b", text[-12:], re.I))
    )


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
    if wants_list and _LIST_QUESTION.search(question):
        return True  # "which papers study X", however many alternatives X lists
    if len(search.split()) > TOPIC_WORDS:
        return False  # "is there work on replacing plain adding-up … with a learned power-mean-like average": a paper
    return wants_list or (not _ASKS.match(question) and not _ASKS.match(search))


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
        is_topic=names_a_topic(_LEAD_IN.sub("", filters.text, count=1), search, wants_list),
        terms=frozenset(content_words(text)),
        names=tuple(coined_names(text)),
        counts=counted_noun(filters.text),
        defines=defined_name(filters.text),
    )
