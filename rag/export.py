"""Papers taken elsewhere: BibTeX for a LaTeX file, a Markdown list for notes, CSV for a spreadsheet.

    rag ask "which papers study unlearning?" --format bibtex >> refs.bib

One function per format, each over any paper-like value (a `Source`, a `Paper`): its id, title, year, venue and,
where the store keeps them, its URL, primary area and decision. Plain text in, plain text out: no I/O.

BibTeX is written here, not by a library: bibtexparser and pybtex write entries but leave escaping a title's
`&`, `%`, `#` and `_` to the caller, which is the only part that needs care; the entry has six fields.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from typing import Protocol

from .errors import InputError

FORMATS = ("bibtex", "markdown", "csv")

# ICLR's name as BibTeX's booktitle ("ICLR 2026" -> "International Conference on Learning Representations (ICLR
# 2026)"); another venue is written as the store has it.
_VENUE_NAMES = {"ICLR": "International Conference on Learning Representations"}

# A character LaTeX reads as markup in text mode, outside $...$ math.
_SPECIAL = re.compile(r"(?<!\\)([&%#_])")
_MATH = re.compile(r"(\$[^$]*\$)")
_KEY_WORD = re.compile(r"[A-Za-z0-9]+")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
# Title words too common to name an entry ("A Survey of ..." -> "survey").
_KEY_SKIP = {"a", "an", "the", "on", "of", "in", "for", "to", "and", "towards", "toward", "with", "is", "are"}

CSV_COLUMNS = ("id", "title", "year", "venue", "area", "status", "url")


class PaperLike(Protocol):
    id: str
    title: str | None
    year: int | None
    venue: str | None


def _field(paper: object, name: str) -> str:
    value = getattr(paper, name, None)
    return "" if value is None else str(value)


def _title(paper: object) -> str:
    """The title, or (a seed list carries none) the label the answers show: the abstract's first words."""
    title = _field(paper, "title")
    if title:
        return title
    label = getattr(paper, "label", None)
    return str(label) if label else _field(paper, "id")


def bibtex_key(paper: PaperLike) -> str:
    """A key that names the paper and never changes with the list it is in: the title's first content word, the
    year and the id (`diveq2026-KRVnpTbx7R`), so two exports of one paper agree and two papers never collide."""
    plain = _LATEX_COMMAND.sub(" ", _MATH.sub(" ", _field(paper, "title")))
    words = [w.lower() for w in _KEY_WORD.findall(plain)]
    word = next((w for w in words if w not in _KEY_SKIP), "paper")
    paper_id = re.sub(r"[^A-Za-z0-9_-]", "", paper.id) or "x"
    return f"{word}{paper.year or ''}-{paper_id}"


def _escape(text: str) -> str:
    """`&`, `%`, `#` and `_` escaped outside math; braces kept balanced; capitals protected by the outer braces."""
    parts = _MATH.split(" ".join(text.split()))
    out = [
        part if part.startswith("$") and part.endswith("$") and len(part) > 1 else _SPECIAL.sub(r"\\\1", part)
        for part in parts
    ]
    escaped = "".join(out)
    if escaped.count("{") != escaped.count("}"):
        escaped = escaped.replace("{", "").replace("}", "")
    return escaped


def _booktitle(venue: str) -> str:
    name = venue.partition(" ")[0]
    full = _VENUE_NAMES.get(name.upper())
    return f"{full} ({venue})" if full else venue


def to_bibtex(papers: Iterable[PaperLike]) -> str:
    """One `@inproceedings` entry per paper (title, booktitle, year, url, and a note with the id and decision)."""
    entries = []
    for paper in papers:
        # A paper without a title (a seed list's) gets none: the abstract's first words are no title to cite.
        title = _field(paper, "title")
        fields = [("title", "{" + _escape(title) + "}")] if title else []
        if paper.venue:
            fields.append(("booktitle", _escape(_booktitle(paper.venue))))
        if paper.year:
            fields.append(("year", str(paper.year)))
        if url := _field(paper, "url"):
            fields.append(("url", url))
        note = "; ".join(part for part in (f"id {paper.id}", _field(paper, "status")) if part)
        fields.append(("note", _escape(note)))
        body = ",\n".join(f"  {name:<9} = {{{value}}}" for name, value in fields)
        untitled = "" if title else f"% {paper.id} has no title in this store\n"
        entries.append(f"{untitled}@inproceedings{{{bibtex_key(paper)},\n{body}\n}}\n")
    return "\n".join(entries)


def _markdown_text(text: str) -> str:
    return re.sub(r"([\[\]|*_`<>])", r"\\\1", " ".join(text.split()))


def to_markdown(papers: Iterable[PaperLike]) -> str:
    """A bulleted list: the title (a link where the paper has a URL), then id, venue, decision and area."""
    lines = []
    for paper in papers:
        title = _markdown_text(_title(paper))
        url = _field(paper, "url")
        head = f"[{title}]({url})" if url else f"**{title}**"
        details = [f"`{paper.id}`", paper.venue or (str(paper.year) if paper.year else "")]
        details += [_field(paper, "status"), _field(paper, "area")]
        lines.append(f"- {head} — " + " · ".join(d for d in details if d))
    return "\n".join(lines) + ("\n" if lines else "")


def to_csv(papers: Iterable[PaperLike]) -> str:
    """A header row and one row per paper: id, title (empty where the store has none), year, venue, area, status,
    url."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for paper in papers:
        writer.writerow([_field(paper, column) for column in CSV_COLUMNS])
    return buffer.getvalue()


def export(papers: Iterable[PaperLike], fmt: str) -> str:
    """`papers` in `fmt` (one of FORMATS); an InputError names the formats for any other."""
    writers = {"bibtex": to_bibtex, "markdown": to_markdown, "csv": to_csv}
    if fmt not in writers:
        raise InputError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    return writers[fmt](list(papers))
