"""The `rag` command (ingest, ask, search, show, chat) and the `ask` shortcut.

Only typer and our light modules load at start-up; chromadb, onnxruntime, llama-index and openai are
imported by the commands that need them, so `--help` is instant.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from . import __version__
from .config import Settings
from .errors import InputError, RagError, StoreError

if TYPE_CHECKING:
    from .answer import Answer
    from .embedding import Embedder
    from .retrieval import Source
    from .store import Store

app = typer.Typer(
    name="rag",
    help="Ask questions of research-paper abstracts; answers cite the papers that say it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

StoreOpt = Annotated[
    Path | None,
    typer.Option("--store", help="Store directory [env: RAG_STORE; default: per-user data dir]."),
]
ChromaOpt = Annotated[
    str | None, typer.Option("--chroma-url", help="Use a Chroma server instead [env: RAG_CHROMA_URL].")
]
KOpt = Annotated[int | None, typer.Option("--k", "-k", min=1, max=100, help="Papers to retrieve [env: RAG_K].")]
YearOpt = Annotated[int | None, typer.Option("--year", help="Only papers from this year.")]
VenueOpt = Annotated[str | None, typer.Option("--venue", help='Only papers from this venue, e.g. "ICLR 2025".')]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")]


# -- plumbing ----------------------------------------------------------------------------------------


def _fail(message: str, code: int) -> typer.Exit:
    key = os.environ.get("OPENAI_API_KEY")
    if key and len(key) >= 6:
        message = message.replace(key, "***")
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def friendly(command):
    """Turn every failure into one line on stderr and a non-zero exit; RAG_DEBUG=1 shows tracebacks."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except RagError as exc:
            raise _fail(str(exc), exc.exit_code) from None
        except KeyboardInterrupt:
            raise _fail("interrupted", 130) from None
        except Exception as exc:
            if os.environ.get("RAG_DEBUG"):
                raise
            detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
            raise _fail(
                f"unexpected {exc.__class__.__name__}: {detail} (set RAG_DEBUG=1 for the traceback)", 1
            ) from None

    return wrapper


def _settings(store: Path | None, chroma_url: str | None, **overrides) -> Settings:
    settings = Settings.from_env()
    if store is not None:
        overrides["store"] = store.expanduser()
    if chroma_url:
        overrides["chroma_url"] = chroma_url
    overrides = {k: v for k, v in overrides.items() if v is not None}
    return replace(settings, **overrides)


def _uses_default_store(store: Path | None, settings: Settings) -> bool:
    return store is None and not os.environ.get("RAG_STORE") and not settings.chroma_url


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def _stdout_console():
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def _ingest_with_progress(store: Store, papers, embedder: Embedder, rebuild: bool = False):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
        console=_stderr_console(),
        transient=False,
    ) as progress:
        task = progress.add_task("Embedding papers", total=len(papers), rate="")
        started = time.perf_counter()
        first: list[int] = []  # papers already done (unchanged) when embedding began

        def update(done: int, total: int) -> None:
            if not first:
                first.append(done)
            elapsed = time.perf_counter() - started
            rate = f"{(done - first[0]) / elapsed:5.1f} papers/s" if elapsed > 0.5 and done > first[0] else ""
            progress.update(task, completed=done, total=total, rate=rate)

        return store.ingest(papers, embedder, rebuild=rebuild, on_progress=update)


def _open_for_query(settings: Settings, auto_seed: bool) -> tuple[Store, Embedder]:
    """The store and embedder; an empty default store is first filled with the bundled seeds."""
    from .embedding import get_embedder
    from .store import Store

    store = Store(settings)
    embedder = get_embedder(settings)
    if store.collection(embedder) is None or store.collection().count() == 0:
        if not auto_seed:
            raise StoreError(f"the store at {settings.store_label} is empty: add papers with `rag ingest FILE...`")
        from .corpus import bundled_seeds_dir, load_papers

        papers = load_papers([bundled_seeds_dir()])
        _stderr_console().print(
            f"First run: indexing the {len(papers)} bundled seed abstracts into {settings.store_label}"
        )
        _ingest_with_progress(store, papers, embedder)
        store._collection = None
    return store, embedder


def _source_line(source: Source) -> str:
    year = source.year or "----"
    return f"[{source.id}] {year}  {source.score:.2f}  {source.label}"


def _print_sources(console, sources: list[Source], heading: str) -> None:
    if not sources:
        return
    console.print()
    console.print(heading, style="bold")
    for source in sources:
        console.print("  " + _source_line(source), markup=False)


