"""What a question asks of a paper's record rather than of its abstract: who wrote it, where its code is, how it was
decided.

A store keeps, for each paper, its abstract and a record: year, venue, link, primary area and decision (rag.corpus).
It keeps no authors or affiliations, and a code link only where the abstract writes one. Quoting the abstract to
"who wrote DiffSDA, and which lab is it from?" answers a question nobody asked (the cross-encoder rightly finds the
paper relevant: it is the right paper). So a question asking for one of these fields of its paper is answered from
the record (the decision; the code link the abstract writes) or told the store does not hold it, with the paper's
link, where the user will find it.

Which field a question asks for is read by meaning, not by a word list: the question, with the names its paper
writes replaced by "it" (so "who wrote the DiVeQ paper" and "who wrote the PURGE paper" read alike), is embedded with
the packaged MiniLM and compared with a question or two per field (`FIELD_QUESTIONS`); the closest field is asked
when its cosine reaches `Policy.record_bar`, chosen on the spent question sets (docs/EVALUATION.md, "Questions about
a paper's record"). A title written in the question is the paper's name too (`Policy.record_title_words`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Literal

from .export import to_bibtex
from .query import FOCUS_MANY, FOCUS_ONE, mentions, specific_names
from .text import LINK, split_sentences, tidy_latex

if TYPE_CHECKING:
    import numpy as np

    from .embedding import Embedder
    from .types import Source

__all__ = [
    "FIELD_QUESTIONS",
    "RecordField",
    "asked_field",
    "asked_paper",
    "holds",
    "named_paper",
    "not_held",
    "record_answer",
    "without_names",
    "writes_a_name",
]

RecordField = Literal["authors", "code", "decision", "bibtex", "link"]

# Questions a user would ask of a paper called "it", per field: the field a question asks for is the one with the
# question it reads closest to. A decision is asked of by its presentation or by its outcome.
FIELD_QUESTIONS: dict[RecordField, tuple[str, ...]] = {
    "authors": ("who wrote it, and which lab or university are the authors from",),
    "code": ("where can I find the code or github repository for it",),
    "decision": (
        "was it accepted as an oral, a spotlight or a poster",
        "what was the decision on it, accepted or rejected",
    ),
    # What a researcher does next with a paper found: cite it, read it.
    "bibtex": ("how do I cite it? its bibtex or reference",),
    "link": ("its pdf or url: where can I read it", "give me a link to it"),
}

# A decision (rag.corpus.DECISIONS) as an answer says it.
_DECIDED = {
    "oral": "accepted as an oral",
    "spotlight": "accepted as a spotlight",
    "poster": "accepted as a poster",
    "accept": "accepted",
    "reject": "rejected",
    "withdrawn": "withdrawn",
}
_field_vectors: dict[str, np.ndarray] = {}
_TITLE_WORD = re.compile(r"\w+(?:['’-]\w+)*")
# Where a question's clauses end: a sentence's end, a dash, a comma, a bracket (punctuation only, no words).
_CLAUSE_END = re.compile(r"[?!.;:](?:\s+|$)|\s+[—–-]+\s+|,\s+|[()]")


def without_names(question: str, paper_text: str, title: str | None = None, title_words: int = 0) -> str:
    """`question` with each specific name that `paper_text` writes replaced by "it", and the longest run of at least
    `title_words` consecutive words of the paper's `title` (or all of it; 0: none), its name too: what is asked of
    the paper, not which paper ("Who wrote the ZeroTuning paper?" → "Who wrote the it paper?"; "this paper", as a
    follow-up names the paper in focus, → "it")."""
    if title and title_words:
        question = _without_title(question, title, title_words)
    for name in sorted(specific_names(question), key=len, reverse=True):
        if mentions(name, paper_text):
            question = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", "it", question, flags=re.I)
    # A follow-up's standalone wording names the paper in focus so: "and a link to this paper?" reads 0.41 to the
    # link field's "give me a link to it", the user's own "and a link to it?" 0.59.
    return question.replace(FOCUS_ONE, "it").replace(FOCUS_MANY, "them")


def _title_run(question: str, title: str, least: int) -> tuple[int, int] | None:
    """Where `question` quotes `title`: the character span of its longest run of consecutive title words (case and
    punctuation aside), when the run is at least `least` words long or the whole title; else None."""
    words = list(_TITLE_WORD.finditer(question))
    titled = _TITLE_WORD.findall(title.lower())
    run = SequenceMatcher(None, [w.group(0).lower() for w in words], titled, autojunk=False).find_longest_match()
    if run.size == 0 or run.size < min(least, len(titled)):
        return None
    return words[run.a].start(), words[run.a + run.size - 1].end()


def _without_title(question: str, title: str, least: int) -> str:
    """`question` with the title it quotes (`_title_run`) replaced by "it"."""
    span = _title_run(question, title, least)
    return f"{question[: span[0]]}it{question[span[1] :]}" if span else question


def named_paper(question: str, names: Sequence[str], sources: Sequence[Source], title_words: int) -> Source | None:
    """The paper `question` names, among `sources`: the closest writing one of its specific `names` that no other
    source writes ("PURGE", not "LoRA", which many papers write), or whose title it quotes (`_title_run`); None when
    it names none. A question asking for a list is asked of no paper's record ("who has published on machine
    unlearning?" reads close to "who wrote it?"); one naming none and asking no list is asked of the closest shown
    paper (rag.pipeline.Pipeline.asks_of_record)."""
    named = []
    for source in sources:
        own = any(_owns(name, source, sources) for name in names)
        quoted = bool(source.title and title_words and _title_run(question, source.title, title_words))
        if own or quoted:
            named.append(source)
    return max(named, key=lambda s: s.closeness, default=None)


def asked_paper(names: Sequence[str], sources: Sequence[Source]) -> Source | None:
    """The paper a question asks about: the closest of `sources` writing one of the question's specific `names`
    ("who wrote DiffSDA?" asks about the paper writing DiffSDA, whatever the cross-encoder makes of "who wrote"),
    a name no other source writes first ("FeDaL" in "a GitHub link for FeDaL?", which several abstracts' links
    write); with no names, the closest; None when no source writes the names given (the paper is not shown)."""
    naming = [s for s in sources if any(mentions(name, s.text) for name in names)]
    owning = [s for s in naming if any(_owns(name, s, sources) for name in names)]
    naming = owning or naming
    if names and not naming:
        return None
    return max(naming or sources, key=lambda s: s.closeness, default=None)


def _owns(name: str, source: Source, sources: Sequence[Source]) -> bool:
    """Whether `source` writes `name` and no other of `sources` does."""
    return mentions(name, source.text) and not any(mentions(name, o.text) for o in sources if o is not source)


def writes_a_name(names: Sequence[str], paper: Source) -> bool:
    """Whether `paper` writes one of the question's specific `names`: the paper is found by name."""
    return any(mentions(name, paper.text) for name in names)


