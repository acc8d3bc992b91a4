"""`rag serve`'s next steps after an answer, over HTTP against a real server on 127.0.0.1 over the seed store: papers
like a paper or a text (/api/similar), how many papers are on a topic (/api/trend), the papers as BibTeX, Markdown
or CSV (/api/export, and `format=` on /api/ask, /api/search, /api/similar and /api/trend), their filters and their
one-line errors."""

from __future__ import annotations

import csv
import io
import re

import bibtexparser
import httpx
import pytest

from .serving import Server, running_server

MULTI_VIEW = "000-02"  # a multi-view clustering paper (ICLR 2026, poster)
# The seeds' other multi-view clustering papers; 004-05 is the one spotlight of them.
OTHER_MULTI_VIEW = {"002-05", "002-06", "004-05"}
CONFORMAL = {"002-02", "004-09"}  # the seeds' conformal prediction papers (evals/questions.jsonl), 2026 and 2025
SPOTLIGHTS = {"004-03", "004-05", "004-19"}  # the seeds' three spotlight papers
PURGE = "001-02"
UNLEARNING = "which papers study unlearning?"
DRAFT = (
    "We study incomplete multi-view clustering, where some views of each sample are missing, and learn a shared "
    "graph across the views to recover the clusters."
)


@pytest.fixture(scope="module")
def server(seed_store_dir) -> Server:
    with running_server(seed_store_dir, "--no-access-log") as running:
        yield running


@pytest.fixture()
def http(server) -> httpx.Client:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        yield client


def one_line_error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error and "\n" not in error and "Traceback" not in response.text
    return error


def bibtex_entries(text: str) -> list[dict]:
    return bibtexparser.loads(text).entries


# -- papers like this ----------------------------------------------------------------------------------------


def test_papers_like_a_stored_paper_are_the_other_multi_view_clustering_papers(http):
    body = http.get("/api/similar", params={"id": MULTI_VIEW}).json()
    assert body["of"] == {"id": MULTI_VIEW, "title": None, "url": "https://openreview.net/forum?id=KAGR7Mqu4h"}
    ids = [paper["id"] for paper in body["papers"]]
    assert len(ids) == 5 and MULTI_VIEW not in ids
    assert set(ids[:3]) == OTHER_MULTI_VIEW, ids
    first = body["papers"][0]
    assert first["url"].startswith("https://openreview.net/forum?id=") and first["status"] and first["area"]
    assert 0 < first["score"] <= 1 and [p["score"] for p in body["papers"]] == sorted(
        (p["score"] for p in body["papers"]), reverse=True
    )
    # Each comes with the sentences that make it close: one of 000-02's, one of its own, and the words they share.
    overlap = first["overlaps"][0]
    assert "multi-view" in overlap["shared"] and "clustering" in overlap["shared"]
    assert "multi-view clustering" in overlap["yours"].lower() and "multi-view clustering" in overlap["theirs"].lower()
    assert http.get("/api/similar", params={"id": MULTI_VIEW, "k": 2}).json()["papers"].__len__() == 2


def test_a_decision_filter_changes_the_similar_papers(http):
    every = [p["id"] for p in http.get("/api/similar", params={"id": MULTI_VIEW}).json()["papers"]]
    spotlight = http.get("/api/similar", params={"id": MULTI_VIEW, "status": "spotlight"}).json()["papers"]
    assert {p["id"] for p in spotlight} == SPOTLIGHTS and spotlight[0]["id"] == "004-05"
    assert all(p["status"] == "spotlight" for p in spotlight)
    assert [p["id"] for p in spotlight] != every
    area = "learning theory"
    theory = http.get("/api/similar", params={"id": MULTI_VIEW, "area": "Learning Theory", "k": 3}).json()["papers"]
    assert len(theory) == 3 and {p["area"] for p in theory} == {area}


def test_papers_like_a_text_are_posted_and_a_short_text_is_a_400(http):
    body = http.post("/api/similar", json={"text": DRAFT, "k": 3}).json()
    assert body["of"] is None
    ids = [paper["id"] for paper in body["papers"]]
    assert len(ids) == 3 and set(ids) <= OTHER_MULTI_VIEW | {MULTI_VIEW}, ids
    assert any("multi-view" in o["shared"] for o in body["papers"][0]["overlaps"])
    error = one_line_error(http.post("/api/similar", json={"text": "multi-view clustering"}), 400)
    assert "too short" in error
    assert "text is required" in one_line_error(http.post("/api/similar", json={"k": 3}), 422)
    assert "id" in one_line_error(http.post("/api/similar", json={"text": DRAFT, "id": MULTI_VIEW}), 422)


