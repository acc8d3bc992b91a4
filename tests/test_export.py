"""Cited papers taken to a LaTeX file, notes or a spreadsheet (rag.export): what a reader's tools read back."""

from __future__ import annotations

import csv
import io

import bibtexparser
import pytest

from rag.corpus import Paper
from rag.errors import InputError
from rag.export import bibtex_key, export, to_bibtex, to_csv, to_markdown

# Real corpus titles (../shared/corpus) with the characters that break hand-made BibTeX, Markdown and CSV.
CORPUS_SAMPLE = [
    Paper(
        id="0QZcoGdmtJ",
        abstract="We audit f-DP.",
        title="Auditing $f$-Differential Privacy in One Run",
        year=2025,
        venue="ICLR 2025",
    ),
    Paper(
        id="1ctV3yry3B",
        abstract="Steiner trees.",
        title="MazeNet: An Accurate, Fast, & Scalable Deep Learning Solution for Steiner Minimum Trees",
        year=2025,
        venue="ICLR 2025",
    ),
    Paper(
        id="1BlEVFmqwn",
        abstract="Video instance segmentation.",
        title="$\\text{O}_\\text{2}$VIS: Occupancy-aware Object Association for Temporally Consistent Video Instance "
        "Segmentation",
        year=2025,
        venue="ICLR 2025",
    ),
    Paper(
        id="2bIQBDSfRk",
        abstract="Attention.",
        title='DenseAttention: No-Compromise Exact All $N \\times N$ Interactions, "100% exact" [sic] | _fast_',
        year=2026,
        venue="ICLR 2026",
    ),
]


def _parsed(bib: str):
    return bibtexparser.loads(bib).entries


def test_bibtex_of_corpus_titles_parses_back_with_every_paper_and_its_fields():
    entries = _parsed(to_bibtex(CORPUS_SAMPLE))
    assert [e["ID"] for e in entries] == [bibtex_key(p) for p in CORPUS_SAMPLE]
    assert len({e["ID"] for e in entries}) == len(CORPUS_SAMPLE)
    for entry, paper in zip(entries, CORPUS_SAMPLE, strict=True):
        assert entry["ENTRYTYPE"] == "inproceedings"
        assert entry["year"] == str(paper.year)
        assert "International Conference on Learning Representations" in entry["booktitle"]
        assert paper.venue in entry["booktitle"]
        assert paper.id in entry["note"]
    titles = [e["title"] for e in entries]
    # `&` is escaped for LaTeX; math is left as written (its `_` is math, not text).
    assert "Fast, \\& Scalable" in titles[1]
    assert "$\\text{O}_\\text{2}$VIS" in titles[2]
    assert "100\\% exact" in titles[3] and "\\_fast\\_" in titles[3]


def test_bibtex_key_is_stable_and_names_the_paper():
    diveq = Paper(id="001-02", abstract="x", title="The DiVeQ Quantizer", year=2026, venue="ICLR 2026")
    assert bibtex_key(diveq) == "diveq2026-001-02"
    # Math and LaTeX commands are not a name: "$\text{O}_\text{2}$VIS" is keyed by "vis".
    assert bibtex_key(CORPUS_SAMPLE[2]) == "vis2025-1BlEVFmqwn"
    # The same paper gets the same key in any list.
    assert to_bibtex([CORPUS_SAMPLE[0]]).splitlines()[0] in to_bibtex(CORPUS_SAMPLE)


def test_csv_round_trips_titles_with_commas_quotes_and_pipes():
    rows = list(csv.DictReader(io.StringIO(to_csv(CORPUS_SAMPLE))))
    assert [r["id"] for r in rows] == [p.id for p in CORPUS_SAMPLE]
    assert [r["title"] for r in rows] == [p.title for p in CORPUS_SAMPLE]
    assert rows[0]["year"] == "2025" and rows[3]["venue"] == "ICLR 2026"


def test_markdown_lists_each_paper_once_with_its_id_and_escapes_markup():
    text = to_markdown(CORPUS_SAMPLE)
    lines = text.splitlines()
    assert len(lines) == len(CORPUS_SAMPLE) and all(line.startswith("- ") for line in lines)
    for line, paper in zip(lines, CORPUS_SAMPLE, strict=True):
        assert f"`{paper.id}`" in line
    # "[sic] | _fast_" would otherwise open a link, split a table cell and italicise.
    assert "\\[sic\\] \\| \\_fast\\_" in lines[3]


def test_search_results_of_the_seed_store_export_without_a_made_up_title(seed_store_dir):
    """The seeds carry no titles: BibTeX and CSV leave the title out rather than cite the abstract's first words;
    the Markdown list, read by a person, shows the words the answers show."""
    from rag.api import Papers

    hits = Papers(store=seed_store_dir).search("machine unlearning", k=3)
    bib = export(hits, "bibtex")
    entries = _parsed(bib)
    assert [e["note"].split(";")[0] for e in entries] == [f"id {h.id}" for h in hits]
    # The seeds' sidecar gives each its OpenReview page and decision.
    assert [e["url"] for e in entries] == [h.url for h in hits] and all(h.url for h in hits)
    assert all(e["note"].endswith(h.status) for e, h in zip(entries, hits, strict=True) if h.status)
    assert all("title" not in e and e["year"] in ("2025", "2026") for e in entries)
    assert bib.count("has no title in this store") == len(hits)
    rows = list(csv.DictReader(io.StringIO(export(hits, "csv"))))
    assert [(r["id"], r["title"], r["url"]) for r in rows] == [(h.id, "", h.url) for h in hits]
    lines = export(hits, "markdown").splitlines()
    assert all(h.label.split()[0] in line and h.id in line for h, line in zip(hits, lines, strict=True))


def test_an_unknown_format_is_one_clear_error():
    with pytest.raises(InputError, match="use one of bibtex, markdown, csv"):
        export(CORPUS_SAMPLE, "ris")
