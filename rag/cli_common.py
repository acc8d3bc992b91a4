"""What every `rag` command shares: the option declarations, `friendly` (a failure is one line on stderr and an exit
status), the settings from flags and environment, and opening the store with the first run's progress shown.

Kept apart from cli.py so the commands read as commands; as light to import as cli.py itself (typer and our light
modules only: chromadb, onnxruntime and the backends load inside the functions that need them).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from . import render
from .config import Settings
from .errors import InputError, RagError

if TYPE_CHECKING:
    from .embedding import Embedder
    from .ingest import IngestReport
    from .store import Store

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
AreaOpt = Annotated[
    str | None, typer.Option("--area", help='Only papers of this primary area, e.g. "learning theory" (any case).')
]
StatusOpt = Annotated[
    str | None,
    typer.Option(
        "--status",
        help="Only papers of this decision: accepted (oral|spotlight|poster), oral, spotlight, "
        "poster, rejected, withdrawn.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")]
FormatOpt = Annotated[
    str | None,
    typer.Option("--format", help="bibtex | markdown | csv: print the cited or listed papers in that format."),
]
RetrieverOpt = Annotated[
    str | None,
    typer.Option("--retriever", help="hybrid | hybrid-rrf | dense | lexical [env: RAG_RETRIEVER; default hybrid]."),
]

F = TypeVar("F", bound=Callable[..., Any])


def _api_key() -> str | None:
    # This one field alone: a failure is reported even when another setting is bad.
    return Settings.env_value("llm_api_key")


def fail(message: str, code: int) -> typer.Exit:
    """Print `message` as the one `error:` line (the API key masked) and return the exit to raise."""
    typer.echo(render.error_text(message, _api_key()), err=True)
    return typer.Exit(code)


def warn(message: str) -> None:
    """One line on stderr: something failed, and the command carried on (e.g. without the LLM)."""
    render.stderr_console().print(render.warning_text(message, _api_key()), style="dim", markup=False)


def friendly(command: F) -> F:
    """Turn every failure into one line on stderr and a non-zero exit; RAG_DEBUG=1 shows tracebacks."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except RagError as exc:
            raise fail(str(exc), exc.exit_code) from None
        except KeyboardInterrupt:
            raise fail("interrupted", 130) from None
        except BrokenPipeError:
            # `rag ask … | head`: the reader has what it wanted. Exit quietly with 1, as rich does for the lines
            # it prints; stdout goes to /dev/null so Python's final flush does not fail again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise typer.Exit(1) from None
        except Exception as exc:
            if render.debug():
                raise
            raise fail(render.unexpected(exc), 1) from None

    return wrapper  # type: ignore[return-value]


def check_backend(name: str) -> None:
    from .backends import BACKENDS  # the backends' modules are heavy: only when a command answers

    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r} (choose from: {', '.join(BACKENDS)})")


def settings_from(store: Path | None, chroma_url: str | None, **overrides: Any) -> Settings:
    """The environment's settings, overridden by the flags given (None: not given)."""
    settings = Settings.from_env()
    if store is not None:
        overrides["store"] = store.expanduser()
    if chroma_url:
        overrides["chroma_url"] = chroma_url
    overrides = {k: v for k, v in overrides.items() if v is not None}
    return replace(settings, **overrides)


def ingest_with_progress(
    store: Store, papers, embedder: Embedder, rebuild: bool = False, total: int | None = None
) -> IngestReport:
    from .ingest import ingest

    total = len(papers) if total is None else total
    with render.ingest_progress(total) as update:
        return ingest(store, papers, embedder, rebuild=rebuild, on_progress=update, total=total)


def open_for_query(settings: Settings) -> tuple[Store, Embedder]:
    """The store and embedder (`rag.api.open_store`), with the first run's seeding shown as progress."""
    from .api import is_default_store, open_store

    def note(text: str) -> None:
        render.stderr_console().print(text, markup=False)

    return open_store(settings, is_default_store(settings), ingest=ingest_with_progress, on_note=note)


def check_format(fmt: str | None, as_json: bool) -> str | None:
    """A `--format` value checked before any work: one of rag.export.FORMATS, and not with --json."""
    from .export import FORMATS

    if fmt is None:
        return None
    if as_json:
        raise InputError("give --json or --format, not both")
    name = fmt.strip().lower()
    if name not in FORMATS:
        raise InputError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    return name


def print_papers(papers: list, fmt: str) -> None:
    """`--format`: the papers as BibTeX, Markdown or CSV on stdout (rag.export), nothing else there."""
    from .export import export

    typer.echo(export(papers, fmt), nl=False)
