"""Question sets for the eval: the JSONL format (`qid`, `type`, `question`, `gold_ids`, `must_mention`,
`rationale`), read and validated naming file and line; and the dev/test split of evals/questions.jsonl
(evals/split.json: thresholds are tuned on dev, reported on test)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

QUESTION_TYPES = ("topic", "fact", "paraphrase", "multi", "unanswerable", "venue")
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class Question:
    qid: str
    type: str
    question: str
    gold_ids: tuple[str, ...]
    must_mention: tuple[str, ...] = ()
    rationale: str = ""


def default_questions_file() -> Path:
    """evals/questions.jsonl: in the installed wheel, or the repo's `evals/` in a checkout."""
    path = _bundled("questions.jsonl")
    if path is None:
        raise InputError("no question set given and the bundled evals/questions.jsonl is missing")
    return path


def _bundled(name: str) -> Path | None:
    here = Path(__file__).resolve().parent.parent  # rag/, this module being rag/evaluation/questions.py
    for candidate in (here / "_data" / "evals" / name, here.parent / "evals" / name):
        if candidate.is_file():
            return candidate
    return None


def default_split_file() -> Path:
    """evals/split.json: in the installed wheel, or the repo's `evals/` in a checkout."""
    path = _bundled("split.json")
    if path is None:
        raise InputError("the bundled evals/split.json is missing")
    return path


def make_split(questions: Sequence[Question]) -> dict[str, list[str]]:
    """The dev/test rule: within each type, order the qids by the sha256 of the qid (hex) and deal them out
    alternately, dev first; so every type with two or more questions is in both parts, and dev gets the odd
    one. evals/split.json holds this rule's output for evals/questions.jsonl."""
    split: dict[str, list[str]] = {"dev": [], "test": []}
    for qtype in sorted({q.type for q in questions}):
        ordered = sorted((q.qid for q in questions if q.type == qtype), key=lambda qid: _qid_hash(qid))
        split["dev"].extend(ordered[0::2])
        split["test"].extend(ordered[1::2])
    return {part: sorted(qids) for part, qids in split.items()}


def _qid_hash(qid: str) -> str:
    return hashlib.sha256(qid.encode("utf-8")).hexdigest()


def load_split(path: Path) -> dict[str, frozenset[str]]:
    """A split file: `{"dev": [qid, ...], "test": [qid, ...]}`, no qid in both."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc.__class__.__name__})") from None
    if not isinstance(data, dict) or set(data) != set(SPLITS) or not all(isinstance(data[s], list) for s in SPLITS):
        raise InputError(f'{path}: expected {{"dev": [...], "test": [...]}}')
    parts = {s: frozenset(str(q) for q in data[s]) for s in SPLITS}
    if parts["dev"] & parts["test"]:
        raise InputError(f"{path}: {len(parts['dev'] & parts['test'])} qids are in both dev and test")
    return parts


def select_split(questions: Sequence[Question], part: str, split: dict[str, frozenset[str]]) -> list[Question]:
    """The questions of one part of the split; refused when the set holds qids the split does not know
    (another question file: its qids were never assigned to dev or test)."""
    if part not in SPLITS:
        raise InputError(f"--split must be one of {', '.join(SPLITS)}, not {part!r}")
    unknown = [q.qid for q in questions if q.qid not in split["dev"] | split["test"]]
    if unknown:
        raise InputError(
            f"--split works on the bundled evals/questions.jsonl; {len(unknown)} qids are not in evals/split.json"
            f" (first: {unknown[0]})"
        )
    return [q for q in questions if q.qid in split[part]]


def load_questions(paths: Iterable[Path]) -> list[Question]:
    """Questions from JSONL files; a malformed line is refused naming file and line."""
    questions: list[Question] = []
    seen: dict[str, str] = {}
    for path in paths:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            raise InputError(f"{path}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read ({exc.__class__.__name__})") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{where}: invalid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise InputError(f"{where}: expected a JSON object")
            for key in ("qid", "type", "question", "gold_ids"):
                if key not in row:
                    raise InputError(f"{where}: missing {key!r}")
            if not isinstance(row["gold_ids"], list) or not isinstance(row.get("must_mention", []), list):
                raise InputError(f"{where}: 'gold_ids' and 'must_mention' must be lists")
            qid = str(row["qid"])
            if qid in seen:
                raise InputError(f"{where}: duplicate qid {qid!r} (first at {seen[qid]})")
            seen[qid] = where
            questions.append(
                Question(
                    qid=qid,
                    type=str(row["type"]),
                    question=str(row["question"]),
                    gold_ids=tuple(str(g) for g in row["gold_ids"]),
                    must_mention=tuple(str(m) for m in row.get("must_mention", [])),
                    rationale=str(row.get("rationale", "")),
                )
            )
    if not questions:
        raise InputError("the question set is empty")
    return questions
