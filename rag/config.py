"""One settings object for the whole pipeline, read from the environment with pydantic-settings.

Each field is declared once: its default, its description (the CLI's help and the README's configuration table
read it), the variable that sets it (`RAG_` + its name unless it names another) and its checks. `Settings()` is
the defaults; `Settings.from_env()` reads `RAG_*` (plus the OpenAI SDK's `OPENAI_API_KEY` and `OPENAI_BASE_URL`);
CLI flags override fields with `dataclasses.replace`. Nothing else reads the environment.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import AliasChoices, Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict

from .errors import InputError

ENV_PREFIX = "RAG_"
K_MIN, K_MAX = 1, 100  # papers per question, in every client (the CLI's -k, the HTTP API, MCP, llama-index)


def check_k(k: int) -> int:
    """`k` if it is in range, else the one-line error every client gives."""
    if not K_MIN <= k <= K_MAX:
        raise InputError(f"k must be between {K_MIN} and {K_MAX}, not {k}")
    return k


def default_store() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("rag-papers", appauthor=False)) / "store"


@dataclasses.dataclass(frozen=True)
class Range:
    """A number outside is refused: the bounds of the CLI flag that overrides the variable."""

    low: float
    high: float = math.inf

    def text(self) -> str:
        return f"from {self.low:g} to {self.high:g}" if self.high != math.inf else f"at least {self.low:g}"


@dataclasses.dataclass(frozen=True)
class Floor:
    """A number below is raised to it."""

    value: int


def _setting(
    default: Any = None,
    description: str = "",
    *,
    env: str | None = None,
    shown: str | None = None,
    flag: str | None = None,
    same_row: bool = False,
    **kw: Any,
) -> Any:
    """A field. `env`: its variables when not `RAG_<NAME>` (the first wins); `shown`: its default in words where
    the value would mislead; `flag`: the CLI flag that overrides it; `same_row`: the README's table shows it in
    the previous field's row."""
    extra = {key: value for key, value in (("shown", shown), ("flag", flag), ("same_row", same_row)) if value}
    alias = AliasChoices(*env.split()) if env else None
    if "default_factory" not in kw:
        kw["default"] = default
    return Field(description=description, validation_alias=alias, json_schema_extra=extra or None, **kw)


