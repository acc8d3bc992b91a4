"""`rag mcp`: the papers as an MCP server over stdio, for assistants such as Claude Desktop.

    from rag.api import Papers
    from rag.mcp_server import run_mcp
    run_mcp(Papers(store="~/papers"))       # serves on stdin/stdout until the client closes stdin

Six tools, each a thin call into `Papers`: `search_papers`, `ask`, `get_paper`, `similar_papers` and
`count_papers`, returning the same JSON objects as `rag search --json`, `rag ask --json`, `rag show --json`,
`rag similar --json` and `rag trend --json`, and `export_papers`, the text of `--format bibtex|markdown|csv`.
A failure the user can cause (an empty question, an unknown id, a missing store) comes back as a tool error
carrying the `RagError`'s one-line message, so the assistant can read it and correct itself; anything else is an
error result naming only the tool, with the traceback on stderr. The server never dies of a bad call.

stdout is the transport: while serving, the SDK points file descriptor 1 at stderr and talks over a private
duplicate, so a stray print or progress bar (the default store filling itself on first use) lands on stderr
instead of corrupting the protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from . import __version__
from .config import K_MAX, K_MIN, check_k
from .errors import RagError
from .query import parse
from .wire import answer_json, paper_json, search_json, similar_json, trend_json

if TYPE_CHECKING:
    from .api import Papers

T = TypeVar("T")


# The argument types, module-level so the SDK can resolve the tools' (postponed) annotations into schemas.
# k's bounds are advertised in the schema but checked by `_check_k`, not by pydantic: pydantic's report is a
# multi-line block, and a user error should read as one line like every other.
K = Annotated[
    int,
    Field(
        description=f"How many papers to retrieve ({K_MIN}-{K_MAX}).",
        json_schema_extra={"minimum": K_MIN, "maximum": K_MAX},
    ),
]
Year = Annotated[int | None, Field(description="Only papers from this year, e.g. 2025.")]
Venue = Annotated[str | None, Field(description='Only papers from this venue, e.g. "ICLR 2025".')]
Area = Annotated[
    str | None,
    Field(
        description='Only papers of this primary area, e.g. "learning theory" (any case; an unknown one is an '
        "error listing the store's areas)."
    ),
]
Status = Annotated[
    Literal["accepted", "oral", "spotlight", "poster", "rejected", "withdrawn"] | None,
    Field(description="Only papers of this decision; accepted is oral, spotlight or poster."),
]
Question = Annotated[str, Field(description="A question in plain language, e.g. 'which papers study unlearning?'.")]
SearchQuery = Annotated[str, Field(description="What to look for: a topic, method, or a paper's coined name.")]
PaperId = Annotated[str, Field(description='A paper id as cited in answers, e.g. "001-02" (brackets are ignored).')]
MaybePaperId = Annotated[
    str | None, Field(description='The paper to find papers like, by id, e.g. "001-02" (or give `text`).')
]
DraftText = Annotated[
    str | None, Field(description="An abstract or a draft paragraph to find papers like (or give `paper_id`).")
]
Topic = Annotated[str, Field(description='A topic, e.g. "machine unlearning", or "how many papers study X?".')]
PaperIds = Annotated[list[str], Field(description='Paper ids as cited in answers, e.g. ["001-02", "000-01"].')]
Format = Annotated[Literal["bibtex", "markdown", "csv"], Field(description="bibtex (default), markdown or csv.")]

INSTRUCTIONS = (
    "Question answering over a store of research-paper abstracts (ICLR). Use `ask` for a question that wants an "
    "answer, `search_papers` to list matching papers, `get_paper` for one paper's full abstract, `similar_papers` "
    "for the papers closest to a paper or a draft (a related-work check), and `count_papers` for how many papers "
    "are on a topic, by year, area and decision, and `export_papers` for BibTeX, Markdown or CSV. Papers are "
    "identified by ids such as 001-02; answers cite them in [brackets], and every cited id is one of the "
    "returned sources. Quote those ids when you relay an answer."
)

ASK = (
    "Answer a question from the stored paper abstracts, citing the papers that support each statement by id in "
    "[brackets], e.g. [001-02]. Returns {question, query, answer, citations, sources, abstained, backend, "
    "dropped_citations, timings_ms, usage, warnings}: `answer` is the text to relay; `citations` are the cited "
    "ids, all among `sources` (the retrieved papers with scores, snippets, each paper's `url`, primary `area` "
    "and decision `status`). When the abstracts don't answer the question, `abstained` is true and `answer` says "
    "why; don't fill the gap from elsewhere as if the papers said it. A year or venue written in the question "
    '("ICLR 2025 papers on X") or a decision ("accepted orals on X") is applied as a filter; `area` only as an '
    "argument."
)

SEARCH = (
    "Find the papers that best match a query, best first (hybrid dense + keyword retrieval, reranked). Returns "
    "{query, results: [{id, title, year, venue, url, area, status, score, relevance?, snippet}]}: `snippet` is the "
    "passage that "
    "matched; `relevance` (when present) is the reranker's probability that the paper is on topic. Cite a "
    "paper by its id in [brackets]; call get_paper for its full abstract."
)

GET_PAPER = (
    "The full record of one paper by id (as cited in [brackets] by ask and search_papers): "
    "{id, title, year, venue, url, area, status, keywords, abstract}: `url` is the paper's page (OpenReview's "
    "forum for an OpenReview id), `status` its decision. An unknown id is an error."
)


SIMILAR = (
    "The papers closest to one stored paper (by `paper_id`; itself left out) or to a text (`text`: an abstract or "
    "a draft paragraph): a related-work check. Returns {of, papers: [{id, title, label, year, venue, url, area, "
    "status, score, snippet, overlaps: [{yours, theirs, shared}]}]}: `score` is the closeness (mean best-chunk "
    "cosine), each overlap a sentence of the paper or text asked about and one of the similar paper that share "
    "the topic words in `shared`. Cite a paper by its id in [brackets]."
)

COUNT = (
    "How many stored papers are on a topic, by year (with the store's papers of each year and the share), primary "
    "area and decision; each paper judged on the topic as a list's members are. Returns {topic, count, complete, "
    "judged, by_year, by_area, by_status, members, sample, membership}: when `complete` is false the count is a "
    "lower bound (members reach the depth read); `sample` holds the most relevant members as sources. Cite a "
    "paper by its id in [brackets]."
)


EXPORT = (
    "The papers with these ids (as cited in [brackets] by the other tools), in the order given, as BibTeX entries "
    "(title, booktitle, year, url, a note with the id and decision; a stable key per paper), a Markdown list or "
    "CSV rows: the text to paste into a LaTeX file, notes or a spreadsheet. An unknown id is an error."
)


def _user_errors(call: Callable[[], T]) -> T:
    """`call()`, with a `RagError` turned into a tool error: its one-line message reaches the assistant (the SDK
    would otherwise hide the text of any other exception behind "Error executing tool")."""
    try:
        return call()
    except RagError as exc:
        raise ToolError(str(exc)) from None


class PapersServer(MCPServer):
    """The SDK's server, with argument errors in one line: it reports pydantic's whole multi-line text (the
    field, the message, the input, a documentation URL), where an assistant needs the field and what to fix."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            problems = []
            for error in cause.errors()[:3]:
                where = ".".join(str(part) for part in error.get("loc", ())) or "arguments"
                problems.append(f"{where}: {error.get('msg', 'invalid')}")
            raise ToolError(f"Error executing tool {name}: {'; '.join(problems)}") from cause


