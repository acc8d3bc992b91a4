"""Readers for paper files: seed text lists, JSONL (also .jsonl.gz) and CSV → `Paper`.

Every reader validates as it goes and raises `InputError` naming the file and line, so a bad file is
refused before anything reaches the store.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import InputError

# A paper id: the one rule. Ingest refuses any other id, so every id in a store is one an answer can cite
# (rag.citations reads `[ID]` by this pattern), a URL path can carry and a prompt can hold without escaping.
ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.:/\-]{0,63}"
PAPER_ID = re.compile(rf"{ID_PATTERN}\Z")
PAPER_ID_RULE = "1-64 letters, digits and _ . : / - starting with a letter or digit"

SUPPORTED_SUFFIXES = (".txt", ".jsonl", ".jsonl.gz", ".csv")

# "ICLR 2026 论文列表", "ICLR 2026 Papers", "ICLR 2025 Papers" -> venue "ICLR 2026", year 2026.
_HEADER = re.compile(r"^\s*(?P<name>[A-Za-z][\w.&\-]*)\s+(?P<year>(?:19|20)\d\d)\b")
_YEAR_IN_TEXT = re.compile(r"\b((?:19|20)\d\d)\b")

# A paper's link, the one rule (`paper_url`): the `url` its record gives; else, for an OpenReview-style id, the
# OpenReview forum page; else none. An OpenReview forum id is 10 letters, digits, `_` or `-` (every id of the ICLR
# 2025/2026 corpus: 31,500 of them, each with a letter); one with no letter (a 10-digit number) is some other
# scheme's, and gets no link.
OPENREVIEW_ID = re.compile(r"(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{10}\Z")
OPENREVIEW_FORUM = "https://openreview.net/forum?id="
_URL = re.compile(r"https?://[^\s\"'<>\\]+\Z", re.IGNORECASE)
MAX_URL_CHARS = 2000
MAX_AREA_CHARS = 200

# A paper's decision (`status`), one word: what the filters (`--status`, rag.query.STATUS_FILTERS) read. OpenReview
# exports write "accept (poster)", "accept (oral)", "desk_rejected", …: `normalize_status` reads them as these.
# "accept": accepted, its presentation (oral, spotlight, poster) not given.
DECISIONS = ("oral", "spotlight", "poster", "accept", "reject", "withdrawn", "unknown")
_STATUS = re.compile(
    r"(?:accept(?:ed)?\s*[(:]?\s*)?(?P<kind>oral|spotlight|poster)\s*\)?"  # "accept (poster)", "poster"
    r"|(?P<accept>accept(?:ed)?(?:\s*\(.*\))?)"  # "accept", "accept (notable top 5%)"
    r"|(?P<reject>(?:desk\s*)?reject(?:ed)?)"  # "reject", "desk_rejected"
    r"|(?P<withdrawn>withdrawn?|withdrew)"
    r"|(?P<unknown>unknown|pending|under\s*review)"
)

# The seed lists' sidecar: each seed's OpenReview id, primary area and decision (evals/seed_metadata.py writes it).
SEED_METADATA = "metadata.json"


@dataclass(frozen=True)
class Paper:
    """One abstract and what is known about it."""

    id: str
    abstract: str
    title: str | None = None
    year: int | None = None
    venue: str | None = None
    keywords: tuple[str, ...] = field(default_factory=tuple)
    source: str = ""  # "file:line" it was read from, for error messages
    url: str | None = None  # its page: the record's `url`, else derived from an OpenReview-style id (`paper_url`)
    area: str | None = None  # the primary area, as the record writes it ("generative models")
    status: str | None = None  # the decision, one of DECISIONS

    @property
    def label(self) -> str:
        """The title, or the abstract's first words when there is none (seed lists carry no titles)."""
        if self.title:
            return self.title
        return first_words(self.abstract)


def paper_url(paper_id: str, url: str | None = None) -> str | None:
    """A paper's link: `url` when it has one; else, for an OpenReview-style id (`OPENREVIEW_ID`), its forum page
    `https://openreview.net/forum?id=<id>`; else None."""
    if url:
        return url
    if OPENREVIEW_ID.match(paper_id):
        return OPENREVIEW_FORUM + paper_id
    return None


