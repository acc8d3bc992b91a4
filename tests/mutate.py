"""A rerunnable mutation check over the decisions that matter most (issue 14, item 7).

    python tests/mutate.py [--area NAME ...] [--list] [--jobs 1] [--mutant ID ...] [--self-test]

Each mutant is one small change to one function of the `rag` package (a comparison flipped, `and` for `or`, a
`not` dropped, a number nudged, `+` for `-`, an `if` negated, a return value replaced, a statement removed). It is
applied to a private copy of the tree under a temporary directory, never to the working tree, and the area's
tests run there (`pytest -x -q`, with a time limit that counts as a kill). A mutant the tests still pass is a
survivor: a behaviour change no test notices. Survivors that cannot change behaviour (equivalent mutants) are
listed in EQUIVALENT with the reason.

The copy is loaded by both the in-process tests (pytest runs in the copy) and the `rag` commands they spawn
(PYTHONPATH points at the copy, ahead of the editable install); every run checks this first, and `--self-test`
shows that a broken copy fails the tests. Areas whose mutants cannot change what an ingest writes reuse one seed
store built once by the unmutated code (see `pytest_fixture_setup` below): that saves ~10 s per mutant.

The exit status is 1 when an area in STRICT_AREAS has a survivor (or anything failed to run), else 0.
See docs/TESTING.md for the score of the last full run.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
# Read by the pytest plugin below. Not RAG_*: tests/conftest.py clears those before any fixture runs.
SEED_STORE_VARIABLE = "MUTATE_SEED_STORE"
STRICT_AREAS = ("citations", "abstention")
# Fixtures that make a test slow (a store, the REPL in a terminal, the LLM server): the follow-up area runs
# only the tests of tests/test_chat.py that need none of them, i.e. the pure rules.
HEAVY_FIXTURES = frozenset(
    {"chat_env", "llm", "seed_store", "seed_store_dir", "seed_settings", "store_copy", "seed_papers", "tmp_path"}
)


@dataclass(frozen=True)
class Target:
    """Functions (qualnames such as `Class.method`) or module-level constants of one module to mutate.

    `lines` restricts a function to the expressions and statements that start on a line beginning (after the
    indentation) with one of the given texts, "text@2" for only the second such line: the decision inside a long
    function, not its plumbing.
    """

    module: str
    names: tuple[str, ...]
    lines: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Area:
    name: str
    targets: tuple[Target, ...]
    tests: tuple[str, ...]  # pytest paths or node ids
    pure_tests: tuple[str, ...] = ()  # files of which only the tests that need no HEAVY_FIXTURES run
    reuse_seed_store: bool = True  # False when a mutant can change what an ingest writes


AREAS: dict[str, Area] = {
    area.name: area
    for area in (
        Area(
            "citations",
            (
                Target(
                    "rag/citations.py",
                    (
                        "find_citations",
                        "_rewrite_group",
                        "_neutralise",
                        "enforce_citations",
                        "CitationStreamFilter.__init__",
                        "CitationStreamFilter.feed",
                        "CitationStreamFilter._push",
                        "CitationStreamFilter._resolve",
                        "CitationStreamFilter.flush",
                        "MAX_GROUP_CHARS",
                    ),
                ),
                # Where an answer's text meets the filter: streamed pieces, the tail, a failed LLM's half answer.
                Target(
                    "rag/pipeline.py",
                    ("respond",),
                    {
                        "respond": (
                            "valid = ",
                            "checker = CitationStreamFilter",
                            "checked = ",
                            "if checked:",
                            "already_dropped = list(",
                            "if checker:",
                            "tail = checker.flush()",
                            "if tail:",
                            "text, dropped = enforce_citations",
                            "dropped = list(dict.fromkeys",
                            "citations = [] if abstained",
                        )
                    },
                ),
            ),
            ("tests/test_citations.py",),
        ),
        Area(
            "fusion",
            (
                Target(
                    "rag/retrieval.py",
                    ("score_fusion", "reciprocal_rank_fusion", "_lexical_is_evidence", "fuse"),
                    {
                        "fuse": (
                            'if mode == "dense":',
                            'elif mode == "lexical":',
                            "elif index is not None",
                            'if mode == "hybrid-rrf":',
                            "ranked = ",
                            "{p: hit.score",
                        )
                    },
                ),
            ),
            ("tests/test_retrieval.py", "tests/test_answer.py"),
        ),
        Area(
            "abstention",
            (
                # The one decision whether to answer, and the one line a refusal says.
                Target("rag/judge.py", ("judge", "defines_name", "by_closeness", "refusal")),
                # Where the verdict meets the answer: a refusal, or a reply left empty by the citation check.
                Target(
                    "rag/pipeline.py",
                    ("respond",),
                    {
                        "respond": (
                            "if not verdict.answers:",
                            "text = refusal(",
                            "refused = Answer(query, text, [], by_closeness",
                            "abstained = generation.abstained",
                            "if abstained:",
                            "text = NO_ANSWER",
                            "by_closeness(sources) if abstained",
                        )
                    },
                ),
                # The judge's bars: the slack of an exact term match, the facet bar and the facet too light to count.
                Target(
                    "rag/policy.py",
                    (
                        "Policy.exact_match_coverage",
                        "Policy.exact_match_slack",
                        "Policy.facet_bar",
                        "Policy.light_facet",
                        "Policy.sentence_evidence",
                    ),
                ),
                Target(
                    "rag/backends/extractive.py",
                    ("ExtractiveBackend.generate",),
                    # generate: whether anything is answered at all (the quoting itself is not a decision here)
                    {"ExtractiveBackend.generate": ("kept, wants_list = ", "if not kept:", "return Generation(text=")},
                ),
                # Which papers a non-abstaining answer keeps: the evidence selection.
                Target(
                    "rag/evidence.py",
                    ("Selector.select", "Selector._uses_the_phrase", "Selector._has_evidence"),
                ),
                # The one rule for "a list of papers" vs "the paper", decided when the question is parsed.
                Target("rag/query.py", ("asks_for_list", "names_a_topic", "counted_noun")),
                # Every part of a topic in the paper: the facet rule that abstains and filters citations.
                Target(
                    "rag/facets.py",
                    (
                        "facets",
                        "facet_shares",
                        "_held_share",
                        "weighty",
                        "_spelled_out",
                        "holds_topic",
                        "gives_count",
                    ),
                ),
                # The exact-term coverage that buys a paper the abstention slack is computed at retrieval.
                Target(
                    "rag/pipeline.py",
                    ("Pipeline.add_lexical_evidence",),
                    {
                        "Pipeline.add_lexical_evidence": (
                            "if not sources:",
                            'if mode != "dense":',
                            "sources[0].term_coverage = ",
                        )
                    },
                ),
            ),
            (
                "tests/test_judge.py",
                "tests/test_evidence.py",
                "tests/test_answer.py",
                "tests/test_query.py",
                "tests/test_facets.py",
            ),
        ),
        Area(
            "followups",
            (
                Target(
                    "rag/followups.py",
                    (
                        "_overlaps",
                        "_mask",
                        "looks_like_id",
                        "candidate_ids",
                        "find_ids",
                        "_ordinal_value",
                        "find_ordinals",
                        "find_year",
                        "content_words",
                        "mentions",
                        "resolve",
                        "remember",
                        "parse_condensed",
                        "apply_condensed",
                    ),
                ),
            ),
            ("tests/test_followups.py",),
            pure_tests=("tests/test_chat.py",),
        ),
        Area(
            "ingest",
            (
                Target("rag/chunking.py", ("paper_hash",)),
                Target("rag/store.py", ("Store.stored_papers",)),
                Target(
                    "rag/ingest.py",
                    ("Writer.run",),
                    {
                        "Writer.run": (
                            "digest = paper_hash(",
                            "previous = stored.get(",
                            "same_text = ",
                            "if same_text",
                            "report.unchanged += 1",
                            "window.append((paper, previous[1] if previous else 0",
                        )
                    },
                ),
            ),
            ("tests/test_store.py", "tests/test_chunking.py"),
            reuse_seed_store=False,
        ),
    )
}

# Mutants that cannot change behaviour, by key (see `Mutant.key`), with the reason.
EQUIVALENT: dict[str, str] = {
    "rag/pipeline.py:respond: checker = CitationStreamFilter(valid) if (stream and backend.stre"
    "ams) else None -> checker = CitationStreamFilter(valid) if (stream or backend.streams) els"
    "e None": (
        "a backend that does not stream yields its whole text as one piece: through the stream filter it comes "
        "out as the same checked text enforce_citations gives, dropping the same ids"
    ),
    "rag/evidence.py:Selector.select: near = [s for i, s in enumerate(sources) if i == 0 or (s."
    "relevance or 0.0) >= bar] -> near = [s for i, s in enumerate(sources) if i == 0 or (s.rele"
    "vance or 1.0) >= bar]": (
        "reranked sources all carry a relevance (the reranker sets it on every candidate): `or 0.0` is never read"
    ),
    "rag/evidence.py:Selector.select: return [], False -> pass #2": (
        "with no paper left, the lines below score no sentence and return the same empty selection"
    ),
    "rag/judge.py:judge: under_bar = max(s.relevance or 0.0 for s in sources) < bar and not def"
    "ined -> under_bar = max(s.relevance or 1.0 for s in sources) < bar and not defined": (
        "reranked sources all carry a relevance: `or 0.0` is never read"
    ),
    "rag/judge.py:judge: bar = 0.0 -> pass": (
        "unreranked sources carry no relevance, so `s.relevance is None` decides and the bar is never read"
    ),
    "rag/judge.py:judge: bar = 0.0 -> bar = 1.0": (
        "unreranked sources carry no relevance, so `s.relevance is None` decides and the bar is never read"
    ),
    'rag/judge.py:judge: return Verdict(False, "relevance", max(sources, key=lambda s: s.releva'
    'nce or 0.0)) -> return Verdict(False, "relevance", max(sources, key=lambda s: s.relevance '
    "or 1.0))": ("reranked sources all carry a relevance: `or 0.0` is never read"),
    'rag/judge.py:refusal: if verdict.reason == "no_papers" or closest is None: -> if verdict.r'
    "eason == 'no_papers' and closest is None:": (
        "the judge names a closest paper on every refusal but no_papers, so the two tests agree on its verdicts"
    ),
    "rag/facets.py:_spelled_out: return set() -> pass": (
        "the early exit for no acronyms: the loop below then finds nothing and returns the same empty set"
    ),
    "rag/facets.py:weighty: return tuple(f for f in parts if _weight(f, weight) >= light * heaviest) -> "
    "return tuple(f for f in parts if _weight(f, weight) > light * heaviest)": (
        "a facet weighing exactly a third of the heaviest: sums of BM25 IDFs (logarithms) never meet that product"
    ),
    "rag/evidence.py:Selector._has_evidence: return bool(question_words & "
    "content_words(sentence)) or score >= self.policy.sentence_evidence -> return bool(question_words & "
    "content_words(sentence)) or score > self.policy.sentence_evidence": (
        "reached only with no shared word, when the score is a float32 cosine: none equals the float 0.65"
    ),
    "rag/evidence.py:Selector.select: ranked = sorted(scored.get(i, []), key=lambda t: "
    "(-t[0], t[1])) -> ranked = sorted(scored.get(i, []), key=lambda t: (-t[0], t[2]))": (
        "the tie-break of two sentences with equal scores: only sentences the uncased model reads alike tie, and "
        "then both share the same words, so which paper is kept cannot change (at most a quote's letter case)"
    ),
    "rag/followups.py:find_ids: return sorted(found, key=lambda hit: hit[0]) -> "
    "return sorted(found, key=lambda hit: hit[1])": (
        "the spans never overlap (overlapping tokens are skipped), so ordering by end is ordering by start"
    ),
    "rag/followups.py:find_ordinals: return sorted(found, key=lambda hit: hit[0]) -> "
    "return sorted(found, key=lambda hit: hit[1])": (
        "the spans never overlap (overlapping matches are skipped), so ordering by end is ordering by start"
    ),
    "rag/followups.py:resolve: refs.append((start, state.listing[n - 1 if n > 0 else -1])) -> "
    "refs.append((start, state.listing[n - 1 if n >= 0 else -1]))": (
        "differs only for n = 0, where both give index -1"
    ),
    "rag/followups.py:resolve: masked = _mask(text, spans) -> pass #2": (
        "re-masks the plural matches before the singular search; no singular pattern can match inside a plural one"
    ),
    "rag/followups.py:resolve: query = topic.replace(previous_core, core) if previous_core != topic and "
    "previous_core in topic else core -> query = topic.replace(previous_core, core) if previous_core != topic or "
    "previous_core in topic else core": (
        "search_text(topic) only strips a prefix, so it is always in topic; replacing all of topic gives core too"
    ),
    "rag/retrieval.py:_lexical_is_evidence: return False -> pass": (
        "with no lexical hits the coverage of no documents is 0.0, which fails the bar the same way"
    ),
    "rag/retrieval.py:_lexical_is_evidence: return False -> return True": (
        "with no lexical hits both fusions return the dense order, which is what the non-fusion branch returns"
    ),
    "rag/retrieval.py:score_fusion: top_lexical = max(lexical.values()) or 1.0 -> "
    "top_lexical = max(lexical.values()) or 2.0": (
        "the fallback divisor is used only when every BM25 score is 0 (they are never negative): 0/1 = 0/2"
    ),
    "rag/retrieval.py:reciprocal_rank_fusion: scores[item] = scores.get(item, 0.0) + 1.0 / (k0 + rank) -> "
    "scores[item] = scores.get(item, 1.0) + 1.0 / (k0 + rank)": (
        "every item gets the start value exactly once: all scores shift by 1, the order stays"
    ),
    "rag/retrieval.py:reciprocal_rank_fusion: scores[item] = scores.get(item, 0.0) + 1.0 / (k0 + rank) -> "
    "scores[item] = scores.get(item, 0.0) + 2.0 / (k0 + rank)": "every score doubles: the order stays",
    'rag/store.py:Store.stored_papers: meta["paper_id"]: (meta.get("paper_hash", ""), int(meta.get("n_chunks", 1)), '
    'meta.get("meta_hash", "")) -> meta["paper_id"]: (meta.get("paper_hash", ""), int(meta.get("n_chunks", 2)), '
    'meta.get("meta_hash", ""))': (
        "a default for chunk metadata without n_chunks, which every version (since the first commit) writes"
    ),
}


# -- mutants ----------------------------------------------------------------------------------------------


@dataclass
class Mutant:
    area: str
    module: str
    qualname: str
    line: int
    operator: str
    start: int  # byte offsets of the replaced text in the module's source
    end: int
    new: str
    before: str  # the changed line(s), before and after, whitespace collapsed
    after: str
    key: str = ""
    id: str = ""

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.new.encode() + source[self.end :]

    def describe(self) -> str:
        return (
            f"{self.id} {self.module}:{self.line} ({self.qualname}) {self.operator}: `{self.before}` -> `{self.after}`"
        )


_COMPARE_SWAP = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
# A negated `if` whose test is one of these comparisons is the comparison flip again: not generated twice.
_NEGATING_OPS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_ARITH_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult}
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set)
_REMOVABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Raise, ast.Continue, ast.Break, ast.Delete)


def _wrap(node: ast.AST, text: str) -> str:
    """`text` (the source of `node`) safe to put where any expression was: parenthesised unless atomic."""
    return text if isinstance(node, _ATOMS) else f"({text})"


def _nudge(value: int | float) -> int | float:
    """An integer one up; a float clearly elsewhere (a threshold of 0.55 becomes 1.55, 0.0 becomes 1.0)."""
    return value + 1 if isinstance(value, int) else round(value + 1.0, 6)


class _Source:
    """A module's source as bytes (ast offsets are UTF-8 byte columns), with node spans and line views."""

    def __init__(self, path: Path) -> None:
        self.data = path.read_bytes()
        self.tree = ast.parse(self.data)
        self.line_starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.line_starts[node.lineno - 1] + node.col_offset
        return start, self.line_starts[node.end_lineno - 1] + node.end_col_offset

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.data[start:end].decode()

    def line_text(self, lineno: int) -> str:
        return self.data[self.line_starts[lineno - 1] : self.line_starts[lineno]].decode().strip()

    def views(self, node: ast.AST, new: str) -> tuple[str, str]:
        """The lines `node` spans, as written and with `node` replaced by `new`, whitespace collapsed."""
        start, end = self.span(node)
        first = self.line_starts[node.lineno - 1]
        last = self.line_starts[node.end_lineno]
        prefix, suffix = self.data[first:start].decode(), self.data[end:last].decode()
        old = prefix + self.data[start:end].decode() + suffix
        return " ".join(old.split()), " ".join((prefix + new + suffix).split())