def build_server(papers: Papers) -> MCPServer:
    """The MCP server over `papers`, tools registered, not yet serving (tests and other transports use it)."""
    # WARNING: the SDK configures the root logger at this level (on stderr); INFO would add a line per call
    # and every library's chatter to the client's log.
    server = PapersServer("rag-papers", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    # The SDK runs plain (non-async) tools in worker threads, so a slow answer doesn't stall the session.
    @server.tool(description=SEARCH)
    def search_papers(
        query: SearchQuery,
        k: K = 5,
        year: Year = None,
        venue: Venue = None,
        area: Area = None,
        status: Status = None,
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            # a bad query raises before the store opens
            parsed = parse(query, year=year, venue=venue, area=area, status=status)
            return search_json(parsed, papers.search_query(parsed, k=check_k(k)).sources)

        return _user_errors(run)

    @server.tool(description=ASK)
    def ask(
        question: Question,
        k: K = 5,
        year: Year = None,
        venue: Venue = None,
        area: Area = None,
        status: Status = None,
    ) -> dict[str, Any]:
        return _user_errors(
            lambda: answer_json(papers.ask(question, k=check_k(k), year=year, venue=venue, area=area, status=status))
        )

    @server.tool(description=GET_PAPER)
    def get_paper(id: PaperId) -> dict[str, Any]:  # `id`: the name the assistant sees
        # An assistant may copy the id with its citation brackets, as `rag show` allows.
        return _user_errors(lambda: paper_json(papers.get(id.strip().strip("[]").strip())))

    @server.tool(description=SIMILAR)
    def similar_papers(
        paper_id: MaybePaperId = None,
        text: DraftText = None,
        k: K = 5,
        year: Year = None,
        venue: Venue = None,
        area: Area = None,
        status: Status = None,
    ) -> dict[str, Any]:
        paper_id = paper_id.strip().strip("[]").strip() if paper_id else None
        return _user_errors(
            lambda: similar_json(
                *papers.similar(paper_id, text, k=check_k(k), year=year, venue=venue, area=area, status=status)
            )
        )

    @server.tool(description=COUNT)
    def count_papers(
        topic: Topic, year: Year = None, venue: Venue = None, area: Area = None, status: Status = None
    ) -> dict[str, Any]:
        return _user_errors(lambda: trend_json(papers.trend(topic, year=year, venue=venue, area=area, status=status)))

    @server.tool(description=EXPORT)
    def export_papers(ids: PaperIds, format: Format = "bibtex") -> str:  # `format`: the name the assistant sees
        from .export import export

        def run() -> str:
            wanted = list(dict.fromkeys(i.strip().strip("[]").strip() for i in ids if i.strip()))
            return export([papers.get(i) for i in wanted], format)

        return _user_errors(run)

    return server


def run_mcp(papers: Papers) -> None:
    """Serve `papers` over MCP on stdin/stdout until the client closes stdin."""
    build_server(papers).run("stdio")