def normalize_status(value: str) -> str | None:
    """A decision as one word of DECISIONS ("accept (poster)" → "poster", "desk_rejected" → "reject"); None for an
    empty value. Raises ValueError for anything else."""
    text = " ".join(value.lower().replace("_", " ").replace("-", " ").split())
    if not text:
        return None
    match = _STATUS.fullmatch(text)
    if match is None:
        raise ValueError(value)
    kind = match.group("kind")
    return kind or next(name for name in ("accept", "reject", "withdrawn", "unknown") if match.group(name))


def first_words(text: str, limit: int = 12) -> str:
    words = text.split()
    return " ".join(words[:limit]) + (" …" if len(words) > limit else "")


def bundled_seeds_dir() -> Path:
    """The 95 seed abstracts: inside the installed wheel, or the repo's `seeds/` in a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_data" / "seeds", here.parent / "seeds"):
        if candidate.is_dir():
            return candidate
    raise InputError("the bundled seed abstracts are missing from this installation")


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files named directly, plus the supported files inside named directories (sorted)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and _suffix(p) in SUPPORTED_SUFFIXES)
            if not found:
                raise InputError(f"{path}: no .txt, .jsonl, .jsonl.gz or .csv files in this directory")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        elif path.exists():
            raise InputError(f"{path}: not a regular file")
        else:
            raise InputError(f"{path}: no such file or directory")
    return files


def load_papers(paths: Iterable[Path]) -> list[Paper]:
    """Read and validate every file into memory; ids must be unique across all of them."""
    return list(iter_papers(expand_paths(paths), check_duplicates=True))


def iter_papers(files: list[Path], check_duplicates: bool = True) -> Iterator[Paper]:
    """Stream papers from files in order. Memory holds one record at a time (plus the ids seen)."""
    seen: dict[str, str] = {}
    for file in files:
        for paper in read_file(file):
            if check_duplicates:
                if paper.id in seen:
                    raise InputError(
                        f"{paper.source}: duplicate paper id {paper.id!r} (first seen at {seen[paper.id]})"
                    )
                seen[paper.id] = paper.source
            yield paper


def validate_files(files: list[Path]) -> int:
    """A full streaming pass that raises on the first bad record; returns the number of papers.

    Ingest runs this before touching the store, so a bad line 30,000 refuses the whole input.
    """
    return sum(1 for _ in iter_papers(files, check_duplicates=True))


def read_file(path: Path) -> Iterator[Paper]:
    """Papers from one file, by its suffix."""
    suffix = _suffix(path)
    if suffix == ".txt":
        yield from read_seed_list(path)
    elif suffix in (".jsonl", ".jsonl.gz"):
        yield from read_jsonl(path)
    elif suffix == ".csv":
        yield from read_csv(path)
    else:
        raise InputError(f"{path}: unsupported file type (use .txt seed lists, .jsonl, .jsonl.gz or .csv)")


def _suffix(path: Path) -> str:
    name = path.name.lower()
    return ".jsonl.gz" if name.endswith(".jsonl.gz") else path.suffix.lower()


def _read_text(path: Path) -> str:
    """The whole file as UTF-8; a decoding failure names the line it happened on."""
    try:
        if _suffix(path) == ".jsonl.gz":
            with gzip.open(path) as stream:
                raw = stream.read()
        else:
            raw = path.read_bytes()
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x})") from None
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise InputError(f"{path}: file is empty")
    return text


def read_seed_list(path: Path) -> Iterator[Paper]:
    """A seed text list: a header naming venue and year, then one abstract per non-empty paragraph."""
    lines = _read_text(path).splitlines()
    header_index = next(i for i, line in enumerate(lines) if line.strip())
    match = _HEADER.match(lines[header_index])
    if not match:
        raise InputError(f"{path}:{header_index + 1}: first line must name the venue and year, e.g. 'ICLR 2026 Papers'")
    year = int(match["year"])
    venue = f"{match['name']} {year}"
    prefix = path.name.split("_", 1)[0] if "_" in path.name else path.stem

    paragraphs: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(lines[header_index + 1 :], start=header_index + 2):
        if line.strip():
            if not current:
                start = number
            current.append(line.strip())
        elif current:
            paragraphs.append((start, " ".join(current)))
            current = []
    if current:
        paragraphs.append((start, " ".join(current)))
    if not paragraphs:
        raise InputError(f"{path}: no abstracts after the header line")
    if len(paragraphs) > 99:
        raise InputError(f"{path}: {len(paragraphs)} abstracts; a seed list holds at most 99 (ids are two digits)")
    known = _seed_metadata(path.parent)
    for n, (line_no, text) in enumerate(paragraphs, start=1):
        paper = Paper(id=f"{prefix}-{n:02d}", abstract=text, year=year, venue=venue, source=f"{path}:{line_no}")
        yield _with_seed_metadata(paper, known.get(paper.id))


def abstract_digest(abstract: str) -> str:
    """What the seeds' sidecar keys an entry's abstract by: the sha256 of its words, single-spaced (16 hex)."""
    return hashlib.sha256(" ".join(abstract.split()).encode()).hexdigest()[:16]


def _seed_metadata(folder: Path) -> dict[str, dict]:
    """The sidecar of the seed lists in `folder` (SEED_METADATA): seed id → its entry; {} when there is none."""
    path = folder / SEED_METADATA
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        papers = data["papers"]
        if not isinstance(papers, dict) or not all(isinstance(entry, dict) for entry in papers.values()):
            raise TypeError
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(
            f"{path}: not a seed metadata file (a JSON object whose 'papers' maps seed ids to objects)"
        ) from None
    return papers


def _with_seed_metadata(paper: Paper, entry: dict | None) -> Paper:
    """`paper` with its sidecar entry's link, primary area and decision, when the entry was matched to this very
    abstract (an edited abstract is no longer the paper it was matched to: nothing is applied)."""
    if not entry or entry.get("abstract_sha256") != abstract_digest(paper.abstract):
        return paper
    where = f"{paper.source} (seed {paper.id} in {SEED_METADATA})"
    forum_id = entry.get("openreview_id")
    url = _parse_url(entry.get("url"), where) or (paper_url(forum_id) if isinstance(forum_id, str) else None)
    return replace(paper, url=url, area=_parse_area(entry, where), status=_parse_status(entry.get("status"), where))


def _binary_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) streamed from a plain or gzipped file, each line strictly UTF-8."""
    try:
        opener = gzip.open if _suffix(path) == ".jsonl.gz" else open
        with opener(path, "rb") as stream:
            for number, raw in enumerate(stream, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(f"{path}:{number}: not UTF-8 text (byte 0x{raw[exc.start]:02x})") from None
                yield number, text.removeprefix("\ufeff") if number == 1 else text
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from None


def read_jsonl(path: Path) -> Iterator[Paper]:
    """One JSON object per line with `id` and `abstract`; optional title, year, venue, keywords, url, primary_area
    (or area) and status."""
    seen: dict[str, int] = {}
    any_line = False
    for number, line in _binary_lines(path):
        if not line.strip():
            continue
        any_line = True
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            # exc.msg may end in " at" ("Invalid control character at"): the position completes it
            where = f"{exc.msg.removesuffix(' at')} at character {exc.pos + 1}"
            raise InputError(f"{path}:{number}: invalid JSON ({where})") from None
        if not isinstance(record, dict):
            raise InputError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
        paper = _paper_from_record(record, f"{path}:{number}")
        if paper.id in seen:
            raise InputError(f"{path}:{number}: duplicate paper id {paper.id!r} (first on line {seen[paper.id]})")
        seen[paper.id] = number
        yield paper
    if not any_line:
        raise InputError(f"{path}: file is empty")


def _text_stream(path: Path) -> Iterator[str]:
    """Lines of a text file, streamed; a decoding failure names its line."""
    any_text = False
    for _, line in _binary_lines(path):
        any_text = any_text or bool(line.strip())
        yield line
    if not any_text:
        raise InputError(f"{path}: file is empty")


def read_csv(path: Path) -> Iterator[Paper]:
    """A CSV with a header row naming at least `id` and `abstract`."""
    reader = csv.DictReader(_text_stream(path))
    try:
        fields = [f.strip().lower() for f in (reader.fieldnames or [])]
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: malformed CSV ({exc})") from None
    for required in ("id", "abstract"):
        if required not in fields:
            # A quoted header may hold line breaks: keep the message on one line.
            shown = " ".join(", ".join(fields).split())[:200] or "none"
            raise InputError(f"{path}:1: missing the {required!r} column (header: {shown})")
    reader.fieldnames = fields
    seen: dict[str, int] = {}
    start = 2
    try:
        for row in reader:
            record = {k: v for k, v in row.items() if k is not None}
            paper = _paper_from_record(record, f"{path}:{start}")
            if paper.id in seen:
                raise InputError(f"{path}:{start}: duplicate paper id {paper.id!r} (first on line {seen[paper.id]})")
            seen[paper.id] = start
            start = reader.line_num + 1
            yield paper
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: malformed CSV ({exc})") from None


def _paper_from_record(record: dict, where: str) -> Paper:
    raw_id = record.get("id")
    if raw_id is None or (isinstance(raw_id, str) and not raw_id.strip()):
        raise InputError(f"{where}: missing the 'id' field")
    if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool):
        raise InputError(f"{where}: 'id' must be a string or an integer")
    paper_id = str(raw_id).strip()
    if not PAPER_ID.match(paper_id):
        shown = paper_id if len(paper_id) <= 80 else paper_id[:77] + "..."
        raise InputError(f"{where}: id {shown!r} is not a usable paper id: use {PAPER_ID_RULE}, so answers can cite it")

    abstract = record.get("abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        raise InputError(f"{where}: missing the 'abstract' field (paper {paper_id!r})")

    title = record.get("title")
    title = title.strip() if isinstance(title, str) and title.strip() else None
    venue = record.get("venue")
    venue = venue.strip() if isinstance(venue, str) and venue.strip() else None
    year = _parse_year(record.get("year"), where)
    if year is None and venue and (m := _YEAR_IN_TEXT.search(venue)):
        year = int(m.group(1))
    url = paper_url(paper_id, _parse_url(record.get("url"), where))
    area = _parse_area(record, where)
    status = _parse_status(record.get("status"), where)
    keywords = record.get("keywords")
    if isinstance(keywords, str):
        keywords_t = tuple(k.strip() for k in re.split(r"[;,]", keywords) if k.strip())
    elif isinstance(keywords, list):
        keywords_t = tuple(str(k).strip() for k in keywords if str(k).strip())
    else:
        keywords_t = ()
    return Paper(
        id=paper_id,
        abstract=" ".join(abstract.split()),
        title=title,
        year=year,
        venue=venue,
        keywords=keywords_t,
        source=where,
        url=url,
        area=area,
        status=status,
    )


def _parse_url(value: object, where: str) -> str | None:
    """An http(s) address, or None when absent or empty: the page links to it, so nothing else is let through."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{where}: 'url' must be a string, got {type(value).__name__}")
    url = value.strip()
    if not url:
        return None
    if len(url) > MAX_URL_CHARS or not _URL.match(url):
        shown = url if len(url) <= 80 else url[:77] + "..."
        raise InputError(f"{where}: 'url' {shown!r} is not an http:// or https:// address")
    return url


def _parse_area(record: dict, where: str) -> str | None:
    """The primary area (`primary_area`, or `area`), spaces tidied; None when absent or empty."""
    found: dict[str, str] = {}
    for name in ("primary_area", "area"):
        value = record.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InputError(f"{where}: {name!r} must be a string, got {type(value).__name__}")
        if " ".join(value.split()):
            found[name] = " ".join(value.split())
    if len(set(found.values())) > 1:
        raise InputError(
            f"{where}: 'primary_area' {found['primary_area']!r} and 'area' {found['area']!r} differ: give one"
        )
    area = next(iter(found.values()), None)
    if area is not None and len(area) > MAX_AREA_CHARS:
        raise InputError(f"{where}: 'primary_area' is over {MAX_AREA_CHARS} characters")
    return area


def _parse_status(value: object, where: str) -> str | None:
    """The decision as one word of DECISIONS; None when absent or empty."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{where}: 'status' must be a string, got {type(value).__name__}")
    try:
        return normalize_status(value)
    except ValueError:
        shown = value if len(value) <= 60 else value[:57] + "..."
        raise InputError(
            f"{where}: 'status' {shown!r} is not a decision (use one of {', '.join(DECISIONS)}, "
            "or OpenReview's 'accept (poster)', 'desk_rejected', …)"
        ) from None


def _parse_year(value: object, where: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        year = int(str(value).strip())
    except ValueError:
        raise InputError(f"{where}: 'year' must be a number, got {value!r}") from None
    if not 1900 <= year <= 2100:
        raise InputError(f"{where}: 'year' {year} is out of range")
    return year