class Settings(BaseSettings):
    """Everything a run needs to know; the defaults work offline with no configuration.

    The fields are in the README's order (`settings_table`): what a user sets most often first.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_ignore_empty=True,  # an empty variable means unset
        frozen=True,
        validate_by_name=True,  # `Settings(llm_api_key=...)` as well as the variable's name
        validate_by_alias=True,
        extra="forbid",
    )

    store: Path = _setting(
        description="embedded Chroma directory",
        default_factory=default_store,
        shown="per-user data dir (`~/.local/share/rag-papers/store`)",
        flag="--store",
    )
    chroma_url: str | None = _setting(None, "use a Chroma server (`chroma run`) instead", flag="--chroma-url")
    collection: str = _setting("papers", "Chroma collection name")

    # Retrieval and answering.
    k: Annotated[int, Range(K_MIN, K_MAX)] = _setting(
        5, "papers quoted per question (1–100; a list names its further members by title)", flag="-k"
    )
    retriever: str = _setting(
        "hybrid",
        "`hybrid` (dense + BM25, scores fused when the question's terms occur), `hybrid-rrf` (the same by "
        "reciprocal-rank fusion, to compare), `dense`, `lexical`",
        flag="--retriever",
    )
    spelling: bool = _setting(
        True,
        "correct misspelled question words to the closest word the store holds (`off`: search the words as typed)",
        shown="`on`",
    )
    reranker: bool = _setting(
        True,
        "rerank the fused candidates with the packaged cross-encoder; its calibrated relevance decides abstention "
        "and which papers an extractive answer cites (`off`: the cosine rules below do)",
        shown="`on`",
    )
    reranker_model: Path | None = _setting(
        None,
        "a reranker folder of your own (model.json, the ONNX model, tokenizer.json, calibration.json: what "
        "`python -m train.export` and `train.calibrate` write)",
        shown="the packaged one",
        same_row=True,
    )
    query_encoder_model: Path | None = _setting(
        None,
        "embed questions with a query encoder of your own (a folder `python -m train.export_query` wrote; the "
        "store is unchanged)",
        shown="none: the documents' model",
    )
    judge: Literal["learned", "rules"] = _setting(
        "rules",
        "whether to answer and which papers to cite: `learned` (one calibrated model weighing all the evidence, "
        "rag/models/judge) or `rules` (the bars and vetoes of rag/judge.py); `learned` needs the reranker",
    )
    list_reader: Literal["model", "rules"] = _setting(
        "model",
        "whether a question asks for a list of papers: `model` (one logistic model over the question's MiniLM "
        "vector and the request-word rules' readings, rag/models/list_reader) or `rules` (the request words alone)",
    )
    topic_cut: Literal["model", "keywords"] = _setting(
        "model",
        "which words of a request name its topic: `model` (a logistic model reading each word in its context, "
        "rag/models/topic_span) or `keywords` (first to last word the field's keywords use)",
    )
    # Below this cosine similarity of the best chunk the abstracts are taken not to answer the question.
    min_score: float = _setting(
        0.365,
        "abstain when the best paper's cosine score is below this (calibrated on the eval set; with the reranker "
        "on, only 0 matters: no evidence bar)",
        flag="--min-score",
    )
    # Extractive answers keep papers scoring at least this fraction of the top paper's score: looser for
    # "which papers ..." questions, stricter for questions about a detail (chosen on evals/questions.jsonl).
    evidence_ratio: float = _setting(
        0.7, 'extractive answers keep papers scoring at least this fraction of the best one ("which papers…")'
    )
    detail_ratio: float = _setting(0.85, "the same for questions about a detail", same_row=True)

    # Unset, it is inferred: see _infer_backend.
    backend: str = _setting(
        "extractive",
        "answer backend: `extractive`, `openai`, `local`",
        shown="`openai` if an endpoint or model is set, else `extractive`",
        flag="--backend",
    )
    llm_base_url: str | None = _setting(
        None,
        "OpenAI-compatible endpoint",
        env="RAG_LLM_BASE_URL OPENAI_BASE_URL",
        shown="unset (OpenAI's API when the backend is `openai`)",
    )
    llm_model: str = _setting("gpt-4o-mini", "model name sent to the endpoint")
    llm_api_key: str | None = _setting(None, "API key, if the endpoint needs one", env="OPENAI_API_KEY", repr=False)
    llm_timeout: Annotated[float, Range(0.1)] = _setting(
        60.0,
        "seconds to wait for the endpoint (at least 0.1; to answer, and between streamed pieces)",
        flag="ask --timeout",
    )
    llm_max_retries: int = _setting(
        1, "retries of a failed request (not of a timeout)", env="RAG_LLM_RETRIES", same_row=True
    )
    llm_max_tokens: int = _setting(600, "answer length", same_row=True)
    # The circuit breaker (rag.llm.Breaker).
    llm_cooldown: Annotated[float, Range(0)] = _setting(
        60.0,
        "after the endpoint fails, for this many seconds later questions in the same process (`rag chat`, the "
        "Python API) get the extractive answer at once, with a warning, instead of waiting on it again; then one "
        "question tries it again (`0`: always try)",
    )
    prompts_dir: Path | None = _setting(None, "override the prompt templates", shown="bundled `prompts/`")

    # The local backend (`pip install '.[local]'`): an embedded GGUF model judging each paper in turn.
    # Its latency budget is ~25 s for 5 papers on 2 cores; the knobs are how many papers it reads, how much of
    # each abstract, and how many tokens it may write per paper.
    local_model: str = _setting("qwen2.5-coder-1.5b", "the `local` backend's model (`qwen2.5-coder-0.5b` too)")
    local_model_path: str | None = _setting(None, "any GGUF file instead", same_row=True)
    # Default: the user's cache directory.
    model_dir: Path | None = _setting(
        None,
        "where the local model is assembled from its pip parts (1.1 GB)",
        shown="`~/.cache/rag-papers/models`",
    )
    local_papers: Annotated[int, Floor(1)] = _setting(5, "papers the local model judges per answer")
    # The model reads each paper's best sentences, not the whole abstract.
    local_sentences: Annotated[int, Floor(1)] = _setting(3, "sentences of each paper it reads", same_row=True)
    local_max_tokens: Annotated[int, Floor(16)] = _setting(
        80, "tokens it may write per paper (its latency budget)", same_row=True
    )
    # 0: one per core (llama-cpp-python's own default is half the cores).
    local_threads: Annotated[int, Floor(0)] = _setting(0, "llama.cpp threads", shown="all cores")
    local_context: Annotated[int, Floor(512)] = _setting(2048, "the local model's context window", same_row=True)

    # Embeddings: the packaged int8 ONNX MiniLM, or any OpenAI-compatible embeddings endpoint.
    embed_backend: str = _setting("onnx", "`onnx` (packaged MiniLM) or `openai` (an embeddings endpoint)")
    embed_model: str = _setting("text-embedding-3-small", "the embeddings endpoint's model", same_row=True)
    embed_base_url: str | None = _setting(None, "the embeddings endpoint's URL", same_row=True)
    embed_batch_size: int = _setting(16, "texts per ONNX batch", env="RAG_EMBED_BATCH")
    # Chunks embedded per call (length-sorted inside it) and written per Chroma call, in whole papers. Measured
    # on 1k corpus papers, idle: 256 → 66 s, 1024 → 60 s, 2048 → 56 s (91% of the raw model's throughput).
    ingest_window: Annotated[int, Floor(1)] = _setting(
        2048, "chunks embedded and written per step of an ingest (whole papers)"
    )
    # Chunking, in the embedding model's own tokens (its window is 256 including [CLS]/[SEP]).
    chunk_tokens: int = _setting(128, "chunk size in model tokens")
    chunk_overlap: Annotated[int, Floor(0)] = _setting(24, "chunk overlap", same_row=True)

    # `rag serve`: off loopback, every /api and /v1 request must carry this token (the server refuses to start
    # without one there).
    serve_token: str | None = _setting(
        None, "`rag serve`: the bearer token every /api and /v1 request must carry (needed off 127.0.0.1)", repr=False
    )
    serve_cors_origins: str | None = _setting(
        None, "`rag serve`: origins allowed to call the API from a browser, comma-separated", shown="none (CORS off)"
    )
    # 64 extractive answers queued on 2 cores are ~11 s of waiting (5.6 answers/s measured with 16 clients,
    # docs/BENCHMARKS.md); past that a client is better told to retry than kept waiting behind the others.
    serve_max_pending: Annotated[int, Floor(1)] = _setting(
        64, "`rag serve`: questions answered or waiting at once; more get HTTP 503 with Retry-After"
    )

    serve_max_wait: Annotated[float, Range(0.1)] = _setting(
        10.0, "`rag serve`: seconds a new question may expect to wait (at the measured pace); longer: HTTP 503"
    )
    serve_workers: Annotated[int, Floor(1)] = _setting(
        None,
        "`rag serve`: threads answering at once (raise it for a remote LLM)",
        shown="the core count",
        default_factory=lambda: max(2, os.cpu_count() or 2),
    )
    serve_allowed_hosts: str | None = _setting(
        None,
        "`rag serve`: `Host` names it answers to besides loopback, comma-separated (`*`: any)",
        shown="loopback names (any, off loopback)",
    )

    debug: bool = _setting(False, "show tracebacks for unexpected errors", shown="unset")

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, **_sources):
        """`Settings(...)` is what it is given and the defaults: only `from_env` reads the environment."""
        return (init_settings,)

    @classmethod
    def from_env(cls) -> Settings:
        """Settings from the environment; a bad value is an `InputError` naming the variable."""
        found = EnvSettingsSource(cls)()  # keyed by field name, or by the variable for fields that name one
        values = {name: found[key] for name in cls.model_fields for key in cls._keys(name) if key in found}
        try:
            return cls(**values)
        except ValidationError as exc:  # a type the checks below do not cover: still one line
            error = exc.errors()[0]
            name = str(error["loc"][0]) if error["loc"] else ""
            variable = cls.env_name(name) if name in cls.model_fields else name
            raise InputError(f"{variable}={values.get(name, error.get('input'))!r}: {error['msg']}") from None

    @classmethod
    def env_value(cls, name: str) -> Any:
        """Field `name` from the environment alone, for code that runs where `from_env` may have failed on another
        variable (the CLI's error handler: `RAG_DEBUG`, and the API key it keeps out of messages)."""
        found = EnvSettingsSource(cls)()
        given = [found[key] for key in cls._keys(name) if key in found]
        return getattr(cls(**{name: given[-1]}) if given else cls(), name)

    # -- what the CLI's help and the README show ---------------------------------------------------------------

    @classmethod
    def env_name(cls, name: str) -> str:
        """The variable that sets field `name` (the first, where another is read when it is unset)."""
        return cls.env_names(name)[0]

    @classmethod
    def env_names(cls, name: str) -> list[str]:
        """Every variable that sets field `name`, the first winning."""
        alias = cls.model_fields[name].validation_alias
        return [str(choice) for choice in alias.choices] if alias else [ENV_PREFIX + name.upper()]

    @classmethod
    def shown_default(cls, name: str) -> str:
        """The default as the README's table shows it: `5`, `papers`, unset, or the field's own words."""
        field = cls.model_fields[name]
        shown = (field.json_schema_extra or {}).get("shown")
        if shown:
            return str(shown)
        return (
            "unset" if field.default is None else f"`{field.default:g}`" if _is_number(field) else f"`{field.default}`"
        )

    @classmethod
    def describe(cls, name: str) -> str:
        """One line for a CLI option's help: `Chroma collection name [env: RAG_COLLECTION; default: papers]`."""
        default = cls.shown_default(name).replace("`", "")
        return f"{cls.model_fields[name].description} [env: {' or '.join(cls.env_names(name))}; default: {default}]"

    @classmethod
    def settings_table(cls) -> str:
        """The README's configuration table (tests/test_config.py checks that the README shows it as is)."""
        rows: list[list[str]] = []
        for name, field in cls.model_fields.items():
            first, *others = cls.env_names(name)
            variable = f"`{first}`" + "".join(f" (or `{other}`)" for other in others)
            extra = field.json_schema_extra or {}
            if extra.get("flag"):
                variable += f" [`{extra['flag']}`]"
            cells = [variable, cls.shown_default(name), str(field.description)]
            if extra.get("same_row"):
                joined = zip(rows[-1], (" / ", " / ", ", "), cells, strict=True)
                rows[-1] = [f"{mine}{sep}{added}" for mine, sep, added in joined]
            else:
                rows.append(cells)
        lines = ["| variable | default | meaning |", "|---|---|---|"]
        return "\n".join(lines + [f"| {' | '.join(row)} |" for row in rows])

    @classmethod
    def _keys(cls, name: str) -> list[str]:
        """Where `EnvSettingsSource` puts field `name`'s value: under its name, or its variable's."""
        return [name, *cls.env_names(name)]

    # -- checks ---------------------------------------------------------------------------------------------------

    @model_validator(mode="before")
    @classmethod
    def _infer_backend(cls, data: Any) -> Any:
        """With no backend named, an endpoint or a model is what "an LLM is configured" means."""
        if isinstance(data, dict) and not data.get("backend"):
            configured = data.get("llm_base_url") or data.get("llm_model")
            data = {**data, "backend": "openai" if configured else "extractive"}
        return data

    @field_validator("*", mode="before")
    @classmethod
    def _check(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields[info.field_name]
        # A value from the environment is named by its variable, one given in code by its field.
        name = cls.env_name(info.field_name) if isinstance(value, str) else info.field_name
        if _is_number(field):
            return _number(name, value, field)
        if Path in (field.annotation, *get_args(field.annotation)) and isinstance(value, str | Path):
            return Path(value).expanduser()
        if field.annotation is bool and isinstance(value, str):
            return value.strip().lower() not in ("", "0", "false", "no", "off")
        return value

    @property
    def store_label(self) -> str:
        return self.chroma_url or str(self.store)


def _is_number(field) -> bool:
    return field.annotation in (int, float)


def _number(name: str, value: Any, field) -> Any:
    """`value` checked as the field's number: text is parsed; a one-line error names the variable (or field)."""
    raw = value
    if isinstance(value, str):
        if value.strip() == "":
            return field.get_default(call_default_factory=True)
        try:
            value = float(value)
        except ValueError:
            value = math.nan
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{name}={raw!r} is not a number")  # "nan" and "inf" parse, but no setting means them
    for rule in field.metadata:
        if isinstance(rule, Range) and not rule.low <= value <= rule.high:
            raise InputError(f"{name}={raw!r} is out of range ({rule.text()})")
    if field.annotation is int:
        if value != int(value):
            raise InputError(f"{name}={value!r} is not a whole number")
        value = int(value)
    for rule in field.metadata:
        if isinstance(rule, Floor):
            value = max(rule.value, value)
    return value


# `dataclasses.replace(settings, k=3)`, how CLI flags override the environment, works as it did when Settings was
# a dataclass: the class lists its fields to `dataclasses`, and the copy is built (and checked) by `Settings(...)`.
Settings.__dataclass_fields__ = dataclasses.make_dataclass("Settings", list(Settings.model_fields)).__dataclass_fields__


if __name__ == "__main__":  # the README's configuration table: python -m rag.config
    print(Settings.settings_table())