def _definitions(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    """(qualname, node) for every function and method, for module-level constant assignments, and for a class's
    fields with their defaults (`Policy.facet_bar`: the tuned numbers live in the frozen `rag.policy.Policy`)."""

    def walk(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, ast.AST]]:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + node.name, node
            elif isinstance(node, ast.ClassDef):
                yield from walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        yield prefix + target.id, node

    yield from walk(tree.body, "")


def _skipped_subtrees(root: ast.AST) -> set[int]:
    """Nodes never mutated: f-string internals, annotations, docstrings, nested imports."""
    skipped: set[int] = set()

    def skip(node: ast.AST) -> None:
        skipped.update(id(n) for n in ast.walk(node))

    for node in ast.walk(root):
        if isinstance(node, ast.JoinedStr):
            skip(node)
        elif isinstance(node, ast.AnnAssign):
            skip(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]:
                if arg.annotation is not None:
                    skip(arg.annotation)
            if node.returns is not None:
                skip(node.returns)
            for decorator in node.decorator_list:
                skip(decorator)
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                skip(body[0])  # the docstring
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            skip(node)
    return skipped


def _is_text(node: ast.BinOp) -> bool:
    """String building ("a" + b, f"..." + c): `-` there only raises a TypeError, which says nothing."""
    return any(
        isinstance(side, ast.JoinedStr) or (isinstance(side, ast.Constant) and isinstance(side.value, str))
        for side in (node.left, node.right)
    )


