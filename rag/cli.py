"""The `rag` command (ingest, ask, search, show, similar, trend, chat, eval, serve, mcp) and the `ask` shortcut.

Only typer and our light modules load at start-up; chromadb, onnxruntime, llama-index and openai are
imported by the commands that need them, so `--help` is instant. What the commands share (options, error
handling, settings) is in cli_common.py.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from . import __version__, render
from .cli_common import (
    AreaOpt,
    ChromaOpt,
    FormatOpt,
    JsonOpt,
    KOpt,
    RetrieverOpt,
    StatusOpt,
    StoreOpt,
    VenueOpt,
    YearOpt,
    check_backend,
    check_format,
    fail,
    friendly,
    ingest_with_progress,
    open_for_query,
    print_papers,
    settings_from,
    warn,
)
from .corpus import expand_paths, iter_papers, validate_files
from .errors import InputError
from .query import parse

app = typer.Typer(
    rich_markup_mode=None,  # help texts are plain: "[env: RAG_K]" must not be read as markup
    name="rag",
    help="Ask questions of research-paper abstracts; answers cite the papers that say it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

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
    paths: Annotated[
        list[Path], typer.Argument(metavar="PATH", help="Seed .txt lists, .jsonl, .jsonl.gz or .csv files, or folders.")
    ],
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Re-embed everything into a fresh collection.")] = False,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """Add papers to the store; unchanged papers are skipped, changed ones replaced."""
    from .embedding import get_embedder
    from .ingest import ingest_lock
    from .store import Store

    settings = settings_from(store, chroma_url)
    started = time.perf_counter()
    files = expand_paths(paths)
    with render.stderr_console().status("Checking the input files"):
        total = validate_files(files)  # a streaming pass: a bad record refuses everything before any write
    with ingest_lock(settings):
        target = Store(settings)
        papers = iter_papers(files, check_duplicates=False)
        report = ingest_with_progress(target, papers, get_embedder(settings), rebuild=rebuild, total=total)
        held = target.count_papers()  # the whole store's, not only this run's files
    elapsed = time.perf_counter() - started
    typer.echo(
        f"{held} paper{'s' if held != 1 else ''} in {settings.store_label}: {report.added} added, "
        f"{report.updated} updated, {report.unchanged} unchanged "
        f"({report.chunks_embedded} chunks embedded in {elapsed:.1f}s)"
    )


def ask_command(
    question: Annotated[list[str], typer.Argument(help="The question (quotes optional).", metavar="QUESTION")],
    k: KOpt = None,
    year: YearOpt = None,
    venue: VenueOpt = None,
    area: AreaOpt = None,
    status: StatusOpt = None,
    backend: Annotated[
        str | None, typer.Option("--backend", "-b", help="extractive | openai | local [env: RAG_BACKEND].")
    ] = None,
    min_score: Annotated[
        float | None, typer.Option("--min-score", help="Abstain below this score [env: RAG_MIN_SCORE].")
    ] = None,
    retriever: RetrieverOpt = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.1, help="Seconds to wait for the LLM endpoint [env: RAG_LLM_TIMEOUT]."),
    ] = None,
    as_json: JsonOpt = False,
    fmt: FormatOpt = None,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """Answer a question from the abstracts, citing paper ids."""
    from .pipeline import Pipeline
    from .wire import answer_json

    fmt = check_format(fmt, as_json)

    settings = settings_from(
        store, chroma_url, backend=backend, min_score=min_score, retriever=retriever, llm_timeout=timeout
    )
    query = parse(" ".join(question), year=year, venue=venue, area=area, status=status)
    backend_name = settings.backend
    check_backend(backend_name)
    store_, embedder = open_for_query(settings)

    result = None
    quiet = as_json or fmt is not None
    for event in Pipeline(store_, embedder, settings).run(query, k=k, backend=backend_name, stream=not quiet):
        if event.type == "warning":
            warn(event.text)
        elif event.type == "text" and not quiet:
            render.write_stream(event.text)
        elif event.type == "answer":
            result = event.answer
    assert result is not None
    if fmt is not None:
        by_id = {s.id: s for s in result.sources}
        if result.abstained:
            warn(f"no papers cited: {result.answer.splitlines()[0] if result.answer else 'the answer abstained'}")
        print_papers([by_id[c] for c in result.citations if c in by_id], fmt)
        return
    if as_json:
        typer.echo(json.dumps(answer_json(result), ensure_ascii=False, indent=2))
        return
    render.end_answer(result)


app.command("ask")(friendly(ask_command))


@app.command()
@friendly
def search(
    query: Annotated[list[str], typer.Argument(help="What to look for.", metavar="QUERY")],
    k: KOpt = None,
    year: YearOpt = None,
    venue: VenueOpt = None,
    area: AreaOpt = None,
    status: StatusOpt = None,
    retriever: RetrieverOpt = None,
    as_json: JsonOpt = False,
    fmt: FormatOpt = None,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """List the papers that best match a query, with scores."""
    from .pipeline import Pipeline
    from .wire import search_json

    fmt = check_format(fmt, as_json)

    settings = settings_from(store, chroma_url, retriever=retriever)
    parsed = parse(" ".join(query), year=year, venue=venue, area=area, status=status)
    store_, embedder = open_for_query(settings)
    found = Pipeline(store_, embedder, settings).retrieve(parsed, k=k)
    if fmt is not None:
        print_papers(found.sources, fmt)
        return
    if as_json:
        typer.echo(json.dumps(search_json(parsed, found.sources), ensure_ascii=False, indent=2))
        return
    render.print_results(found.sources, found.filters)


@app.command()
@friendly
def show(
    paper_id: Annotated[str, typer.Argument(metavar="ID", help="A paper id, e.g. 000-01.")],
    as_json: JsonOpt = False,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """Print one paper's full abstract."""
    settings = settings_from(store, chroma_url)
    store_, _ = open_for_query(settings)
    paper = store_.get_paper(paper_id.strip().strip("[]"))
    if as_json:
        from .wire import paper_json

        typer.echo(json.dumps(paper_json(paper), ensure_ascii=False, indent=2))
        return
    render.print_paper(render.stdout_console(), paper)