def asked_field(
    question: str, paper: Source, embedder: Embedder, bar: float, title_words: int = 0
) -> RecordField | None:
    """The record field `question` asks of `paper` (its closest match), or None when no field's question is within
    cosine `bar` of it. `title_words`: see `without_names`."""
    key = getattr(embedder, "name", type(embedder).__name__)
    fields = [field for field, asked in FIELD_QUESTIONS.items() for _ in asked]
    if key not in _field_vectors:
        _field_vectors[key] = embedder.embed([text for asked in FIELD_QUESTIONS.values() for text in asked])
    asked = without_names(question, paper.text, paper.title, title_words)
    # The whole question, else its best clause: a request beside a description of the paper ("Who wrote CAMEL, the
    # constant degree matrix-driven incomplete multi-view clustering method?") reads closer on its own. Where the
    # whole reads a field it decides ("I'm about to cite X — was it published or rejected?" asks the decision).
    clauses = [part.strip() for part in _CLAUSE_END.split(asked) if len(part.split()) >= 2]
    similarities = embedder.embed([asked, *clauses]) @ _field_vectors[key].T
    for read in (similarities[:1], similarities[1:]):
        if len(read) and read.max() >= bar:
            return fields[int(read.max(axis=0).argmax())]
    return None


def holds(field: RecordField, paper: Source) -> bool:
    """Whether the store holds `field` for `paper`: a decision other than "unknown", a link in the abstract; never
    the authors."""
    if field == "decision":
        return paper.status is not None and paper.status in _DECIDED
    if field == "code":
        return bool(LINK.search(paper.abstract or paper.snippet))
    if field == "bibtex":
        return True  # written from the record: id, venue, year, link (rag.export)
    if field == "link":
        return bool(paper.url)
    return False


def record_answer(field: RecordField, paper: Source) -> str:
    """The answer to `field` of `paper`, which `holds` it, citing the paper."""
    where = paper.venue or ""
    if paper.year and str(paper.year) not in where:
        where = f"{where} {paper.year}".strip()
    if field == "decision":
        assert paper.status is not None
        return f"[{paper.id}] was {_DECIDED[paper.status]}{f' at {where}' if where else ''}.{_page(paper)}"
    if field == "bibtex":
        return f"BibTeX for [{paper.id}]:\n\n{to_bibtex([paper]).rstrip()}"
    if field == "link":
        title = f" “{paper.title}”" if paper.title else ""
        return f"[{paper.id}]{title}{f' ({where})' if where else ''}: {paper.url}"
    linked = [s for s in split_sentences(paper.abstract or paper.snippet) if LINK.search(s)]
    quoted = tidy_latex(linked[0]).replace("[", "(").replace("]", ")")  # never read as a citation
    return f"The abstract of [{paper.id}] gives its code: “{quoted}”"


def not_held(field: RecordField, paper: Source | None, names: Sequence[str] = ()) -> str:
    """Why the store cannot answer `field` of `paper`, and where the user will find it. No store holds authors, so
    that is said even when the paper asked about (named `names`) is not found (`paper` None)."""
    if field == "authors" and paper is None:
        return f"they hold no authors or affiliations, and no paper found writes {' or '.join(names)}."
    assert paper is not None
    if field == "authors":
        title = f", “{paper.title}”" if paper.title else ""
        said = f"they hold no authors or affiliations; the paper asked about is {paper.id}{title}"
    elif field == "code":
        said = f"the abstract of {paper.id} gives no code link"
    elif field == "link":
        said = f"the store holds no link for {paper.id}"
    else:
        said = f"the store holds no decision for {paper.id}"
    return f"{said}{f' (its page: {paper.url})' if paper.url else ''}."


def _page(paper: Source) -> str:
    return f" Its page: {paper.url}" if paper.url else ""