def _mutations(source: _Source, node: ast.AST, function: ast.AST) -> Iterator[tuple[str, ast.AST, str]]:
    """(operator, replaced node, replacement text) for every mutation of `node` itself."""
    if isinstance(node, ast.Compare):
        for index, op in enumerate(node.ops):
            swapped = _COMPARE_SWAP.get(type(op))
            if swapped:
                changed = copy.deepcopy(node)
                changed.ops[index] = swapped()
                yield "compare", node, ast.unparse(changed)
    elif isinstance(node, ast.BoolOp):
        changed = copy.deepcopy(node)
        changed.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "and/or", node, ast.unparse(changed)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "drop-not", node, _wrap(node.operand, source.text(node.operand))
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
        yield "number", node, repr(_nudge(node.value))
    elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH_SWAP and not _is_text(node):
        changed = copy.deepcopy(node)
        changed.op = _ARITH_SWAP[type(node.op)]()
        yield "arithmetic", node, ast.unparse(changed)
    elif isinstance(node, ast.List) and len(node.elts) >= 3:
        # a field left out of a record (what a content hash covers): each item dropped in turn
        for index in range(len(node.elts)):
            changed = copy.deepcopy(node)
            del changed.elts[index]
            yield "drop-item", node, ast.unparse(changed)
    if isinstance(node, (ast.If, ast.IfExp)):
        test = node.test
        already = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        flipped = isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], _NEGATING_OPS)
        if not (already or flipped):
            yield "negate-if", test, f"not {_wrap(test, source.text(test))}"
    if isinstance(node, ast.comprehension):
        for test in node.ifs:
            yield "negate-if", test, f"not {_wrap(test, source.text(test))}"
    if isinstance(node, ast.Return) and node.value is not None:
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):
            yield "return", value, repr(not value.value)
        elif not (isinstance(value, ast.Constant) and value.value is None):
            yield "return", value, "None"
    last = function.body[-1] if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    removable = isinstance(node, _REMOVABLE) or (isinstance(node, ast.Return) and node is not last)
    if removable and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield "remove", node, "pass"


