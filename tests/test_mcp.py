"""`rag.mcp_server` end to end: the official MCP client drives a real server process over stdio on the seed store.

One server process serves the whole module: a blocking portal runs the client's event loop in a thread, so the
tests stay plain functions and the session is entered and left in one task, as anyio requires.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent, Tool

UNLEARNING = "001-02"  # PURGE: unlearning in LLMs (seeds/001_*.txt, second abstract)
TIMEOUT_S = 120  # a cold start loads the embedding model and the reranker


@asynccontextmanager
async def _session(code: str, faults: list[Exception]) -> AsyncIterator[ClientSession]:
    """A session with a server process running `code`; what the server wrote that isn't protocol (a line that
    isn't JSON-RPC) is added to `faults` (the client would only log it and carry on)."""

    async def on_message(message: object) -> None:
        if isinstance(message, Exception):
            faults.append(message)

    # The tests' isolated environment (HOME, RAG_MODEL_DIR, HF_HUB_OFFLINE...) must reach the server: the SDK
    # passes on only a short safe list unless told.
    params = StdioServerParameters(command=sys.executable, args=["-c", code], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write, message_handler=on_message) as session:
        await session.initialize()
        yield session


@pytest.fixture(scope="module")
def faults() -> list[Exception]:
    return []


class Server:
    """The module's one server process, called synchronously through the portal's event loop."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal, self.session = portal, session

    def call(self, name: str, **arguments: object) -> CallToolResult:
        async def timed() -> CallToolResult:
            with anyio.fail_after(TIMEOUT_S):
                return await self.session.call_tool(name, arguments)

        return self.portal.call(timed)

    def tools(self) -> dict[str, Tool]:
        return {t.name: t for t in self.portal.call(self.session.list_tools).tools}


@pytest.fixture(scope="module")
def server(seed_store_dir, faults) -> Iterator[Server]:
    # Launched the way `rag mcp` runs it: the caller builds the Papers, run_mcp serves it.
    code = (
        "from rag.api import Papers; from rag.mcp_server import run_mcp; "
        f"run_mcp(Papers(store={str(seed_store_dir)!r}))"
    )
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(_session(code, faults)) as session:
        yield Server(portal, session)


def _payload(result: CallToolResult) -> dict:
    """A successful call's JSON object, checked to be the same in the structured and the text content."""
    assert not result.is_error, _text(result)
    assert json.loads(_text(result)) == result.structured_content
    return result.structured_content