@pytest.mark.parametrize(
    ("params", "status", "says"),
    [
        ({"id": "999-99"}, 404, "999-99"),
        ({}, 422, "id is required"),
        ({"id": MULTI_VIEW, "k": 0}, 422, "k:"),
        ({"id": MULTI_VIEW, "status": "maybe"}, 400, "unknown status 'maybe'"),
        ({"id": MULTI_VIEW, "area": "quantum gardening"}, 400, "no papers of area 'quantum gardening'"),
    ],
)
def test_similar_refuses_what_it_cannot_do_in_one_line(http, params, status, says):
    assert says in one_line_error(http.get("/api/similar", params=params), status)


# -- how many papers -----------------------------------------------------------------------------------------


def test_a_topic_is_counted_by_year_area_and_decision(http):
    body = http.get("/api/trend", params={"topic": "conformal prediction"}).json()
    assert body["topic"] == "conformal prediction" and body["count"] == 2 and body["complete"] is True
    assert [(y["year"], y["papers"]) for y in body["by_year"]] == [(2025, 1), (2026, 1)]
    assert body["by_year"][1]["of"] == 76  # the store's 2026 papers, the share's denominator
    assert {s["status"]: s["papers"] for s in body["by_status"]} == {"poster": 2}
    assert set(body["members"]) == CONFORMAL
    assert [s["id"] for s in body["sample"]] == body["members"] and body["sample"][0]["url"]
    # A question reads as its topic; a filter keeps only its part of the count.
    asked = http.get("/api/trend", params={"topic": "how many papers use conformal prediction?"}).json()
    assert asked["count"] == 2 and asked["topic"] == "conformal prediction"
    spotlight = http.get("/api/trend", params={"topic": "multi-view clustering", "status": "spotlight"}).json()
    assert spotlight["members"] == ["004-05"] and [(y["year"], y["papers"]) for y in spotlight["by_year"]] == [
        (2025, 1)
    ]


@pytest.mark.parametrize(
    ("params", "status", "says"),
    [
        ({"topic": ""}, 400, "empty"),
        ({}, 422, "topic is required"),
        ({"topic": "unlearning", "status": "rejected"}, 400, "no rejected papers in the store"),
        ({"topic": "unlearning", "year": 1800}, 422, "year:"),
    ],
)
def test_trend_refuses_what_it_cannot_do_in_one_line(http, params, status, says):
    assert says in one_line_error(http.get("/api/trend", params=params), status)


# -- the papers as BibTeX, Markdown, CSV ---------------------------------------------------------------------