def _chosen_lines(source: _Source, function: ast.AST, prefixes: tuple[str, ...]) -> set[int]:
    """Line numbers of `function` that start with one of `prefixes`; "text@2" means only the second such line."""
    chosen: set[int] = set()
    for prefix in prefixes:
        text, _, nth = prefix.partition("@")
        lines = [n for n in range(function.lineno, function.end_lineno + 1) if source.line_text(n).startswith(text)]
        chosen.update(lines[int(nth) - 1 : int(nth)] if nth else lines)
    return chosen


def generate(area: Area, root: Path = REPO) -> list[Mutant]:
    mutants: list[Mutant] = []
    for target in area.targets:
        source = _Source(root / target.module)
        definitions = dict(_definitions(source.tree))
        missing = [name for name in target.names if name not in definitions]
        if missing:
            raise SystemExit(f"error: {target.module} has no {', '.join(missing)} (update AREAS in {__file__})")
        for name in target.names:
            function = definitions[name]
            prefixes = target.lines.get(name)
            lines = _chosen_lines(source, function, prefixes) if prefixes else None
            skipped = _skipped_subtrees(function)
            found = 0
            for node in ast.walk(function):
                # comprehensions have no position of their own: their target's line stands for them
                position = node.target if isinstance(node, ast.comprehension) else node
                if id(node) in skipped or not hasattr(position, "lineno"):
                    continue
                if lines is not None and position.lineno not in lines:
                    continue
                for operator, replaced, new in _mutations(source, node, function):
                    start, end = source.span(replaced)
                    before, after = source.views(replaced, new)
                    mutants.append(
                        Mutant(
                            area.name, target.module, name, replaced.lineno, operator, start, end, new, before, after
                        )
                    )
                    found += 1
            if prefixes is not None and not found:
                raise SystemExit(f"error: no line of {target.module}:{name} starts with {prefixes} (update AREAS)")
    # Keep the first of mutants that produce the same module text; number the rest in source order.
    unique: dict[tuple[str, bytes], Mutant] = {}
    sources = {t.module: (REPO / t.module).read_bytes() for t in area.targets}
    for mutant in sorted(mutants, key=lambda m: (m.module, m.start, m.end, m.operator)):
        mutated = mutant.apply(sources[mutant.module])
        try:
            ast.parse(mutated)
        except SyntaxError:
            continue  # a replacement the context cannot take: not a mutant
        unique.setdefault((mutant.module, mutated), mutant)
    seen: dict[str, int] = {}
    result = list(unique.values())
    for number, mutant in enumerate(result, 1):
        base = f"{mutant.module}:{mutant.qualname}: {mutant.before} -> {mutant.after}"
        seen[base] = seen.get(base, 0) + 1
        mutant.key = base if seen[base] == 1 else f"{base} #{seen[base]}"
        mutant.id = f"{area.name}-{number}"
    return result


