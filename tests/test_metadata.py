"""A paper's link, primary area and decision: read from JSONL, CSV and the seeds' sidecar, kept in the store, and
rewritten without embedding anything when they alone change; a store written before they were kept still answers.

tests/data/iclr_unlearning_sample.jsonl holds 19 real records of the ICLR 2025/2026 corpus, as the corpus writes
them: papers with "unlearning" in the title, chosen for their decisions (oral, spotlight, poster, reject,
desk_rejected, withdrawn, unknown) and, within a decision, for different primary areas.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag import Papers
from rag.cli import app
from rag.config import Settings
from rag.corpus import SEED_METADATA, load_papers, normalize_status, paper_url
from rag.errors import InputError
from rag.store import Store
from rag.wire import answer_json

from .conftest import REPO, SEEDS
from .helpers import assert_store_exact, ingest_counts

runner = CliRunner()
SAMPLE = Path(__file__).parent / "data" / "iclr_unlearning_sample.jsonl"
ORAL = "51WraMid8K"  # "A Probabilistic Perspective on Unlearning and Alignment for Large Language Models"


def sample_records() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def write_jsonl(records: list[dict], path: Path) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory, seed_store_dir) -> Path:
    """The seed store with the 19 sample papers added (read-only for tests)."""
    target = tmp_path_factory.mktemp("sample-store") / "store"
    shutil.copytree(seed_store_dir, target)
    result = runner.invoke(app, ["ingest", str(SAMPLE), "--store", str(target)])
    assert result.exit_code == 0, result.output
    return target


# -- reading ---------------------------------------------------------------------------------------------------


def test_jsonl_keeps_the_decision_as_one_word_the_area_and_the_openreview_link():
    papers = {p.id: p for p in load_papers([SAMPLE])}
    records = {r["id"]: r for r in sample_records()}
    assert len(papers) == 19
    for pid, paper in papers.items():
        assert paper.url == f"https://openreview.net/forum?id={pid}"
        assert paper.area == records[pid]["primary_area"]
    assert papers[ORAL].status == "oral" and records[ORAL]["status"] == "accept (oral)"
    words = {records[pid]["status"]: paper.status for pid, paper in papers.items()}
    assert words == {
        "accept (oral)": "oral",
        "accept (spotlight)": "spotlight",
        "accept (poster)": "poster",
        "reject": "reject",
        "desk_rejected": "reject",
        "withdrawn": "withdrawn",
        "unknown": "unknown",
    }


def test_csv_keeps_url_area_and_status_and_area_is_an_alias(tmp_path):
    csv = tmp_path / "papers.csv"
    csv.write_text(
        "ID,Abstract,URL,Area,Status\n"
        "p-1,First abstract.,https://example.org/p1,Learning Theory,Accept (Spotlight)\n"
        "p-2,Second abstract.,,,\n",
        encoding="utf-8",
    )
    first, second = load_papers([csv])
    assert (first.url, first.area, first.status) == ("https://example.org/p1", "Learning Theory", "spotlight")
    assert (second.url, second.area, second.status) == (None, None, None)  # empty cells: none


def test_an_explicit_url_wins_over_the_openreview_rule(tmp_path):
    (paper,) = load_papers(
        [write_jsonl([{"id": ORAL, "abstract": "A.", "url": "https://arxiv.org/abs/1"}], tmp_path / "a.jsonl")]
    )
    assert paper.url == "https://arxiv.org/abs/1"


@pytest.mark.parametrize(
    ("paper_id", "url"),
    [
        ("KRVnpTbx7R", "https://openreview.net/forum?id=KRVnpTbx7R"),  # a corpus id
        ("a_b-CdEf12", "https://openreview.net/forum?id=a_b-CdEf12"),  # OpenReview ids may hold _ and -
        ("001-02", None),  # a seed list's id
        ("KRVnpTbx7", None),  # 9 characters
        ("KRVnpTbx7Rx", None),  # 11
        ("2401.12345", None),  # arXiv: a dot
        ("1234567890", None),  # no letter: another scheme's number
    ],
)
def test_the_link_rule(paper_id, url):
    assert paper_url(paper_id) == url
    assert paper_url(paper_id, "https://example.org/x") == "https://example.org/x"


@pytest.mark.parametrize(
    ("written", "word"),
    [
        ("accept (oral)", "oral"),
        ("Accept (Poster)", "poster"),
        ("accept: spotlight", "spotlight"),
        ("poster", "poster"),
        ("Accept", "accept"),
        ("accepted", "accept"),
        ("Accept (notable-top-5%)", "accept"),
        ("reject", "reject"),
        ("Rejected", "reject"),
        ("desk_rejected", "reject"),
        ("Desk Reject", "reject"),
        ("withdrawn", "withdrawn"),
        ("unknown", "unknown"),
        ("  ", None),
    ],
)
def test_decisions_as_written_are_read_as_one_word(written, word):
    assert normalize_status(written) == word


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("status", "maybe later", "'status' 'maybe later' is not a decision (use one of oral, spotlight, poster"),
        ("status", 3, "'status' must be a string, got int"),
        ("url", "javascript:alert(1)", "'url' 'javascript:alert(1)' is not an http:// or https:// address"),
        ("url", "https://example.org/a b", "is not an http:// or https:// address"),
        ("primary_area", ["a"], "'primary_area' must be a string, got list"),
        ("area", 7, "'area' must be a string, got int"),
    ],
)
def test_bad_values_are_refused_in_one_line_naming_file_and_line(tmp_path, field, value, message):
    path = write_jsonl(
        [{"id": "ok-1", "abstract": "Fine."}, {"id": "bad-1", "abstract": "A.", field: value}], tmp_path / "p.jsonl"
    )
    with pytest.raises(InputError) as refused:
        load_papers([path])
    text = str(refused.value)
    assert text.startswith(f"{path}:2: ") and message in text and "\n" not in text


def test_two_different_areas_are_refused(tmp_path):
    path = write_jsonl(
        [{"id": "a", "abstract": "A.", "primary_area": "optimization", "area": "learning theory"}], tmp_path / "p.jsonl"
    )
    with pytest.raises(InputError, match=r"p\.jsonl:1: 'primary_area' 'optimization' and 'area' 'learning theory'"):
        load_papers([path])


def test_ingest_refuses_a_bad_status_before_writing_anything(tmp_path):
    path = write_jsonl([{"id": "a", "abstract": "A.", "status": "maybe later"}], tmp_path / "p.jsonl")
    result = runner.invoke(app, ["ingest", str(path), "--store", str(tmp_path / "store")])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"error: {path}:1: 'status' 'maybe later'")
    assert not (tmp_path / "store" / "chroma.sqlite3").exists()


# -- the seeds' sidecar ------------------------------------------------------------------------------------------


def test_every_seed_carries_its_openreview_link_area_and_decision_and_no_title(seed_papers):
    assert all(p.url and p.url.startswith("https://openreview.net/forum?id=") for p in seed_papers)
    assert all(p.area for p in seed_papers) and all(p.title is None for p in seed_papers)
    first = next(p for p in seed_papers if p.id == "000-01")  # DiVeQ
    assert (first.url, first.status) == ("https://openreview.net/forum?id=KRVnpTbx7R", "poster")
    statuses = [p.status for p in seed_papers]
    assert {s: statuses.count(s) for s in set(statuses)} == {"poster": 83, "unknown": 7, "spotlight": 3, "oral": 2}


def test_the_sidecar_applies_only_to_the_abstract_it_was_matched_to(tmp_path):
    seed_list = next(SEEDS.glob("000_*.txt"))
    lines = seed_list.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if i and line.strip())
    lines[first] = lines[first].replace("Vector quantization", "Vector quantisation", 1)  # 000-01, edited
    (tmp_path / seed_list.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copy(SEEDS / SEED_METADATA, tmp_path / SEED_METADATA)
    papers = {p.id: p for p in load_papers([tmp_path])}
    assert (papers["000-01"].url, papers["000-01"].area, papers["000-01"].status) == (None, None, None)
    assert papers["000-02"].url == "https://openreview.net/forum?id=KAGR7Mqu4h"


def test_a_broken_sidecar_is_refused_in_one_line(tmp_path):
    shutil.copy(next(SEEDS.glob("000_*.txt")), tmp_path)
    (tmp_path / SEED_METADATA).write_text('{"papers": [1, 2]}', encoding="utf-8")
    with pytest.raises(InputError, match=r"metadata\.json: not a seed metadata file"):
        load_papers([tmp_path])


def test_the_matching_script_rebuilds_the_sidecar_from_a_corpus(tmp_path, seed_papers):
    """evals/seed_metadata.py over a corpus holding the seeds' papers as the sidecar names them (000-11 reworded, as
    its authors did, and a decoy of its year): it writes the committed sidecar again, but for how 000-11 matched."""
    committed = json.loads((SEEDS / SEED_METADATA).read_text(encoding="utf-8"))
    records = []
    for paper in seed_papers:
        entry = committed["papers"][paper.id]
        abstract = paper.abstract.replace("rethinks the from-scratch training of", "rethink the development of")
        records.append({"id": entry["openreview_id"], "abstract": abstract, "year": paper.year, "venue": paper.venue})
        records[-1].update(primary_area=entry["primary_area"], status=entry["status"])
    records.append(
        {"id": "decoyDecoy", "abstract": "Time series foundation models.", "year": 2026, "venue": "ICLR 2026"}
    )
    corpus = tmp_path / "corpus.jsonl.gz"
    with gzip.open(corpus, "wt", encoding="utf-8") as out:
        out.writelines(json.dumps(r) + "\n" for r in records)
    seeds = tmp_path / "seeds"
    shutil.copytree(SEEDS, seeds)
    (seeds / SEED_METADATA).unlink()
    script = REPO / "evals" / "seed_metadata.py"
    done = subprocess.run(
        [sys.executable, str(script), str(corpus), "--seeds", str(seeds)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("95 seeds, 1 by the closest abstract (000-11)\n")
    rebuilt = json.loads((seeds / SEED_METADATA).read_text(encoding="utf-8"))
    assert rebuilt["papers"]["000-11"]["matched"].startswith("closest abstract (0.9")
    for entries in (rebuilt["papers"], committed["papers"]):
        entries["000-11"].pop("matched")
    assert rebuilt == committed


# -- the store -----------------------------------------------------------------------------------------------------


def test_the_store_keeps_them_and_show_prints_them(sample_store):
    paper = Store(replace(Settings(), store=sample_store)).get_paper(ORAL)
    assert (paper.status, paper.area) == ("oral", "alignment, fairness, safety, privacy, and societal considerations")
    assert paper.url == f"https://openreview.net/forum?id={ORAL}"
    shown = runner.invoke(app, ["show", ORAL, "--store", str(sample_store)])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[2] == (
        f"oral · alignment, fairness, safety, privacy, and societal considerations · https://openreview.net/forum?id={ORAL}"
    )
    as_json = json.loads(runner.invoke(app, ["show", "000-01", "--json", "--store", str(sample_store)]).stdout)
    assert as_json["url"] == "https://openreview.net/forum?id=KRVnpTbx7R" and as_json["status"] == "poster"


def test_labels_alone_changed_are_rewritten_and_nothing_is_embedded(tmp_path, sample_store, monkeypatch):
    monkeypatch.setattr("rag.ingest.RELABEL_BATCH", 2)  # the three papers relabelled in two writes
    store = tmp_path / "store"
    shutil.copytree(sample_store, store)
    records = sample_records()
    records[0] = {**records[0], "status": "accept (oral)"}
    records[1] = {**records[1], "primary_area": "learning theory"}
    records[2] = {**records[2], "url": "https://example.org/paper"}
    changed = write_jsonl(records, tmp_path / "changed.jsonl")
    result = runner.invoke(app, ["ingest", str(changed), "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert ingest_counts(result.stdout) == {"added": 0, "updated": 3, "unchanged": 16, "embedded": 0}
    papers = Store(replace(Settings(), store=store)).get_papers([r["id"] for r in records[:3]])
    assert papers[records[0]["id"]].status == "oral"
    assert papers[records[1]["id"]].area == "learning theory"
    assert papers[records[2]["id"]].url == "https://example.org/paper"
    assert_store_exact(store, load_papers([SEEDS]) + load_papers([changed]))  # every chunk, not only chunk 0
    again = runner.invoke(app, ["ingest", str(changed), "--store", str(store)])
    assert ingest_counts(again.stdout) == {"added": 0, "updated": 0, "unchanged": 19, "embedded": 0}


def strip_labels(store: Path) -> None:
    """Make `store` a store written before links, areas and decisions were kept: no such keys on any chunk, and
    no lexical index (it is rebuilt from the chunks)."""
    collection = Store(replace(Settings(), store=store)).collection()
    ids = collection.get(include=[])["ids"]
    gone = dict.fromkeys(("url", "area", "status", "meta_hash"))
    collection.update(ids=ids, metadatas=[gone] * len(ids))  # None removes a key
    shutil.rmtree(store / "lexical", ignore_errors=True)


def without_labels(payload: dict) -> dict:
    payload = {**payload, "timings_ms": None}
    payload["sources"] = [
        {k: v for k, v in s.items() if k not in ("url", "area", "status")} for s in payload["sources"]
    ]
    return payload


def test_an_old_store_answers_and_a_new_ingest_adds_the_labels_without_embedding(tmp_path, store_copy):
    strip_labels(store_copy)
    metadata = Store(replace(Settings(), store=store_copy)).collection().get(ids=["001-02#0"], include=["metadatas"])
    assert "url" not in metadata["metadatas"][0] and "status" not in metadata["metadatas"][0]
    question = "which papers study unlearning?"
    before = Papers(store=store_copy).ask(question)
    assert before.citations[:2] == ["001-02", "001-18"]
    assert all((s.url, s.area, s.status) == (None, None, None) for s in before.sources)  # seed ids: no rule applies

    result = runner.invoke(app, ["ingest", str(SEEDS), "--store", str(store_copy)])
    assert result.exit_code == 0, result.output
    assert ingest_counts(result.stdout) == {"added": 0, "updated": 95, "unchanged": 0, "embedded": 0}
    after = Papers(store=store_copy).ask(question)
    assert after.sources[0].url == "https://openreview.net/forum?id=BjWwqPE7mk" and after.sources[0].status
    # The same answer from the same papers, in the same order, with the same scores: only the labels are new.
    assert without_labels(answer_json(after)) == without_labels(answer_json(before))


def test_an_old_store_links_openreview_ids_by_the_rule(tmp_path, sample_store):
    store = tmp_path / "store"
    shutil.copytree(sample_store, store)
    strip_labels(store)
    paper = Papers(store=store).get(ORAL)
    assert (paper.url, paper.area, paper.status) == (f"https://openreview.net/forum?id={ORAL}", None, None)


# -- filters -------------------------------------------------------------------------------------------------------

UNLEARNING = "which papers study machine unlearning?"
SAFETY = "alignment, fairness, safety, privacy, and societal considerations"


def ask_json(store: Path, *args: str) -> dict:
    result = runner.invoke(app, ["ask", UNLEARNING, "--json", "-k", "8", "--store", str(store), *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_status_and_area_filters_change_the_sources_of_ask(sample_store):
    every = ask_json(sample_store)
    assert {s["status"] for s in every["sources"]} > {"reject"}, every["sources"]  # a mix of decisions
    rejected = ask_json(sample_store, "--status", "rejected")
    assert rejected["query"]["status"] == "rejected" and rejected["sources"]
    assert {s["status"] for s in rejected["sources"]} == {"reject"}  # desk_rejected too: one word, "reject"
    assert set(rejected["citations"]) <= {s["id"] for s in rejected["sources"]}
    accepted = ask_json(sample_store, "--status", "Accepted")
    assert accepted["sources"] and {s["status"] for s in accepted["sources"]} <= {"oral", "spotlight", "poster"}
    # The area in any case; applied as the store writes it.
    safety = ask_json(sample_store, "--area", SAFETY.upper())
    assert safety["query"]["area"] == SAFETY and {s["area"] for s in safety["sources"]} == {SAFETY}
    both = ask_json(sample_store, "--area", SAFETY, "--status", "withdrawn")
    assert all((s["area"], s["status"]) == (SAFETY, "withdrawn") for s in both["sources"]) and both["sources"]


def test_presentations_written_together_keep_the_papers_of_either(sample_store):
    result = runner.invoke(
        app, ["ask", "orals or spotlights only: machine unlearning", "--json", "-k", "8", "--store", str(sample_store)]
    )
    both = json.loads(result.stdout)
    assert both["query"]["status"] == "oral+spotlight"
    assert {s["status"] for s in both["sources"]} == {"oral", "spotlight"}, both["sources"]  # no poster, no reject


def test_search_filters_and_says_so_on_stderr(sample_store):
    result = runner.invoke(app, ["search", "unlearning", "--status", "oral", "--store", str(sample_store)])
    assert result.exit_code == 0, result.output
    assert result.stderr == "filtered: status oral\n"
    ids = [line.split()[1].strip("[]") for line in result.stdout.splitlines() if line[:3].strip().rstrip(".").isdigit()]
    assert sorted(ids) == ["001-01", "001-04", "51WraMid8K", "PBjCTeDL6o"]  # the store's four oral papers
    # Each source line ends with the paper's link.
    assert f"https://openreview.net/forum?id={ORAL}" in result.stdout


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--status", "maybe"], "error: unknown status 'maybe': use one of accepted, oral, spotlight, poster, "),
        (["--area", "quantum gardening"], "error: no papers of area 'quantum gardening' in the store; its areas: "),
    ],
)
def test_a_bad_filter_is_one_line_and_exit_2(sample_store, flags, message):
    for command in (["ask", UNLEARNING], ["search", "unlearning"]):
        result = runner.invoke(app, [*command, *flags, "--store", str(sample_store)])
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr.startswith(message) and result.stderr.count("\n") == 1, result.stderr
    if "--area" in flags:
        assert f"{SAFETY} (8)" in result.stderr and "learning theory (21)" in result.stderr


def test_papers_filters_and_gives_the_facets(sample_store):
    papers = Papers(store=sample_store)
    found = papers.search("unlearning", k=5, status="withdrawn")
    assert found and {s.status for s in found} == {"withdrawn"}
    assert all(s.url == f"https://openreview.net/forum?id={s.id}" for s in found)
    answer = papers.ask(UNLEARNING, area="learning theory")
    assert answer.query.area == "learning theory" and {s.area for s in answer.sources} == {"learning theory"}
    with pytest.raises(InputError, match=r"^unknown status 'desk rejected': use one of accepted, "):
        papers.search("unlearning", status="desk rejected")
    info = papers.info()
    assert info["statuses"] == [
        {"status": "accepted", "papers": 95},
        {"status": "oral", "papers": 4},
        {"status": "spotlight", "papers": 4},
        {"status": "poster", "papers": 87},
        {"status": "rejected", "papers": 5},
        {"status": "withdrawn", "papers": 4},
    ]
    areas = {a["area"]: a["papers"] for a in info["areas"]}
    assert areas[SAFETY] == 8 and areas["learning theory"] == 21 and sum(areas.values()) == 95 + 19
    assert [a["area"] for a in info["areas"]] == sorted(areas)


def test_the_chat_filters_new_questions_by_status_and_area(sample_store):
    lines = (
        "/json\n/status rejected\n/area nowhere\n" + UNLEARNING + "\n/status off\n/area learning theory\n" + UNLEARNING
    )
    done = subprocess.run(
        [sys.executable, "-m", "rag", "chat", "--store", str(sample_store)],
        input=lines + "\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert {s["status"] for s in first["sources"]} == {"reject"} and first["query"]["status"] == "rejected"
    assert {s["area"] for s in second["sources"]} == {"learning theory"} and second["query"]["status"] is None
    assert "no papers of area 'nowhere' in the store" in done.stderr  # a hint: the chat goes on
    assert "↳ searching: machine unlearning · rejected" in done.stderr


def test_an_old_store_refuses_a_status_filter_saying_it_has_none(tmp_path, store_copy):
    strip_labels(store_copy)
    result = runner.invoke(app, ["search", "unlearning", "--status", "accepted", "--store", str(store_copy)])
    assert result.exit_code == 2
    assert result.stderr == "error: no accepted papers in the store; its decisions: none: its papers have none\n"


def test_a_decision_in_the_question_filters_the_answer(seed_store_dir):
    from rag.api import Papers

    papers = Papers(store=seed_store_dir)
    spotlight = papers.ask("which spotlight papers study multi-view clustering?")
    assert spotlight.query.status == "spotlight" and spotlight.citations == ["004-05"]
    assert all(s.status == "spotlight" for s in spotlight.sources)
