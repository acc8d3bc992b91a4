"""Question sets for the eval: the JSONL format (`qid`, `type`, `question`, `gold_ids`, `must_mention`,
`rationale`), read and validated naming file and line."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

QUESTION_TYPES = ("topic", "fact", "paraphrase", "multi", "unanswerable", "venue")


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
    here = Path(__file__).resolve().parent.parent  # rag/, this module being rag/evaluation/questions.py
    for candidate in (here / "_data" / "evals" / "questions.jsonl", here.parent / "evals" / "questions.jsonl"):
        if candidate.is_file():
            return candidate
    raise InputError("no question set given and the bundled evals/questions.jsonl is missing")


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