# -- running ----------------------------------------------------------------------------------------------


def _clean_env(home: Path) -> dict[str, str]:
    """Like tests/conftest.py's isolation: no RAG_*/OPENAI_* settings of the user, a private home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_", "PYTEST_", "MUTATE_"))}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CACHE_HOME=str(home / "cache"))
    env.update(XDG_CONFIG_HOME=str(home / "config"), HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    return env


class Copy:
    """A private copy of the tree that tests can run in: rag/ and tests/ copied, data folders linked."""

    def __init__(self, root: Path) -> None:
        self.root = root
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(REPO / "rag", root / "rag", ignore=ignore)
        shutil.copytree(REPO / "tests", root / "tests", ignore=ignore)
        shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
        for data in ("seeds", "evals", "prompts"):
            (root / data).symlink_to(REPO / data)
        self.home = root / "home"
        self.home.mkdir()

    def env(self, seed_store: Path | None = None) -> dict[str, str]:
        env = _clean_env(self.home)
        # The copy first, for this process and every `rag` it spawns; no stale bytecode of an earlier mutant.
        env["PYTHONPATH"] = str(self.root)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        if seed_store is not None:
            env[SEED_STORE_VARIABLE] = str(seed_store)
        return env

    @contextlib.contextmanager
    def mutated(self, mutant: Mutant | None) -> Iterator[None]:
        if mutant is None:
            yield
            return
        path = self.root / mutant.module
        # The copy's own text, which the mutants were generated from: the working tree may change meanwhile.
        original = path.read_bytes()
        path.write_bytes(mutant.apply(original))
        try:
            yield
        finally:
            path.write_bytes(original)

    def check_imports(self) -> None:
        """Both ways the tests load `rag` must find this copy, or every mutant would 'survive'."""
        env = self.env()
        probe = "import rag, sys; sys.stdout.write(rag.__file__)"
        for cwd in (self.root, self.home):  # pytest's own process, and a `rag` spawned anywhere
            found = subprocess.run([PYTHON, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True)
            if not found.stdout.startswith(str(self.root)):
                raise SystemExit(f"error: `rag` loads from {found.stdout or found.stderr!r}, not the copy {self.root}")
        init = self.root / "rag" / "__init__.py"
        original = init.read_text()
        init.write_text(original + "\nraise SystemExit(97)\n")
        try:
            command = Path(PYTHON).parent / "rag"
            spawned = subprocess.run([str(command), "--help"], cwd=self.home, env=env, capture_output=True)
        finally:
            init.write_text(original)
        if spawned.returncode != 97:
            raise SystemExit(f"error: the installed `rag` command does not load the copy (exit {spawned.returncode})")

    def pytest(self, args: list[str], timeout: float, seed_store: Path | None) -> tuple[str, float, str]:
        """('passed' | 'failed' | 'timeout' | 'error', seconds, output tail)."""
        command = [PYTHON, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *args]
        if seed_store is not None:
            command[3:3] = ["-p", "tests.mutate"]
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            cwd=self.root,
            env=self.env(seed_store),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its `rag` children are killed with it on a timeout
        )
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            return "timeout", time.monotonic() - started, output[-2000:]
        elapsed = time.monotonic() - started
        # pytest: 0 all passed, 1 tests failed, 2 interrupted (an import error in collection), 3 internal error
        status = {0: "passed", 1: "failed", 2: "failed", 3: "failed"}.get(process.returncode, "error")
        return status, elapsed, output[-2000:]


def selection(area: Area) -> list[str]:
    """The area's pytest arguments; for `pure_tests` files, the node ids of their tests that need no store."""
    args = list(area.tests)
    for path in area.pure_tests:
        tree = ast.parse((REPO / path).read_text())
        for node in tree.body:
            if (
                isinstance(node, ast.FunctionDef)
                and node.name.startswith("test_")
                and not {a.arg for a in node.args.args} & HEAVY_FIXTURES
            ):
                args.append(f"{path}::{node.name}")
    return args


