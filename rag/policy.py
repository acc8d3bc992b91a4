"""Every tuned number of the question's path, in one frozen object: `Policy.from_settings(settings)`.

Retrieval, the reranker, the judge and the evidence selection read their bars, weights and windows from the
`Policy` they are given, never from module constants, so a tuning script passes a policy (`dataclasses.replace`)
instead of assigning globals. Each field says why it has its value and which command chose it. The numbers a user
may set (`RAG_MIN_SCORE`, `RAG_EVIDENCE_RATIO`, `RAG_DETAIL_RATIO`) come from `Settings`; the reranker's logistic
layer and bars come from its `calibration.json` (fitted on the dev questions by `python -m train.calibrate`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import ModelError

if TYPE_CHECKING:
    from .config import Settings

# The packaged cross-encoder and its calibration (rag/models/reranker/, package data).
RERANKER_DIR = Path(__file__).resolve().parent / "models" / "reranker"
# The reranker's features, in the order the calibration's weights are given.
FEATURES = ("logit", "cosine", "coverage", "rank")
# Per candidate paper, what the learned judge weighs (rag.judge.evidence_rows computes them, in this order); every
# rule of the rules judge is one of them, weighed rather than vetoing.
EVIDENCE = (
    "relevance_logit",  # the reranker's calibrated relevance, as log-odds
    "relevance_gap",  # its relevance less the best candidate's
    "rank",  # its place in the reranked list, 0 to 1
    "list_rank",  # rank, for a question asking for a list (a list reads further down than a detail)
    "facet_min",  # the share of the topic's least-held facet (1 when the question names no topic)
    "facet_mean",  # the mean share of the topic's facets (1 when no topic)
    "count_missing",  # a count question, and this paper gives no number of what it counts
    "names_held",  # the share of the question's coined names ("PURGE", "RWKU") the paper writes (1 when none)
    "coverage",  # the share of the question's terms the paper holds
    "topic_held",  # the topicality-weighted share of the whole question's terms it holds (rag.terms)
    "rare_held",  # the IDF-weighted share
    "topic_missing",  # the topicality of the most topical question term it lacks
    "rare_missing",  # the IDF of the rarest question term it lacks, over log(N)
)
# The learned judge's weights and bars (rag/models/judge/, package data; `python -m train.fit_judge`).
JUDGE_DIR = Path(__file__).resolve().parent / "models" / "judge"
# Whether a question asks for a list (rag/models/list_reader/, package data; `python -m train.fit_list_reader`).
LIST_READER_DIR = Path(__file__).resolve().parent / "models" / "list_reader"


@dataclass(frozen=True)
class Calibration:
    """The logistic layer over FEATURES and the bars on its probability, all chosen on dev questions
    (`python -m train.calibrate`, calibration.json)."""

    weights: tuple[float, ...]
    bias: float
    relevance_bar: float  # abstain when no candidate reaches it
    cite_bar: float  # an extractive answer to a list question cites the papers at or above it (the best always)
    detail_bar: float  # the same for a question about a detail ("what does PURGE reach on RWKU?")
    candidates: int  # fused candidates the cross-encoder scores: the paper it puts first may be fused 12th

    def probability(self, values: Sequence[float]) -> float:
        z = self.bias + sum(w * v for w, v in zip(self.weights, values, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@dataclass(frozen=True)
class JudgeModel:
    """One logistic model over every candidate's evidence (`rag.judge.EVIDENCE`): the probability that the paper
    answers the question. The judge answers when the best candidate reaches `answer_bar` and cites every candidate
    at or above `member_bar`; both bars and the weights were chosen on dev questions only (judge.json says which).
    `center` is the dev evidence's mean: a refusal names the evidence most below it, weighed."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    center: tuple[float, ...]
    answer_bar: float
    member_bar: float

    def logit(self, values: Sequence[float]) -> float:
        return self.bias + sum(w * v for w, v in zip(self.weights, values, strict=True))

    def probability(self, values: Sequence[float]) -> float:
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, self.logit(values)))))

    def weakest(self, values: Sequence[float]) -> str:
        """The feature pulling this candidate's probability down the most, against the dev mean."""
        pulls = [w * (v - c) for w, v, c in zip(self.weights, values, self.center, strict=True)]
        return self.features[min(range(len(pulls)), key=pulls.__getitem__)]