@app.command()
@friendly
def similar(
    paper_id: Annotated[str | None, typer.Argument(metavar="[ID]", help="A paper id, e.g. 001-02.")] = None,
    text: Annotated[str | None, typer.Option("--text", help="An abstract or a draft paragraph.")] = None,
    file: Annotated[
        Path | None, typer.Option("--file", help="Read the text from this file ('-': standard input).")
    ] = None,
    k: KOpt = None,
    year: YearOpt = None,
    venue: VenueOpt = None,
    area: AreaOpt = None,
    status: StatusOpt = None,
    as_json: JsonOpt = False,
    fmt: FormatOpt = None,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """The papers closest to a paper, or to a text (a related-work check), with the sentences that make them close."""
    from .catalogue import filters_where
    from .similar import similar as find_similar

    fmt = check_format(fmt, as_json)
    if file is not None:
        if text is not None:
            raise InputError("give --text or --file, not both")
        text = _read_text(file)
    paper_id = paper_id.strip().strip("[]").strip() if paper_id else None
    if (paper_id is None) == (text is None):
        raise InputError("give a paper id, or a text with --text or --file")
    filters = parse("papers", year=year, venue=venue, area=area, status=status)
    settings = settings_from(store, chroma_url)
    store_, embedder = open_for_query(settings)
    paper, found = find_similar(store_, embedder, settings, paper_id, text, k or 5, filters_where(store_, filters))
    if fmt is not None:
        print_papers([item.source for item in found], fmt)
        return
    if as_json:
        from .wire import similar_json

        typer.echo(json.dumps(similar_json(paper, found), ensure_ascii=False, indent=2))
        return
    render.print_similar(paper, found)


def _read_text(file: Path) -> str:
    """A text file's contents ('-': standard input), or one line saying why not."""
    import sys

    try:
        return sys.stdin.read() if str(file) == "-" else file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            f"cannot read {file}: {exc.strerror if isinstance(exc, OSError) else 'not UTF-8 text'}"
        ) from None