def test_export_writes_the_papers_in_the_order_given(http):
    response = http.get("/api/export", params={"ids": f"{PURGE},{MULTI_VIEW}", "format": "bibtex"})
    assert response.status_code == 200 and response.headers["content-type"] == "text/plain; charset=utf-8"
    entries = bibtex_entries(response.text)
    assert [e["note"] for e in entries] == [f"id {PURGE}; poster", f"id {MULTI_VIEW}; poster"]
    assert entries[0]["url"] == "https://openreview.net/forum?id=BjWwqPE7mk"
    assert entries[0]["year"] == "2026" and "Learning Representations" in entries[0]["booktitle"]
    # No format: BibTeX; an id named twice is written once.
    again = http.get("/api/export", params={"ids": f"{MULTI_VIEW}, {PURGE},{MULTI_VIEW}"})
    assert [e["note"].split(";")[0] for e in bibtex_entries(again.text)] == [f"id {MULTI_VIEW}", f"id {PURGE}"]

    table = http.get("/api/export", params={"ids": f"{MULTI_VIEW},{PURGE}", "format": "csv"})
    assert table.headers["content-type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(table.text)))
    assert [r["id"] for r in rows] == [MULTI_VIEW, PURGE]
    assert rows[1]["url"] == "https://openreview.net/forum?id=BjWwqPE7mk" and rows[1]["status"] == "poster"
    notes = http.get("/api/export", params={"ids": PURGE, "format": "markdown"}).text
    assert notes.startswith("- ") and "(https://openreview.net/forum?id=BjWwqPE7mk)" in notes
    assert f"`{PURGE}`" in notes and "poster" in notes


@pytest.mark.parametrize(
    ("params", "status", "says"),
    [
        ({"ids": f"{PURGE},999-99", "format": "bibtex"}, 404, "999-99"),
        ({"ids": PURGE, "format": "docx"}, 400, "unknown format 'docx': use one of bibtex, markdown, csv"),
        ({"ids": " , ", "format": "bibtex"}, 400, "name at least one paper"),
        ({"format": "bibtex"}, 422, "ids is required"),
        ({"ids": ",".join(f"p{i}" for i in range(301))}, 400, "at most 300"),
    ],
)
def test_export_refuses_in_one_line(http, params, status, says):
    assert says in one_line_error(http.get("/api/export", params=params), status)


def test_format_gives_the_listed_papers_of_every_route_as_text(http):
    found = http.get("/api/search", params={"q": "unlearning", "k": 3}).json()["results"]
    listed = http.get("/api/search", params={"q": "unlearning", "k": 3, "format": "csv"})
    assert listed.headers["content-type"] == "text/csv; charset=utf-8"
    assert [r["id"] for r in csv.DictReader(io.StringIO(listed.text))] == [r["id"] for r in found]

    like = http.get("/api/similar", params={"id": MULTI_VIEW}).json()["papers"]
    bib = http.get("/api/similar", params={"id": MULTI_VIEW, "format": "bibtex"}).text
    assert [e["note"].split(";")[0] for e in bibtex_entries(bib)] == [f"id {p['id']}" for p in like]
    posted = http.post("/api/similar", params={"format": "csv"}, json={"text": DRAFT, "k": 2})
    assert len(list(csv.DictReader(io.StringIO(posted.text)))) == 2

    members = http.get("/api/trend", params={"topic": "multi-view clustering"}).json()["members"]
    notes = http.get("/api/trend", params={"topic": "multi-view clustering", "format": "markdown"}).text
    assert re.findall(r" — `([^`]+)`", notes) == members

    answer = http.post("/api/ask", json={"question": UNLEARNING}).json()
    cited = http.post("/api/ask", params={"format": "bibtex"}, json={"question": UNLEARNING})
    assert cited.headers["content-type"] == "text/plain; charset=utf-8"
    entries = bibtex_entries(cited.text)
    assert [e["note"].split(";")[0] for e in entries] == [f"id {c}" for c in answer["citations"]]
    assert PURGE in answer["citations"] and all(e["url"].startswith("https://openreview.net/") for e in entries)


@pytest.mark.parametrize(
    ("method", "path", "params", "body"),
    [
        ("GET", "/api/search", {"q": "unlearning"}, None),
        ("GET", "/api/similar", {"id": MULTI_VIEW}, None),
        ("POST", "/api/similar", {}, {"text": DRAFT}),
        ("GET", "/api/trend", {"topic": "unlearning"}, None),
        ("POST", "/api/ask", {}, {"question": UNLEARNING}),
    ],
)
def test_an_unknown_format_is_a_400_on_every_route(http, method, path, params, body):
    response = http.request(method, path, params={**params, "format": "pdf"}, json=body)
    assert "unknown format 'pdf'" in one_line_error(response, 400)


def test_similar_and_trend_are_paced_like_questions_and_export_is_not(seed_store_dir):
    """Counting reads a topic's candidates with the reranker: /api/trend (and /api/similar) wait their turn as
    questions do and are refused at once when the server is busy; an export, a lookup, never is."""
    from fastapi.testclient import TestClient

    from rag.api import Papers
    from rag.server.app import ServeOptions, create_app

    options = ServeOptions(max_wait=0.1, pace=10.0)  # 10 s an answer against a 0.1 s wait: all refused
    with TestClient(create_app(Papers(store=seed_store_dir), options), base_url="http://127.0.0.1") as client:
        for response in (
            client.get("/api/trend", params={"topic": "unlearning"}),
            client.get("/api/similar", params={"id": MULTI_VIEW}),
            client.post("/api/similar", json={"text": DRAFT}),
        ):
            assert "busy" in one_line_error(response, 503) and response.headers["retry-after"]
        exported = client.get("/api/export", params={"ids": PURGE})
    assert exported.status_code == 200 and bibtex_entries(exported.text)[0]["url"]