def build_seed_store(work: Copy, path: Path) -> None:
    """The seed store as tests/conftest.py builds it, once, by the unmutated code."""
    script = (
        "import sys\nfrom dataclasses import replace\nfrom pathlib import Path\n"
        "from rag.config import Settings\nfrom rag.corpus import load_papers\n"
        "from rag.embedding import get_embedder\nfrom rag.ingest import write\nfrom rag.store import Store\n"
        "settings = replace(Settings(), store=Path(sys.argv[1]))\n"
        "write(Store(settings), load_papers([Path('seeds')]), get_embedder(settings))\n"
    )
    done = subprocess.run([PYTHON, "-c", script, str(path)], cwd=work.root, env=work.env(), capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"error: building the seed store failed:\n{done.stderr.decode()[-2000:]}")


@dataclass
class Result:
    mutant: Mutant
    status: str  # killed | survived | timeout | error
    seconds: float
    output: str = ""


def run_area(area: Area, mutants: list[Mutant], copies: list[Copy], seed_store: Path | None) -> list[Result]:
    args = selection(area)
    store = seed_store if area.reuse_seed_store else None
    status, baseline, output = copies[0].pytest(args, timeout=900, seed_store=store)
    if status != "passed":
        print(f"[{area.name}] the unmutated tests do not pass ({status}); skipping the area:\n{output}", flush=True)
        return [Result(m, "error", 0.0, "baseline failed") for m in mutants]
    timeout = max(60.0, 3 * baseline + 30)
    print(f"[{area.name}] {len(mutants)} mutants; unmutated run {baseline:.1f} s, limit {timeout:.0f} s", flush=True)
    free: queue.Queue[Copy] = queue.Queue()
    for work in copies:
        free.put(work)
    results: list[Result] = []
    lock = threading.Lock()

    def run_one(mutant: Mutant) -> None:
        work = free.get()
        try:
            with work.mutated(mutant):
                outcome, seconds, output = work.pytest(args, timeout, store)
        finally:
            free.put(work)
        status = {"failed": "killed", "passed": "survived", "timeout": "timeout"}.get(outcome, "error")
        if mutant.key in EQUIVALENT and status == "survived":
            status = "equivalent"
        killer = re.search(r"^(?:FAILED|ERROR) (\S+)", output, re.M) if status == "killed" else None
        with lock:
            results.append(Result(mutant, status, seconds, output))
            by = f"  [by {killer.group(1)}]" if killer else ""
            print(f"  {status:<10} {seconds:5.1f}s  {mutant.describe()}{by}", flush=True)

    threads = []
    pending: queue.Queue[Mutant] = queue.Queue()
    for mutant in mutants:
        pending.put(mutant)

    def worker() -> None:
        while True:
            try:
                mutant = pending.get_nowait()
            except queue.Empty:
                return
            run_one(mutant)

    for _ in copies:
        thread = threading.Thread(target=worker)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    order = {m.id: i for i, m in enumerate(mutants)}
    return sorted(results, key=lambda r: order[r.mutant.id])