def _text(result: CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    return result.content[0].text


def test_lists_the_six_tools_with_input_schemas(server):
    tools = server.tools()
    assert set(tools) == {"search_papers", "ask", "get_paper", "similar_papers", "count_papers", "export_papers"}
    assert tools["count_papers"].input_schema["required"] == ["topic"]
    assert {"paper_id", "text", "k", "status"} <= set(tools["similar_papers"].input_schema["properties"])
    assert tools["search_papers"].input_schema["required"] == ["query"]
    assert tools["ask"].input_schema["required"] == ["question"]
    assert tools["get_paper"].input_schema["required"] == ["id"]
    assert {"k", "year", "venue"} <= set(tools["ask"].input_schema["properties"])
    k = tools["ask"].input_schema["properties"]["k"]
    assert (k["type"], k["default"], k["minimum"], k["maximum"]) == ("integer", 5, 1, 100)
    assert all("[brackets]" in (tools[name].description or "") for name in tools)


def test_search_papers_returns_the_search_json(server):
    found = _payload(server.call("search_papers", query="machine unlearning", k=5))
    assert found["query"] == "machine unlearning" and len(found["results"]) == 5
    ids = [r["id"] for r in found["results"]]
    assert UNLEARNING in ids
    assert set(found["results"][0]) >= {"id", "title", "year", "venue", "score", "snippet"}
    restricted = _payload(server.call("search_papers", query="unlearning", k=3, year=2026))
    assert restricted["results"] and all(r["year"] == 2026 for r in restricted["results"])


def test_ask_returns_the_answer_json_with_checked_citations(server):
    answer = _payload(server.call("ask", question="which papers study unlearning?"))
    assert not answer["abstained"] and "[001-" in answer["answer"]
    assert UNLEARNING in answer["citations"]
    assert set(answer["citations"]) <= {s["id"] for s in answer["sources"]}
    assert answer["question"] == "which papers study unlearning?" and answer["query"]["search"] == "unlearning"


def test_get_paper_returns_the_full_abstract(server, seed_papers):
    expected = next(p for p in seed_papers if p.id == UNLEARNING)
    paper = _payload(server.call("get_paper", id=f"[{UNLEARNING}]"))  # cited form, brackets and all
    assert paper == {
        "id": UNLEARNING,
        "title": expected.title,
        "year": expected.year,
        "venue": expected.venue,
        "url": expected.url,
        "area": expected.area,
        "status": expected.status,
        "keywords": list(expected.keywords),
        "abstract": expected.abstract,
    }


def test_area_and_status_filter_and_every_source_carries_its_link(server):
    schema = server.tools()["search_papers"].input_schema["properties"]
    assert {"area", "status"} <= set(schema)
    every = _payload(server.call("search_papers", query="clustering", k=5))
    assert all(r["url"].startswith("https://openreview.net/forum?id=") and r["area"] for r in every["results"])
    spotlight = _payload(server.call("search_papers", query="clustering", k=5, status="spotlight"))
    assert {r["id"] for r in spotlight["results"]} == {"004-03", "004-05", "004-19"}
    assert {r["id"] for r in spotlight["results"]} != {r["id"] for r in every["results"]}
    answer = _payload(server.call("ask", question="which papers study unlearning?", area="LEARNING THEORY"))
    assert answer["query"]["area"] == "learning theory"
    assert answer["sources"] and {s["area"] for s in answer["sources"]} == {"learning theory"}


def test_similar_papers_finds_the_papers_on_a_paper_s_topic_with_the_sentences_that_show_it(server):
    found = _payload(server.call("similar_papers", paper_id="[000-02]", k=5))
    assert found["of"]["id"] == "000-02" and found["of"]["url"].startswith("https://openreview.net/forum?id=")
    ids = [p["id"] for p in found["papers"]]
    assert "000-02" not in ids and set(ids[:3]) == {"002-05", "002-06", "004-05"}
    first = found["papers"][0]
    assert first["overlaps"] and all(
        w.lower() in first["overlaps"][0]["theirs"].lower() for w in first["overlaps"][0]["shared"]
    )
    drafted = _payload(
        server.call("similar_papers", text="We forget specific training data in a trained language model.")
    )
    assert drafted["of"] is None and UNLEARNING in [p["id"] for p in drafted["papers"]]


def test_count_papers_counts_a_topic_by_year_and_decision(server):
    counted = _payload(server.call("count_papers", topic="how many papers use conformal prediction?"))
    assert counted["topic"] == "conformal prediction" and counted["count"] == 2 and counted["complete"]
    assert set(counted["members"]) == {"002-02", "004-09"}  # evals/questions.jsonl's conformal prediction papers
    assert {(y["year"], y["papers"]) for y in counted["by_year"]} == {(2025, 1), (2026, 1)}
    assert sum(s["papers"] for s in counted["by_status"]) == 2
    spotlight = _payload(server.call("count_papers", topic="multi-view clustering", status="spotlight"))
    assert spotlight["members"] == ["004-05"]


def test_export_papers_gives_bibtex_an_assistant_can_paste(server):
    import bibtexparser

    result = server.call("export_papers", ids=["[001-02]", "000-01"])
    assert not result.is_error
    entries = bibtexparser.loads(_text(result)).entries
    assert [e["note"].split(";")[0] for e in entries] == ["id 001-02", "id 000-01"]
    assert all(e["url"].startswith("https://openreview.net/forum?id=") for e in entries)
    rows = _text(server.call("export_papers", ids=["000-01"], format="csv")).splitlines()
    assert rows[0] == "id,title,year,venue,area,status,url" and rows[1].startswith("000-01,")


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("search_papers", {"query": "unlearning", "area": "nowhere"}, "no papers of area 'nowhere' in the store"),
        ("ask", {"question": "unlearning?", "status": "rejected"}, "no rejected papers in the store; its decisions"),
        ("ask", {"question": "unlearning?", "status": "maybe"}, "status: Input should be 'accepted', 'oral'"),
        ("get_paper", {"id": "999-99"}, "no paper with id '999-99'"),
        ("ask", {"question": "   "}, "the question is empty"),
        ("search_papers", {"query": "unlearning", "k": 0}, "k must be between 1 and 100, not 0"),
        ("ask", {"question": "which papers study unlearning?", "k": 1000}, "k must be between 1 and 100, not 1000"),
        ("search_papers", {"query": "unlearning", "k": "many"}, "k: Input should be a valid integer"),
        ("ask", {}, "question: Field required"),
        ("get_paper", {"id": ["001-02"]}, "id: Input should be a valid string"),
        ("similar_papers", {"paper_id": "999-99"}, "no paper '999-99' in the store"),
        ("similar_papers", {}, "give either a paper id or a text"),
        ("similar_papers", {"text": "graph nets"}, "the text is too short to compare"),
        ("count_papers", {"topic": "unlearning", "area": "nowhere"}, "no papers of area 'nowhere' in the store"),
        ("export_papers", {"ids": ["999-99"]}, "no paper with id '999-99'"),
        ("export_papers", {"ids": ["001-02"], "format": "ris"}, "format: Input should be 'bibtex'"),
    ],
)
def test_user_errors_come_back_as_one_line_tool_errors(server, tool, arguments, message):
    result = server.call(tool, **arguments)
    assert result.is_error
    text = _text(result)
    assert message in text and "\n" not in text and "Traceback" not in text


def test_the_server_survives_errors_and_writes_only_protocol(server, faults):
    # After the errors above (in whatever order they ran), the same process still answers.
    assert _payload(server.call("get_paper", id=UNLEARNING))["id"] == UNLEARNING
    assert faults == []


NOISY_SERVER = """
import os
from rag.api import Papers
from rag.mcp_server import run_mcp

class Noisy(Papers):
    def search(self, *args, **kwargs):
        print("a stray print")  # what a careless library does
        os.write(1, b"raw bytes on fd 1\\n")  # what a C extension or a progress bar does
        return super().search(*args, **kwargs)

run_mcp(Noisy())  # the per-user default store, empty: it fills itself with the seeds on first use
"""


def test_stray_output_and_a_self_filling_default_store_leave_the_protocol_intact():
    faults: list[Exception] = []

    async def exercise() -> CallToolResult:
        async with _session(NOISY_SERVER, faults) as session:
            with anyio.fail_after(TIMEOUT_S):
                return await session.call_tool("search_papers", {"query": "machine unlearning"})

    found = _payload(anyio.run(exercise))
    assert UNLEARNING in [r["id"] for r in found["results"]]
    assert faults == []  # the noise went to stderr, not onto the wire
