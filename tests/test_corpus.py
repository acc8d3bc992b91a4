"""Loading: the seed lists' ids and years, JSONL/CSV readers, and every kind of bad file refused clearly."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rag.corpus import bundled_seeds_dir, load_papers
from rag.errors import InputError

from .conftest import SEEDS


def test_seed_lists_give_95_papers_with_stable_ids_and_years(seed_papers):
    ids = [p.id for p in seed_papers]
    assert len(ids) == 95 == len(set(ids))
    expected = [f"{prefix:03d}-{n:02d}" for prefix in range(5) for n in range(1, 20)]
    assert ids == expected
    years = {p.id: p.year for p in seed_papers}
    assert {years[f"00{i}-01"] for i in range(4)} == {2026}
    assert all(years[f"004-{n:02d}"] == 2025 for n in range(1, 20))
    assert {p.venue for p in seed_papers} == {"ICLR 2025", "ICLR 2026"}
    assert all(p.abstract and "\n" not in p.abstract for p in seed_papers)


def test_first_seed_abstract_is_read_whole(seed_papers):
    first = seed_papers[0]
    assert first.abstract.startswith("Vector quantization is common in deep models")
    assert first.abstract.endswith("over alternative quantization approaches.")


def test_bundled_seeds_are_found_from_the_package():
    assert sorted(p.name for p in bundled_seeds_dir().glob("*.txt")) == sorted(p.name for p in SEEDS.glob("*.txt"))


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_reads_optional_fields(tmp_path):
    rows = [
        {"id": "A1", "abstract": "First  abstract\ntext.", "title": "T1", "year": 2025, "venue": "ICLR 2025"},
        {"id": 7, "abstract": "Second.", "keywords": ["x", "y"], "venue": "ICLR 2026"},
    ]
    path = write(tmp_path / "p.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n")
    a, b = load_papers([path])
    assert (a.id, a.title, a.year, a.venue, a.abstract) == (
        "A1",
        "T1",
        2025,
        "ICLR 2025",
        "First abstract text.",
    )
    assert (b.id, b.year, b.keywords) == ("7", 2026, ("x", "y"))  # year taken from the venue


def test_gzipped_jsonl_reads_like_plain(tmp_path):
    path = tmp_path / "p.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(json.dumps({"id": "g1", "abstract": "Zipped abstract."}) + "\n")
    (paper,) = load_papers([path])
    assert (paper.id, paper.abstract) == ("g1", "Zipped abstract.")


def test_csv_reads_header_columns_in_any_case_and_quoted_newlines(tmp_path):
    path = write(tmp_path / "p.csv", 'ID,Title,Abstract,Year\nc1,"A title","Line one\nline two",2026\n')
    (paper,) = load_papers([path])
    assert (paper.id, paper.title, paper.abstract, paper.year) == ("c1", "A title", "Line one line two", 2026)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "bad.jsonl",
            b'{"id": "a", "abstract": "ok"}\n{"id": "b", "abstract": "caf\xe9"}\n',
            "bad.jsonl:2: not UTF-8",
        ),
        ("empty.jsonl", "", "empty.jsonl: file is empty"),
        ("blank.txt", "\n\n  \n", "blank.txt: file is empty"),
        (
            "noabs.jsonl",
            '{"id": "a", "abstract": "ok"}\n{"id": "b", "title": "t"}\n',
            "noabs.jsonl:2: missing the 'abstract'",
        ),
        ("noid.jsonl", '{"abstract": "ok"}\n', "noid.jsonl:1: missing the 'id'"),
        (
            "dup.jsonl",
            '{"id": "a", "abstract": "x"}\n{"id": "a", "abstract": "y"}\n',
            "dup.jsonl:2: duplicate paper id 'a'",
        ),
        (
            "broken.jsonl",
            '{"id": "a", "abstract": "x"}\n{"id": \n',
            "broken.jsonl:2: invalid JSON (Expecting value at character 9)",
        ),
        (
            "control.jsonl",
            '{"id": "a", "abstract": "a\tb"}\n',
            "control.jsonl:1: invalid JSON (Invalid control character at character 27)",
        ),
        ("list.jsonl", '["a", "b"]\n', "list.jsonl:1: expected a JSON object"),
        ("noabs.csv", "id,title\n1,t\n", "noabs.csv:1: missing the 'abstract' column"),
        ("emptyabs.csv", "id,abstract\n1,fine\n2,\n", "emptyabs.csv:3: missing the 'abstract' field"),
        ("dup.csv", "id,abstract\n1,x\n1,y\n", "dup.csv:3: duplicate paper id '1'"),
        ("year.csv", "id,abstract,year\n1,x,soon\n", "year.csv:2: 'year' must be a number"),
        (
            "000_noheader.txt",
            "Just an abstract without a header.\n\nAnother.\n",
            "000_noheader.txt:1: first line must name",
        ),
        ("001_onlyheader.txt", "ICLR 2026 Papers\n\n", "001_onlyheader.txt: no abstracts"),
        ("paper.pdf", "%PDF", "paper.pdf: unsupported file type"),
    ],
)
def test_bad_files_are_refused_naming_file_and_line(tmp_path, name, content, message):
    path = write(tmp_path / name, content)
    with pytest.raises(InputError) as caught:
        load_papers([path])
    text = str(caught.value)
    assert message in text
    assert "\n" not in text


def test_duplicate_ids_across_files_are_refused(tmp_path):
    a = write(tmp_path / "a.jsonl", '{"id": "x1", "abstract": "one"}\n')
    b = write(tmp_path / "b.csv", "id,abstract\nx1,two\n")
    with pytest.raises(InputError, match=r"b\.csv:2: duplicate paper id 'x1' \(first seen at .*a\.jsonl:1\)"):
        load_papers([a, b])


@pytest.mark.parametrize(
    "paper_id",
    ["a/b?c", 'q"#%', "naïve", "x" * 65, "-leading-dash", "two words", 'inj-02"></source><source id="999-98'],
)
def test_an_id_no_route_could_serve_is_refused_in_one_line(tmp_path, paper_id):
    """One id rule (rag.corpus.PAPER_ID): an id answers could not cite or a URL could not carry is refused at
    ingest, naming file and line, rather than stored and then quoted as plain text."""
    path = write(
        tmp_path / "p.jsonl",
        '{"id": "ok-1", "abstract": "fine"}\n' + json.dumps({"id": paper_id, "abstract": "x"}) + "\n",
    )
    with pytest.raises(InputError) as caught:
        load_papers([path])
    text = str(caught.value)
    assert text.startswith(f"{path}:2: id ") and "not a usable paper id" in text and "\n" not in text


@pytest.mark.parametrize("paper_id", ["001-02", "zzR1Uskhj0", "hep-th/9901001", "arXiv:2401.00001", "a_b.c", "x" * 64])
def test_ids_of_the_rule_are_kept_as_given(tmp_path, paper_id):
    path = write(tmp_path / "p.jsonl", json.dumps({"id": paper_id, "abstract": "x"}) + "\n")
    assert [paper.id for paper in load_papers([path])] == [paper_id]


def test_missing_path_is_refused(tmp_path):
    with pytest.raises(InputError, match="no such file or directory"):
        load_papers([tmp_path / "nope.jsonl"])


def test_seed_list_ids_come_from_the_file_prefix(tmp_path):
    path = write(
        tmp_path / "017_whatever.txt",
        "ICLR 2025 论文列表\n\nFirst abstract.\n\nSecond\nabstract, two lines.\n",
    )
    papers = load_papers([path])
    assert [(p.id, p.year, p.venue) for p in papers] == [
        ("017-01", 2025, "ICLR 2025"),
        ("017-02", 2025, "ICLR 2025"),
    ]
    assert papers[1].abstract == "Second abstract, two lines."
