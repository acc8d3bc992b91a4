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
the packaged MiniLM and compared with one question per field (`FIELD_QUESTIONS`); the closest field is asked when
its cosine reaches `Policy.record_bar`, chosen on the spent question sets (docs/EVALUATION.md, "Questions about a
paper's record").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from .query import mentions, specific_names
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
    "not_held",
    "record_answer",
    "without_names",
    "writes_a_name",
]

RecordField = Literal["authors", "code", "decision"]

# One question per field, as a user would ask it of a paper called "it": the field a question asks for is the one
# whose question it reads closest to.
FIELD_QUESTIONS: dict[RecordField, str] = {
    "authors": "who wrote it, and which lab or university are the authors from",
    "code": "where can I find the code or github repository for it",
    "decision": "was it accepted as an oral, a spotlight or a poster",
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


def without_names(question: str, paper_text: str) -> str:
    """`question` with each specific name that `paper_text` writes replaced by "it": what is asked of the paper, not
    which paper ("Who wrote the ZeroTuning paper?" → "Who wrote the it paper?")."""
    for name in sorted(specific_names(question), key=len, reverse=True):
        if mentions(name, paper_text):
            question = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", "it", question, flags=re.I)
    return question


def asked_paper(names: Sequence[str], sources: Sequence[Source]) -> Source | None:
    """The paper a question asks about: the closest of `sources` writing one of the question's specific `names`
    ("who wrote DiffSDA?" asks about the paper writing DiffSDA, whatever the cross-encoder makes of "who wrote");
    with no names, the closest; None when no source writes the names given (the paper asked about is not shown)."""
    naming = [s for s in sources if any(mentions(name, s.text) for name in names)]
    if names and not naming:
        return None
    return max(naming or sources, key=lambda s: s.closeness, default=None)


def writes_a_name(names: Sequence[str], paper: Source) -> bool:
    """Whether `paper` writes one of the question's specific `names`: the paper is found by name."""
    return any(mentions(name, paper.text) for name in names)


def asked_field(question: str, paper: Source, embedder: Embedder, bar: float) -> RecordField | None:
    """The record field `question` asks of `paper` (its closest match), or None when no field's question is within
    cosine `bar` of it."""
    key = getattr(embedder, "name", type(embedder).__name__)
    if key not in _field_vectors:
        _field_vectors[key] = embedder.embed(list(FIELD_QUESTIONS.values()))
    (vector,) = embedder.embed([without_names(question, paper.text)])
    similarities = _field_vectors[key] @ vector
    best = int(similarities.argmax())
    return list(FIELD_QUESTIONS)[best] if similarities[best] >= bar else None


def holds(field: RecordField, paper: Source) -> bool:
    """Whether the store holds `field` for `paper`: a decision other than "unknown", a link in the abstract; never
    the authors."""
    if field == "decision":
        return paper.status is not None and paper.status in _DECIDED
    if field == "code":
        return bool(LINK.search(paper.abstract or paper.snippet))
    return False


def record_answer(field: RecordField, paper: Source) -> str:
    """The answer to `field` of `paper`, which `holds` it, citing the paper."""
    where = paper.venue or ""
    if paper.year and str(paper.year) not in where:
        where = f"{where} {paper.year}".strip()
    if field == "decision":
        assert paper.status is not None
        return f"[{paper.id}] was {_DECIDED[paper.status]}{f' at {where}' if where else ''}.{_page(paper)}"
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
        title = f" (“{paper.title}”)" if paper.title else ""
        said = f"they hold no authors or affiliations; the paper asked about is {paper.id}{title}"
    elif field == "code":
        said = f"the abstract of {paper.id} gives no code link"
    else:
        said = f"the store holds no decision for {paper.id}"
    return f"{said}{f' (its page: {paper.url})' if paper.url else ''}."


def _page(paper: Source) -> str:
    return f" Its page: {paper.url}" if paper.url else ""
