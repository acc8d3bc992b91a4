"""The policy: every tuned number in one frozen object, built from the settings and the shipped calibration, and
passed (not assigned) by whatever tunes it."""

from __future__ import annotations

import dataclasses
import json
import shutil
from dataclasses import replace

import pytest

from rag.config import Settings
from rag.errors import ModelError
from rag.pipeline import Pipeline
from rag.policy import RERANKER_DIR, Policy, load_calibration
from rag.query import parse


def test_the_policy_takes_the_users_numbers_from_settings_and_the_bars_from_the_calibration():
    settings = replace(Settings(), min_score=0.5, evidence_ratio=0.6, detail_ratio=0.9)
    policy = Policy.from_settings(settings)
    assert (policy.min_score, policy.evidence_ratio, policy.detail_ratio) == (0.5, 0.6, 0.9)
    shipped = json.loads((RERANKER_DIR / "calibration.json").read_text())
    assert policy.calibration is not None
    assert policy.calibration.relevance_bar == shipped["relevance_bar"]
    assert (policy.calibration.cite_bar, policy.calibration.detail_bar) == (shipped["cite_bar"], shipped["detail_bar"])
    assert policy.calibration.candidates == shipped["candidates"]
    # With the reranker off there is no calibration: the cosine rules decide.
    assert Policy.from_settings(replace(settings, reranker=False)).calibration is None


def test_the_policy_is_frozen_and_chosen_papers_are_a_field_not_a_threshold():
    policy = Policy.from_settings(Settings())
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.facet_bar = 0.1  # type: ignore[misc]
    assert not policy.bars_off
    assert replace(policy, papers_chosen=True).bars_off
    assert replace(policy, papers_chosen=True).min_score == policy.min_score  # the threshold itself is untouched
    assert Policy.from_settings(replace(Settings(), min_score=0.0)).bars_off  # `--min-score 0`: no bar, documented


def test_a_calibration_of_your_own_is_read_from_its_folder_and_a_broken_one_is_one_line(tmp_path):
    folder = tmp_path / "reranker"
    shutil.copytree(RERANKER_DIR, folder)
    data = json.loads((folder / "calibration.json").read_text())
    data["relevance_bar"] = 0.77
    (folder / "calibration.json").write_text(json.dumps(data))
    assert Policy.from_settings(replace(Settings(), reranker_model=folder)).calibration.relevance_bar == 0.77
    (folder / "calibration.json").write_text('{"features": ["logit"]}')
    with pytest.raises(ModelError) as error:
        load_calibration(folder)
    assert "calibration.json is malformed" in str(error.value) and "\n" not in str(error.value)


def test_a_policy_given_to_the_pipeline_changes_its_decision(seed_store, seed_settings):
    store, embedder = seed_store
    question = parse("which papers study machine unlearning?")
    default = Pipeline(store, embedder, seed_settings)
    assert not default.answer(question).abstained
    # The same pipeline with an impossible relevance bar refuses, naming that bar: nothing global was changed.
    strict = replace(default.policy, calibration=replace(default.policy.calibration, relevance_bar=1.01))
    refused = Pipeline(store, embedder, seed_settings, policy=strict).answer(question)
    assert refused.abstained and "below the bar 1.01" in refused.answer
    assert not default.answer(question).abstained