# -- commands ----------------------------------------------------------------------------------------


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rag {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """Ask questions of research-paper abstracts; answers cite the papers that say it."""


@app.command()
@friendly
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Seed .txt lists, .jsonl, .jsonl.gz or .csv files, or folders.")],
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Re-embed everything into a fresh collection.")] = False,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """Add papers to the store; unchanged papers are skipped, changed ones replaced."""
    from .corpus import load_papers
    from .embedding import get_embedder
    from .store import Store

    settings = _settings(store, chroma_url)
    started = time.perf_counter()
    papers = load_papers(paths)  # validates everything before the store is touched
    target = Store(settings)
    report = _ingest_with_progress(target, papers, get_embedder(settings), rebuild=rebuild)
    elapsed = time.perf_counter() - started
    typer.echo(
        f"{report.total} papers in {settings.store_label}: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged ({report.chunks_embedded} chunks embedded in {elapsed:.1f}s)"
    )


def ask_command(
    question: Annotated[list[str], typer.Argument(help="The question (quotes optional).")],
    k: KOpt = None,
    year: YearOpt = None,
    venue: VenueOpt = None,
    backend: Annotated[
        str | None, typer.Option("--backend", "-b", help="extractive | openai [env: RAG_BACKEND].")
    ] = None,
    min_score: Annotated[
        float | None, typer.Option("--min-score", help="Abstain below this score [env: RAG_MIN_SCORE].")
    ] = None,
    as_json: JsonOpt = False,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """Answer a question from the abstracts, citing paper ids."""
    from .answer import ask, clean_question

    settings = _settings(store, chroma_url, backend=backend, min_score=min_score)
    text = clean_question(" ".join(question))
    backend_name = settings.backend
    if backend_name not in ("extractive", "openai"):
        raise InputError(f"unknown backend {backend_name!r} (choose from: extractive, openai)")
    store_, embedder = _open_for_query(settings, _uses_default_store(store, settings))

    if as_json:
        result = ask(text, store_, embedder, settings, backend_name, k=k, year=year, venue=venue)
        typer.echo(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
        return

    def show(piece: str) -> None:
        sys.stdout.write(piece)
        sys.stdout.flush()

    result = ask(text, store_, embedder, settings, backend_name, k=k, year=year, venue=venue, on_text=show)
    sys.stdout.write("\n")
    _print_answer_footer(result)


def _print_answer_footer(result: Answer) -> None:
    console = _stdout_console()
    cited = set(result.citations)
    shown = [s for s in result.sources if s.id in cited] or result.sources
    _print_sources(console, shown, "Closest papers:" if result.abstained else "Sources:")
    if result.dropped_citations:
        _stderr_console().print(
            f"note: removed {len(result.dropped_citations)} citation(s) to papers that were not retrieved: "
            + ", ".join(result.dropped_citations),
            style="dim",
            markup=False,
        )


app.command("ask")(friendly(ask_command))


@app.command()
@friendly
def search(
    query: Annotated[list[str], typer.Argument(help="What to look for.")],
    k: KOpt = None,
    year: YearOpt = None,
    venue: VenueOpt = None,
    as_json: JsonOpt = False,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """List the papers that best match a query, with scores."""
    from .answer import clean_question
    from .retrieval import retrieve

    settings = _settings(store, chroma_url)
    text = clean_question(" ".join(query))
    store_, embedder = _open_for_query(settings, _uses_default_store(store, settings))
    found = retrieve(text, store_, embedder, settings, k=k, year=year, venue=venue)
    if as_json:
        payload = {"query": text, "results": [s.to_json() for s in found.sources]}
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    console = _stdout_console()
    if not found.sources:
        console.print("No papers match.")
    for rank, source in enumerate(found.sources, start=1):
        console.print(f"{rank:>2}. " + _source_line(source), markup=False)
        console.print(
            "    " + source.snippet[:240] + ("…" if len(source.snippet) > 240 else ""),
            style="dim",
            markup=False,
        )


@app.command()
@friendly
def show(
    paper_id: Annotated[str, typer.Argument(metavar="ID", help="A paper id, e.g. 000-01.")],
    as_json: JsonOpt = False,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """Print one paper's full abstract."""
    settings = _settings(store, chroma_url)
    store_, _ = _open_for_query(settings, _uses_default_store(store, settings))
    paper = store_.get_paper(paper_id.strip().strip("[]"))
    if as_json:
        payload = {
            "id": paper.id,
            "title": paper.title,
            "year": paper.year,
            "venue": paper.venue,
            "keywords": list(paper.keywords),
            "abstract": paper.abstract,
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    console = _stdout_console()
    console.print(f"[{paper.id}] {paper.venue or paper.year or ''}", style="bold", markup=False)
    if paper.title:
        console.print(paper.title, markup=False)
    console.print()
    console.print(paper.abstract, markup=False)


@app.command()
@friendly
def chat(
    k: KOpt = None,
    year: YearOpt = None,
    backend: Annotated[
        str | None, typer.Option("--backend", "-b", help="extractive | openai [env: RAG_BACKEND].")
    ] = None,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """Hold a conversation about the papers: follow-ups, slash commands (/help), history. Reads piped lines too."""
    from .chat import run_chat

    settings = _settings(store, chroma_url, backend=backend)
    if settings.backend not in ("extractive", "openai"):
        raise InputError(f"unknown backend {settings.backend!r} (choose from: extractive, openai)")
    store_, embedder = _open_for_query(settings, _uses_default_store(store, settings))
    # The CLI's printing helpers are handed in: chat sits below the CLI and must not import it.
    code = run_chat(
        store_,
        embedder,
        settings,
        k=k,
        year=year,
        print_sources=_print_sources,
        print_footer=_print_answer_footer,
    )
    if code:
        raise typer.Exit(code)


# -- entry points ------------------------------------------------------------------------------------

ask_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
ask_app.command(help="Answer a question from the abstracts, citing paper ids.")(friendly(ask_command))


def main() -> None:
    app()


def ask_main() -> None:
    ask_app()
