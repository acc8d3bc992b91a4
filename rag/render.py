"""Terminal rendering shared by `rag` (cli.py) and `rag chat` (chat.py), written once so the two cannot drift.

Source lines, the answer's footer, a paper's abstract, the streamed answer, search results, progress bars and
the one-line `error:`/`warning:` texts. rich is imported inside the functions: `rag --help` stays instant.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .corpus import first_words
from .llm import redact
from .text import tidy_latex

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from .corpus import Paper
    from .similar import Similar
    from .trend import Trend
    from .types import Answer, Source

SNIPPET_CHARS = 240  # of each search result's snippet


def stdout_console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


# -- failures ----------------------------------------------------------------------------------------


def error_text(message: str, key: str | None) -> str:
    """The one line for a failure; belt and braces: whatever reaches the terminal never carries the API key."""

    return f"error: {redact(message, key)}"


def warning_text(message: str, key: str | None) -> str:
    """Something failed and the command carried on (e.g. the extractive answer instead of the LLM's)."""

    return f"warning: {redact(message, key)}"


def debug() -> bool:
    """RAG_DEBUG=1: tracebacks instead of one line."""
    from .config import Settings

    return bool(Settings.env_value("debug"))


def unexpected(exc: BaseException) -> str:
    """The one line for a failure that is not a `RagError` (a bug, or a library's surprise)."""
    text = str(exc).strip()
    detail = text.splitlines()[0][:200] if text else ""
    return f"unexpected {exc.__class__.__name__}: {detail} (set RAG_DEBUG=1 for the traceback)"


# -- answers and papers ------------------------------------------------------------------------------


def write_stream(piece: str) -> None:
    """The answer as it is generated: straight to stdout, flushed, so each piece shows as it comes."""
    sys.stdout.write(piece)
    sys.stdout.flush()


def source_line(source: Source) -> str:
    """One paper: id, year, its relevance (the reranker's probability; the cosine when it is off), label, link."""
    year = source.year or "----"
    score = source.relevance if source.relevance is not None else source.score
    link = f"  {source.url}" if source.url else ""
    return f"[{source.id}] {year}  {score:.2f}  {source.label}{link}"


def print_sources(console: Console, sources: list[Source], heading: str) -> None:
    if not sources:
        return
    console.print()
    console.print(heading, style="bold")
    for source in sources:
        console.print("  " + source_line(source), markup=False)


def end_answer(result: Answer) -> None:
    """After a streamed answer: end its line, then the papers it cites and a note of citations removed."""
    sys.stdout.write("\n")
    # Cited papers in the order the answer cites them; all retrieved ones when it cites none.
    by_id = {s.id: s for s in result.sources}
    shown = [by_id[c] for c in result.citations if c in by_id] or result.sources
    print_sources(stdout_console(), shown, "Closest papers:" if result.abstained else "Sources:")
    if result.dropped_citations:
        stderr_console().print(
            f"note: removed {len(result.dropped_citations)} citation(s) to papers that were not retrieved: "
            + ", ".join(result.dropped_citations),
            style="dim",
            markup=False,
        )


def print_paper(console: Console, paper: Paper) -> None:
    """A paper's full abstract under its id, venue (or year), title, and decision, area and link: `rag show` and
    `/show`."""
    console.print(f"[{paper.id}] {paper.venue or paper.year or ''}", style="bold", markup=False)
    if paper.title:
        console.print(paper.title, markup=False)
    details = [part for part in (paper.status, paper.area, paper.url) if part]
    if details:
        console.print(" · ".join(details), markup=False)
    console.print()
    console.print(paper.abstract, markup=False)


def print_results(sources: list[Source], filters: dict[str, object]) -> None:
    """`rag search`: ranked source lines, each with the start of its snippet."""
    console = stdout_console()
    if filters:
        stderr_console().print(
            "filtered: " + ", ".join(f"{k} {v}" for k, v in filters.items()), style="dim", markup=False
        )
    if not sources:
        console.print("No papers match.")
    for rank, source in enumerate(sources, start=1):
        console.print(f"{rank:>2}. " + source_line(source), markup=False)
        snippet = tidy_latex(source.snippet)  # for reading; --json keeps the stored text
        cut = snippet[:SNIPPET_CHARS] + ("…" if len(snippet) > SNIPPET_CHARS else "")
        console.print("    " + cut, style="dim", markup=False)


def print_similar(paper: Paper | None, found: list[Similar]) -> None:
    """`rag similar`: the closest papers, each with the sentence pairs that make it close and the words they
    share."""
    console = stdout_console()
    of = f"[{paper.id}] {paper.title or first_words(paper.abstract)}" if paper is not None else "your text"
    console.print(f"Papers like {of}:", style="bold", markup=False)
    if not found:
        console.print("No papers match.")
    for rank, item in enumerate(found, start=1):
        console.print(f"{rank:>2}. " + source_line(item.source), markup=False)
        for overlap in item.overlaps:
            console.print(f"    shared: {', '.join(overlap.shared)}", style="dim", markup=False)
            console.print(f"      this: {_cut(overlap.yours)}", markup=False)
            console.print(f"      that: {_cut(overlap.theirs)}", markup=False)


def _cut(sentence: str, limit: int = SNIPPET_CHARS) -> str:
    return sentence if len(sentence) <= limit else sentence[:limit] + "…"


BAR_WIDTH = 30  # characters of the longest bar in `rag trend`


def print_trend(trend: Trend) -> None:
    """`rag trend`: the count, then bars by year (with each year's share of the store), decision and area, and
    the most relevant members."""
    console = stdout_console()
    bound = "" if trend.complete else "at least "
    console.print(
        f"{bound}{trend.count} papers on “{trend.topic}” ({trend.judged} candidates judged)",
        style="bold",
        markup=False,
    )
    if trend.left_out:
        console.print(
            f"left out, as asked: {len(trend.left_out)} on “{trend.excluding}” ({', '.join(trend.left_out)})",
            markup=False,
        )
    if not trend.count:
        return
    share = {y: f"   ({trend.share(y):.1%} of {trend.papers_by_year[y]:,} that year)" for y in trend.papers_by_year}
    for title, counts, notes in (
        ("by year", {str(y): n for y, n in trend.by_year.items()}, {str(y): share.get(y, "") for y in trend.by_year}),
        ("by decision", trend.by_status, {}),
        ("by area", trend.by_area, {}),
    ):
        if not counts:
            continue
        console.print()
        console.print(title, style="bold", markup=False)
        width = max(len(label) for label in counts)
        most = max(counts.values())
        for label, n in counts.items():
            bar = "█" * max(1, round(BAR_WIDTH * n / most))
            console.print(f"  {label:<{width}}  {bar} {n}{notes.get(label, '')}", markup=False)
    print_sources(console, trend.members[:5], "Most relevant:")
    from .trend import MEMBERSHIP

    console.print(f"Membership: {MEMBERSHIP}.", style="dim", markup=False)
    if not trend.complete:
        console.print(
            "Members reach the last candidates judged: more papers may be on the topic.", style="dim", markup=False
        )


# -- progress ----------------------------------------------------------------------------------------


@contextmanager
def ingest_progress(total: int) -> Iterator[Callable[[int, int | None], None]]:
    """A bar on stderr for embedding `total` papers; yields the ingest's `on_progress` callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
        console=stderr_console(),
        transient=False,
    ) as progress:
        task = progress.add_task("Embedding papers", total=total, rate="")
        started = time.perf_counter()
        first: list[int] = []  # papers already done (unchanged) when embedding began: not in the rate

        def update(done: int, _total: int | None) -> None:
            if not first:
                first.append(done)
            elapsed = time.perf_counter() - started
            rate = f"{(done - first[0]) / elapsed:5.1f} papers/s" if elapsed > 0.5 and done > first[0] else ""
            progress.update(task, completed=done, rate=rate)

        yield update


@contextmanager
def eval_progress() -> Iterator[Progress]:
    """Bars on stderr for `rag eval`, one task per retriever compared."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr_console(),
    ) as progress:
        yield progress