@app.command()
@friendly
def trend(
    topic: Annotated[list[str], typer.Argument(help='A topic, e.g. "machine unlearning".', metavar="TOPIC")],
    year: YearOpt = None,
    venue: VenueOpt = None,
    area: AreaOpt = None,
    status: StatusOpt = None,
    as_json: JsonOpt = False,
    fmt: FormatOpt = None,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """How many papers of the store are on a topic, by year, area and decision."""
    from .pipeline import Pipeline
    from .trend import trend as count

    fmt = check_format(fmt, as_json)
    query = parse(" ".join(topic), year=year, venue=venue, area=area, status=status)
    settings = settings_from(store, chroma_url)
    store_, embedder = open_for_query(settings)
    counted = count(Pipeline(store_, embedder, settings), query)
    if fmt is not None:
        print_papers(counted.members, fmt)
        return
    if as_json:
        from .wire import trend_json

        typer.echo(json.dumps(trend_json(counted), ensure_ascii=False, indent=2))
        return
    render.print_trend(counted)


@app.command("eval")
@friendly
def eval_command(
    files: Annotated[
        list[Path] | None,
        typer.Argument(metavar="FILE", help="Question sets (JSONL); default: the bundled evals/questions.jsonl."),
    ] = None,
    k: KOpt = None,
    backend: Annotated[str | None, typer.Option("--backend", "-b", help="extractive | openai | local.")] = None,
    retriever: Annotated[
        list[str] | None, typer.Option("--retriever", help="Retrieval variant; repeat to compare several.")
    ] = None,
    qtype: Annotated[list[str] | None, typer.Option("--type", help="Only questions of this type (repeatable).")] = None,
    split: Annotated[
        str | None,
        typer.Option("--split", help="dev | test: only that part of evals/questions.jsonl (evals/split.json)."),
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write results.json, report.md and chart.png here.")] = None,
    compare: Annotated[
        list[Path] | None, typer.Option("--compare", help="Compare two results.json files (give it twice).")
    ] = None,
    fail_under: Annotated[
        list[str] | None,
        typer.Option("--fail-under", help="METRIC=VALUE or TYPE:METRIC=VALUE; exit 3 when the run is worse."),
    ] = None,
    judge: Annotated[
        bool | None, typer.Option("--judge/--no-judge", help="LLM-judge scores (default: on for the openai backend).")
    ] = None,
    as_json: JsonOpt = False,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """Score retrieval, citations, coverage, abstention and latency on a question set."""
    from . import evaluation

    if compare:
        if len(compare) != 2:
            raise InputError("--compare takes exactly two results.json files")
        a, b = (_read_results(p) for p in compare)
        typer.echo(evaluation.compare_table(a, b, compare[0].parent.name or "A", compare[1].parent.name or "B"))
        return
    floors = [evaluation.parse_floor(spec) for spec in fail_under or []]
    settings = settings_from(store, chroma_url, backend=backend)
    paths = files or [evaluation.default_questions_file()]
    questions = evaluation.load_questions(paths)
    if split is not None:
        questions = evaluation.select_split(questions, split, evaluation.load_split(evaluation.default_split_file()))
    if qtype:
        questions = [q for q in questions if q.type in qtype]
        if not questions:
            raise InputError(f"no questions of type {', '.join(qtype)}")
    check_backend(settings.backend)
    store_, embedder = open_for_query(settings)
    k_value = k or settings.k
    # The judge needs an OpenAI-compatible endpoint; the local model is too weak to grade answers.
    use_judge = settings.backend == "openai" if judge is None else judge
    grader = evaluation.Judge(settings) if use_judge else None

    runs = []
    variants = retriever or [settings.retriever]
    with render.eval_progress() as progress:
        for variant in variants:
            task = progress.add_task(f"eval {variant}", total=len(questions))
            runs.append(
                evaluation.run_eval(
                    questions,
                    store_,
                    embedder,
                    settings,
                    variant,
                    settings.backend,
                    k_value,
                    grader,
                    on_progress=lambda done, task=task: progress.update(task, completed=done),
                )
            )
    meta = {
        "files": [str(p) for p in paths],
        "split": split,
        "n_questions": len(questions),
        "backend": settings.backend,
        "k": k_value,
        "store": settings.store_label,
        "papers": store_.count_papers(),
        "version": __version__,
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }
    payload = evaluation.results_payload(runs, meta)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        (out / "report.md").write_text(evaluation.markdown_report(payload))
        written = ["results.json", "report.md"]
        if evaluation.write_chart(payload, out / "chart.png"):
            written.append("chart.png")
        else:
            render.stderr_console().print(
                "note: no chart.png without matplotlib (pip install 'rag-papers[eval]')", markup=False
            )
    if as_json:
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        typer.echo(evaluation.overall_table(payload["runs"]))
        for run in payload["runs"]:
            typer.echo(f"\nretriever {run['retriever']}:\n" + evaluation.by_type_table(run))
            typer.echo(evaluation.latency_line(run))
        if out:
            typer.echo(f"\nwrote {', '.join(str(out / name) for name in written)}")
    failures = [f for run in payload["runs"] for f in evaluation.check_floors(run, floors)]
    if failures:
        raise fail("below the floor: " + "; ".join(failures), 3)


def _read_results(path: Path) -> dict:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InputError(f"{path}: not a results.json written by `rag eval --out`") from None
    if not isinstance(payload, dict) or not payload.get("runs"):
        raise InputError(f"{path}: not a results.json written by `rag eval --out`")
    return payload


@app.command()
@friendly
def chat(
    k: KOpt = None,
    year: YearOpt = None,
    area: AreaOpt = None,
    status: StatusOpt = None,
    backend: Annotated[
        str | None, typer.Option("--backend", "-b", help="extractive | openai | local [env: RAG_BACKEND].")
    ] = None,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
) -> None:
    """Hold a conversation about the papers: follow-ups, slash commands (/help), history. Reads piped lines too."""
    from .chat import run_chat
    from .query import status_filter

    status = status_filter(status)  # a bad value is refused before the store opens
    settings = settings_from(store, chroma_url, backend=backend)
    check_backend(settings.backend)
    store_, embedder = open_for_query(settings)
    code = run_chat(store_, embedder, settings, k=k, year=year, area=area, status=status)
    if code:
        raise typer.Exit(code)


LOOPBACK = ("127.0.0.1", "localhost", "::1")


@app.command()
@friendly
def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; off loopback RAG_SERVE_TOKEN is required.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0: any free one).")] = 8000,
    store: StoreOpt = None,
    chroma_url: ChromaOpt = None,
    access_log: Annotated[
        bool, typer.Option("--access-log/--no-access-log", help="A line per request on stderr (no query strings).")
    ] = True,
) -> None:
    """Serve the web page, the JSON API and an OpenAI-compatible endpoint (/v1) over HTTP."""
    import socket

    settings = settings_from(store, chroma_url)
    check_backend(settings.backend)
    token = settings.serve_token
    if token is not None:
        token = token.strip()
        if not token:
            raise InputError(
                "RAG_SERVE_TOKEN is blank: set it to a secret (clients send it as a bearer token), or unset it"
            )
    if host not in LOOPBACK and not token:
        raise InputError(
            f"refusing to listen on {host} without a token: set RAG_SERVE_TOKEN (clients then send "
            "`Authorization: Bearer <token>`), or serve on 127.0.0.1"
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    open_for_query(settings)  # the first run fills the default store, with its progress shown here

    import uvicorn

    from .api import Papers
    from .server.app import ServeOptions, create_app, warm_up

    papers = Papers(settings=settings)
    # Warmed here, not in the app's startup: a store that cannot be read is then this command's one-line error,
    # where uvicorn would print its traceback.
    pace = warm_up(papers)

    def listed(value: str | None) -> tuple[str, ...]:
        return tuple(item.strip() for item in (value or "").split(",") if item.strip())

    hosts = listed(settings.serve_allowed_hosts)
    if not hosts and host not in LOOPBACK:
        # Off loopback a token is required, and a page that rebinds a name to this address cannot know it.
        hosts = ("*",)
    options = ServeOptions(
        token=token,
        cors_origins=listed(settings.serve_cors_origins),
        allowed_hosts=(*hosts, host),
        backends=frozenset({"extractive", settings.backend}),
        access_log=access_log,
        max_pending=settings.serve_max_pending,
        max_wait=settings.serve_max_wait,
        workers=settings.serve_workers,
        pace=pace,
    )
    bound = sock.getsockname()[1]
    where = f"http://{'[' + host + ']' if ':' in host else host}:{bound}"

    class AnnouncedServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            # The URL only once it answers: after the warm-up (the app's lifespan) and the listen, both in here.
            await super().startup(sockets=sockets)
            if self.started and not self.should_exit:
                render.stderr_console().print(
                    f"rag serve · store {settings.store_label} · {where} (the page at /, OpenAI-compatible at "
                    f"{where}/v1) · Ctrl-C stops",
                    markup=False,
                    soft_wrap=True,
                )

    config = uvicorn.Config(
        create_app(papers, options),
        log_level="warning",
        timeout_graceful_shutdown=5,
    )
    try:
        AnnouncedServer(config).run(sockets=[sock])
    except KeyboardInterrupt:
        # Ctrl-C is how one stops it: uvicorn shuts down gracefully, then re-raises the SIGINT it caught.
        return


@app.command()
@friendly
def mcp(store: StoreOpt = None, chroma_url: ChromaOpt = None) -> None:
    """Serve the papers to an assistant over MCP (stdio): tools search_papers, ask, get_paper."""
    from .api import Papers
    from .mcp_server import run_mcp

    run_mcp(Papers(settings=settings_from(store, chroma_url)))


# -- entry points ------------------------------------------------------------------------------------

ask_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
ask_app.command(help="Answer a question from the abstracts, citing paper ids.")(friendly(ask_command))


def main() -> None:
    app()


def ask_main() -> None:
    ask_app()