def report(results_by_area: dict[str, list[Result]], elapsed: float) -> int:
    print("\nMutation score (killed / mutants; a timeout counts as killed; equivalent mutants left out)")
    failed = False
    for name, results in results_by_area.items():
        killed = sum(r.status in ("killed", "timeout") for r in results)
        equivalent = sum(r.status == "equivalent" for r in results)
        errors = sum(r.status == "error" for r in results)
        total = len(results) - equivalent
        score = f"{100 * killed / total:.1f}%" if total else "-"
        extra = f", {equivalent} equivalent" if equivalent else ""
        extra += f", {errors} errors" if errors else ""
        print(f"  {name:<11} {killed:>4} / {total:<4} {score:>7}{extra}")
        survivors = [r for r in results if r.status == "survived"]
        for result in survivors:
            print(f"      survived: {result.mutant.describe()}")
        if errors or (survivors and name in STRICT_AREAS):
            failed = True
    print(f"took {elapsed / 60:.1f} min")
    return 1 if failed else 0


def self_test(work: Copy) -> int:
    """A deliberately broken copy must fail the tests (in-process), and pass again once restored."""
    citations = work.root / "rag" / "citations.py"
    original = citations.read_text()
    broken = original.replace("    return found\n", "    return []\n", 1)
    assert broken != original, "rag/citations.py changed: update the self-test"
    citations.write_text(broken)
    try:
        status, _, _ = work.pytest(["tests/test_citations.py"], 300, None)
    finally:
        citations.write_text(original)
    print(f"broken find_citations in the copy: tests {status}")
    again, _, _ = work.pytest(["tests/test_citations.py"], 300, None)
    print(f"restored copy: tests {again}; the working tree's rag/ was never touched")
    return 0 if status == "failed" and again == "passed" else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--area", action="append", choices=list(AREAS), help="repeatable; default: every area")
    parser.add_argument("--list", action="store_true", help="print the mutants without running them")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1: 2 cores here)")
    parser.add_argument("--mutant", action="append", help="run only these mutant ids (e.g. citations-12)")
    parser.add_argument("--self-test", action="store_true", help="check that a broken copy fails the tests")
    args = parser.parse_args(argv)

    areas = [AREAS[name] for name in (args.area or list(AREAS))]

    def select(root: Path) -> dict[str, list[Mutant]]:
        found = {area.name: generate(area, root) for area in areas}
        if args.mutant:
            wanted = set(args.mutant)
            found = {name: [m for m in each if m.id in wanted] for name, each in found.items()}
        return found

    if args.list:
        mutants = select(REPO)
        for area in areas:
            if not mutants[area.name]:
                continue
            print(f"[{area.name}] {len(mutants[area.name])} mutants; tests: {' '.join(selection(area))}")
            for mutant in mutants[area.name]:
                note = f"   (equivalent: {EQUIVALENT[mutant.key]})" if mutant.key in EQUIVALENT else ""
                print(f"  {mutant.describe()}{note}")
        return 0

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rag-mutate-") as temp:
        copies = [Copy(Path(temp) / f"copy{i}") for i in range(max(1, args.jobs))]
        copies[0].check_imports()
        if args.self_test:
            return self_test(copies[0])
        # Generated from the copy, not the working tree, which may be edited while the check runs.
        mutants = select(copies[0].root)
        areas = [area for area in areas if mutants[area.name]]
        seed_store = None
        if any(area.reuse_seed_store for area in areas):
            seed_store = Path(temp) / "seed-store"
            build_seed_store(copies[0], seed_store)
        results = {area.name: run_area(area, mutants[area.name], copies, seed_store) for area in areas}
    return report(results, time.monotonic() - started)


# -- the pytest plugin (`-p tests.mutate`, added by the runner when the seed store is reused) ----------------


def pytest_fixture_setup(fixturedef, request):
    """The session's `seed_store_dir` as a private copy of the prebuilt store, instead of a fresh ingest."""
    prebuilt = os.environ.get(SEED_STORE_VARIABLE)
    if fixturedef.argname != "seed_store_dir" or not prebuilt:
        return None
    target = request.getfixturevalue("tmp_path_factory").mktemp("seed-store") / "store"
    shutil.copytree(prebuilt, target)
    fixturedef.cached_result = (target, fixturedef.cache_key(request), None)
    return target


if "pytest" in sys.modules and __name__ != "__main__":
    import pytest

    pytest_fixture_setup = pytest.hookimpl(tryfirst=True)(pytest_fixture_setup)


if __name__ == "__main__":
    sys.exit(main())
