"""The Qwen-written request phrasings keep what the training question asks: its key phrases, and no filter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from train.request_phrasings import acceptable

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "train" / "data" / "judge_requests.jsonl"

TOPIC = {"type": "topic", "question": "any papers on task vectors?", "gold_ids": ["a"], "keep": ["task vectors"]}
DETAIL = {
    "type": "near_miss",
    "question": "what does PURGE reach on ImageNet?",
    "gold_ids": [],
    "keep": ["PURGE", "ImageNet"],
}


def test_a_rewrite_holding_every_key_phrase_is_kept() -> None:
    assert acceptable("hey, need refs on task vectors for my related-work section", TOPIC)
    assert acceptable("Quick check: how well does PURGE do on imagenet?", DETAIL)


@pytest.mark.parametrize(
    "rewrite",
    [
        "hey, need refs on model merging for my related-work section",  # the key phrase gone
        "how well does PURGE do on the usual benchmarks?",  # one of two key phrases gone
        "task vectors",  # too short to be a request
        "any papers on task vectors?\nAlso, thanks!",  # more than one line
    ],
)
def test_a_rewrite_losing_what_is_asked_is_refused(rewrite: str) -> None:
    assert not acceptable(rewrite, DETAIL if "PURGE" in rewrite else TOPIC)


def test_a_rewrite_naming_a_year_is_refused() -> None:
    """The training store has no years: a year the parser reads would filter every paper out."""
    assert not acceptable("any 2025 papers on task vectors you can find?", TOPIC)


def test_a_described_paper_keeps_most_of_its_description() -> None:
    described = {
        "type": "paraphrase",
        "question": "looking for work on distilling diffusion policies into a one-step action generator",
        "gold_ids": ["p"],
        "keep": [],
    }
    assert acceptable("is there work distilling diffusion policies into a one-step action generator?", described)
    assert not acceptable("is there work on faster robot control policies, any at all?", described)


def test_the_committed_phrasings_are_the_questions_with_only_their_wording_changed() -> None:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 100
    assert len({r["qid"] for r in rows}) == len(rows)
    for row in rows:
        assert row["source"].startswith("qwen")
        assert acceptable(row["question"], {**row, "question": row["template"]}), row["qid"]