def load_judge_model(folder: Path = JUDGE_DIR, features: Sequence[str] | None = None) -> JudgeModel:
    """The packaged judge; `features` (rag.judge.EVIDENCE) must be the ones it was fitted on."""
    data = read_json(folder / "judge.json", what="the learned judge", off="RAG_JUDGE=rules")
    try:
        if features is not None and list(data["features"]) != list(features):
            raise ValueError(f"features {data['features']} are not {list(features)}")
        return JudgeModel(
            tuple(data["features"]),
            tuple(float(w) for w in data["weights"]),
            float(data["bias"]),
            tuple(float(c) for c in data["center"]),
            float(data["answer_bar"]),
            float(data["member_bar"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{folder / 'judge.json'} is malformed: {exc}") from exc


@dataclass(frozen=True)
class ListReader:
    """Whether a question asks for the papers on a topic (a list) or about the paper it describes or names: one
    logistic model over the packaged MiniLM's vector of the question and what the request-word rules read in it
    (`rag.query.list_evidence`), fitted on questions by many writers (`python -m train.fit_list_reader`;
    list_reader.json says which, and how each set was predicted by a model that had not seen it). It reads "who
    has published on X?" and "lit search: X" as lists and "I remember a paper where …" as one paper: the rules are
    evidence it weighs, not the decision."""

    weights: tuple[float, ...]
    bias: float
    bar: float

    def probability(self, values: Sequence[float]) -> float:
        """`values`: the question's MiniLM vector, then its `rag.query.list_evidence`."""
        z = self.bias + sum(w * v for w, v in zip(self.weights, values, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def asks_for_list(self, values: Sequence[float]) -> bool:
        return self.probability(values) >= self.bar


def load_list_reader(folder: Path = LIST_READER_DIR) -> ListReader:
    data = read_json(folder / "list_reader.json", what="the list reader", off="RAG_LIST_READER=rules")
    try:
        return ListReader(tuple(float(w) for w in data["weights"]), float(data["bias"]), float(data["bar"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{folder / 'list_reader.json'} is malformed: {exc}") from exc


def read_json(path: Path, what: str = "the reranker", off: str = "RAG_RERANKER=off") -> dict:
    """A model folder's JSON file; a missing or unreadable one is a one-line `ModelError`."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ModelError(f"{what} is not installed: {path} is missing (reinstall, or {off})") from exc
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc


def load_calibration(folder: Path = RERANKER_DIR) -> Calibration:
    data = read_json(folder / "calibration.json")
    try:
        if list(data["features"]) != list(FEATURES):
            raise ValueError(f"features {data['features']} are not {list(FEATURES)}")
        return Calibration(
            tuple(float(w) for w in data["weights"]),
            float(data["bias"]),
            float(data["relevance_bar"]),
            float(data["cite_bar"]),
            float(data["detail_bar"]),
            int(data["candidates"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{folder / 'calibration.json'} is malformed: {exc}") from exc


@dataclass(frozen=True)
class Policy:
    """The bars, weights and windows of retrieval, judging and evidence selection."""

    # -- the numbers a user may set: Settings' (rag/config.py says why each has its default) --
    # Abstain when the best paper's cosine is below this (reranker off; `RAG_MIN_SCORE`). 0 or less turns every
    # evidence bar off, as `papers_chosen` does.
    min_score: float
    # With the reranker off, extractive answers keep papers scoring this fraction of the best one's cosine: looser
    # for "which papers …", stricter for a detail (`RAG_EVIDENCE_RATIO`, `RAG_DETAIL_RATIO`).
    evidence_ratio: float
    detail_ratio: float

    # -- retrieval (rag.retrieval) --
    # Weight of the (max-normalised) cosine against the (max-normalised) BM25 score in score fusion. Measured on
    # evals/questions.jsonl (`rag eval --retriever hybrid`): 0.5-0.7 give the same recall@5 (0.945); RRF 0.934.
    dense_weight: float = 0.6
    # Share of the question's stemmed terms a top lexical hit must contain for BM25 to be fused at all: fused
    # unconditionally, BM25 cost paraphrases half their recall (docs/EVALUATION.md, the lexical gate).
    lexical_coverage: float = 0.5
    rrf_k: int = 60  # the usual reciprocal-rank-fusion constant (`--retriever hybrid-rrf`, kept to compare)
    chunks_per_paper: int = 4  # chunks fetched per wanted paper: papers have 1-4, several may hit one paper

    # -- the judge (rag.judge) --
    # A paper holding every term of the question ("what is DiVeQ?") gets this much slack under min_score:
    # MiniLM scores rare names and acronyms poorly (reranker off; chosen on evals/questions.jsonl).
    exact_match_coverage: float = 0.99
    exact_match_slack: float = 0.10
    # A paper holds a facet of a topic at this weighted share of its terms (`facet_focus`), and answers the topic
    # when it holds every facet. Chosen with `facet_focus` on the dev sets only (dev, dev2, dev3, dev4; pooled
    # utility): `python evals/facet_sweep.py` (docs/EVALUATION.md).
    facet_bar: float = 0.55
    # A facet weighing less than this share of the heaviest one (by IDF) is no condition of its own ("learning"
    # in "learning with noisy labels for classification").
    light_facet: float = 1 / 3
    # A facet's term weighs its store IDF times its corpus burstiness (rag.terms) to this power: request and scope
    # words ("quick", "need", "generic") are rare but used once when used, so they weigh little as a facet or a
    # part of one. 0 is IDF alone; 0.5 chosen with `facet_bar` (0, 0.5, 1, 2 swept).
    facet_focus: float = 0.5
    # A topic is cut from its first to its last topic word (rag.terms.topic_words): a word authors' keywords use
    # this many times or more over the corpus, among others. The facets, and a list's reranking, read the cut.
    # 0 cuts nothing off. Chosen among 1, 10 and 50 on evals/phrasings_heldout2.txt and the four dev sets, when
    # words were counted by stem (docs/EVALUATION.md); kept when they became word forms.
    topic_word_uses: int = 10
    # The topic read by the topic reader (rag.topic_span, RAG_TOPIC_CUT=model) rather than cut at topic words; the
    # words a clause leaves out are still cut at topic words.
    topic_reader: bool = True
    # The cut is the topic only when it keeps the question's meaning: its MiniLM cosine to the whole search text
    # reaches this ("Who won the 2018 FIFA World Cup" cut to "World": 0.18). Below it the whole text is the topic.
    # 0 keeps every cut. Chosen on the 14 calibration sets among 0-0.6 (0.30-0.40 tie; the middle), reported on
    # the 11 others: `python evals/topic_meaning.py` (docs/EVALUATION.md).
    topic_meaning_bar: float = 0.35
    # A question naming its paper (not a list, a definition or a count) is answered by that paper only when it
    # writes at least this share of the question's other words (two or more of them): "what codebook size did
    # DiVeQ use …?" of an abstract writing neither "codebook size" nor "experiments" (0.33) asks what it does not
    # report. 0 turns it off. Chosen on the 32 spent sets (dev): of their 136 answered questions naming a paper,
    # shares fall at 0.33 and 0.38 with none between; under 0.35, 13 unanswerable and 3 answerable ones
    # (`python evals/unsaid_share.py --named`; docs/EVALUATION.md).
    unsaid_share: float = 0.35
    # A coined name at most this many of the corpus's 31.5k abstracts write names a paper (DiVeQ 0, STAIRS-Former 2,
    # PURGE 6, PU-Bench 11, JAX 16); one more write is vocabulary a description uses (InfoNCE 34, MRI 94, SAM 140,
    # GPU 556). Set by reading those counts, not fitted; the unsaid rule reads only questions naming a paper so.
    paper_name_df: int = 20
    # Words after a number in which a count question's counted noun must follow ("18 state-of-the-art PU methods").
    count_window: int = 5
    # A question asks a field of its paper's record (rag.record) when its cosine to that field's question reaches
    # this: midway between the spent sets' closest question asking none (0.454) and the next asking one (0.488),
    # the bar that reads most of them right (docs/EVALUATION.md, "Questions about a paper's record").
    record_bar: float = 0.47
    # A question naming its paper by title: the longest run of at least this many consecutive title words is the
    # paper's name, read as "it" like its coined names (0: titles are not read). 3 to 6 read the dev half of
    # evals/record_title_questions.jsonl alike (`python evals/record_titles.py`); 4 is the middle.
    record_title_words: int = 4

    # -- evidence selection (rag.evidence) --
    # A sentence's score is its cosine to the question plus this weight times its share of the question's words.
    lexical_weight: float = 0.15
    # For "which papers …" the sentence saying what the paper does is quoted when within this of the best sentence.
    contribution_margin: float = 0.30
    # A paper other than the top one is kept only if a sentence shares a word with the question or is this close.
    sentence_evidence: float = 0.65
    # A sentence holding a link and at most this many other words only points to code, data or a page: 2,864 of
    # the corpus's 2,943 sentences with a link (the rest are claims with a link inside; at 12 words, 143 pointers
    # would be read as claims).
    pointer_words: int = 20

    # -- the reranker's calibrated layer and bars (calibration.json); None with RAG_RERANKER=off --
    calibration: Calibration | None = None
    # -- the learned judge (judge.json); None with RAG_JUDGE=rules or the reranker off (it weighs relevance) --
    judge_model: JudgeModel | None = None
    # -- whether a question asks for a list (list_reader.json); None with RAG_LIST_READER=rules (rag.query's words) --
    list_reader: ListReader | None = None
    # Papers an extractive answer quotes; a list's further members are listed by title and id.
    quoted_papers: int = 5

    # The user chose the papers (a chat follow-up about them, "compare them"): whether they match the question
    # well enough is not the issue, so no evidence bar or rule applies.
    papers_chosen: bool = False

    @property
    def bars_off(self) -> bool:
        """No evidence bar applies: the user chose the papers, or set `--min-score 0`."""
        return self.papers_chosen or self.min_score <= 0

    @property
    def reranked(self) -> bool:
        return self.calibration is not None

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        calibration: Calibration | None = None,
        judge_model: JudgeModel | None = None,
        list_reader: ListReader | None = None,
    ) -> Policy:
        """The policy `settings` ask for; the reranker's calibration and the judge are read from their folders
        (or given)."""
        if settings.reranker and calibration is None:
            calibration = load_calibration(Path(settings.reranker_model) if settings.reranker_model else RERANKER_DIR)
        learned = settings.reranker and settings.judge == "learned"
        if learned and judge_model is None:
            judge_model = load_judge_model(features=EVIDENCE)
        if settings.list_reader == "model" and list_reader is None:
            list_reader = load_list_reader()
        return cls(
            min_score=settings.min_score,
            evidence_ratio=settings.evidence_ratio,
            detail_ratio=settings.detail_ratio,
            calibration=calibration if settings.reranker else None,
            judge_model=judge_model if learned else None,
            list_reader=list_reader if settings.list_reader == "model" else None,
            topic_reader=settings.topic_cut == "model",
        )
