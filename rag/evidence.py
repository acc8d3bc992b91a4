"""Which retrieved papers answer a question, and which of their sentences say so.

Per paper, every abstract sentence is scored by its embedding similarity to the question plus a little word
overlap; a paper other than the top one is kept only when a sentence speaks to the question. The extractive
backend quotes the winners; the local backend hands them to its model. Deterministic and offline.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .lexical import contains_phrase
from .lexicon import ADDITIVE_OPENER as _ADDITIVE_OPENER
from .lexicon import CONTRIBUTION as _CONTRIBUTION
from .lexicon import ONE_PAPER_NAMED as _ONE_PAPER
from .lexicon import SEVERAL_PAPERS as _SEVERAL
from .policy import Policy
from .query import Query, names_any
from .text import LINK, content_words, split_sentences, tidy_latex
from .types import Source, Verdict

if TYPE_CHECKING:
    from .embedding import Embedder

# The words and patterns these rules read (one paper or several asked about, a contribution sentence, what a
# pointer sentence and a question about code say, the additive openers) are in rag.lexicon.
# (score, position in the abstract, sentence)
Scored = tuple[float, int, str]


def is_pointer(sentence: str, limit: int) -> bool:
    """Whether `sentence` only points to code, data or a project page: a link and at most `limit` other words
    (`Policy.pointer_words`; longer sentences holding a link say something else as well)."""
    # "Code is available at https://github.com/…/SelKD." answers nothing but "where is the code?" (a record
    # field, rag.record, answers that): 9% of the corpus's abstracts end with one, and a paper's name inside the
    # link makes it the closest sentence to "what is SelKD?". Length alone, no word list: of the corpus's 2,943
    # sentences holding a link, it reads 18 more as pointers than a list of pointing words did, 15 of them
    # pointers ("Explore our generations at https://…") and 3 short claims (docs/EVALUATION.md).
    return bool(LINK.search(sentence)) and len(LINK.sub(" ", sentence).split()) <= limit


def display_sentence(sentence: str) -> str:
    """A sentence of an abstract as answers show it: LaTeX as text, and square brackets as parentheses (inside an
    abstract they must never read as a citation: prompt-injection safe)."""
    return tidy_latex(sentence).replace("[", "(").replace("]", ")")


def display_sentences(abstract: str) -> list[str]:
    """The abstract cut into the sentences an extractive answer quotes from, as shown (the web page's panel)."""
    return [display_sentence(s) for s in split_sentences(abstract)]


def _quote(sentence: str) -> str:
    text = display_sentence(sentence)
    opener = _ADDITIVE_OPENER.match(text)
    if opener:
        rest = text[opener.end() :]
        text = rest[0].upper() + rest[1:]
    return text


def _best_for_each(names: tuple[str, ...], sources: list[Source]) -> list[Source]:
    """For each name, the first of `sources` (best first) that names it."""
    found: list[Source] = []
    for name in names:
        source = next((s for s in sources if names_any((name,), s.text)), None)
        if source is not None and source not in found:
            found.append(source)
    return found


def _defining_first(name: str, ranked: list[Scored]) -> list[Scored]:
    """`ranked` with the abstract's first sentence writing `name` moved to the front, and the sentence after it
    second: "what is CAMEL?" is answered by "we propose … (CAMEL)", where an abstract introduces its name, and by
    what it says next ("Specifically, CAMEL jointly learns …"), not by the sentences most similar to a three-word
    question, which are those repeating the name ("… demonstrate the superior effectiveness of CAMEL")."""
    writing = [r for r in ranked if names_any((name,), r[2])]
    if not writing:
        return ranked
    first = min(writing, key=lambda r: r[1])
    following = [r for r in ranked if r[1] == first[1] + 1]
    front = [first, *following]
    return [*front, *(r for r in ranked if r not in front)]


class Selector:
    """Picks the papers that answer and the sentences that say so, with the bars of a `Policy` and the judge's
    `Verdict` (which papers hold the topic, which give the count)."""

    def __init__(self, embedder: Embedder, policy: Policy) -> None:
        self.embedder = embedder
        self.policy = policy

    def select(
        self, query: Query, sources: list[Source], verdict: Verdict, listed: frozenset[str] = frozenset()
    ) -> tuple[list[tuple[Source, list[Scored]]], bool]:
        """The papers that answer `query`, each with its sentences best first; and whether it asks for a list.

        A list question keeps every paper near the top's score; a detail question only clear matches; a paper
        other than the top one also needs a sentence that speaks to the question. A paper in `listed` is shown by
        title, not quoted: a sentence of it writing every question word passes that check without embedding any.
        """
        if not sources:
            return [], False
        policy = self.policy
        top = max(s.score for s in sources)  # fused ranking: the first paper need not have the best cosine
        wants_list = query.wants_list
        if verdict.members is not None:
            # The learned judge named the answering papers, one by one: no rule here overrules it.
            return self._members(query, sources, verdict.members)
        if verdict.beyond:
            # A list's members ranked below k passed the judge's test; they pass the sentence check of those ranked
            # above them (so a paper a larger k shows is not dropped that a smaller k names; a sentence writing every
            # question word passes it at once), and are listed, not quoted (the backend shows them by title and id).
            kept, _ = self.select(query, sources, replace(verdict, beyond=()), frozenset(verdict.beyond))
            return kept, True
        if sources[0].relevance is not None:
            # Reranked: the best paper, then every paper the calibrated relevance says answers.
            assert policy.calibration is not None
            bar = policy.calibration.cite_bar if wants_list else policy.calibration.detail_bar
            near = [s for i, s in enumerate(sources) if i == 0 or (s.relevance or 0.0) >= bar]
            if not wants_list and query.names:
                # A question about a named method is answered by the papers that name it: "what does PURGE reach
                # on RWKU?" must not also quote a paper on unlearning in general.
                named = [s for s in near if names_any(query.names, s.text)]
                if not named and query.defines:
                    # "what is CAMEL?" was answered because a paper writes the name (rag.judge): that paper.
                    named = _best_for_each((query.defines,), sources)
                near = named or near
                if len(query.names) > 1 and _SEVERAL.search(query.text):
                    # "how do PURGE and Sharp MinMax differ?" is answered by a paper for each name, whatever the
                    # second one's relevance: the question itself says which papers it is about. ("what does
                    # PURGE reach on RWKU?" names a benchmark beside the method, and compares nothing.)
                    near += [s for s in _best_for_each(query.names, sources) if s not in near]
        else:
            ratio = policy.evidence_ratio if wants_list else policy.detail_ratio
            near = [s for s in sources if s.score >= ratio * top or (wants_list and self._uses_the_phrase(query, s))]
        if verdict.holding is not None:
            # A topic's answers hold every part of it (the judge's evidence): the GNN paper does not answer
            # "adversarial robustness of graph neural networks".
            holding = [s for s in sources if s.id in verdict.holding]
            near = [s for s in near if s in holding] or holding[:1] or near[:1]
        if verdict.counting is not None:
            # "how many baselines …?" is answered by the papers giving a number of baselines.
            near = [s for s in near if s.id in verdict.counting]
            if not near:
                return [], False
        if not wants_list and len(_ONE_PAPER.findall(query.text)) == 1 and not _SEVERAL.search(query.text):
            # A list's reading is the list reader's: "the full list with one line per paper" asks for every paper.
            near = near[:1]

        limit = policy.pointer_words
        sentences = [
            (i, j, s)
            for i, src in enumerate(near)
            for j, s in enumerate(split_sentences(src.abstract))
            if not is_pointer(s, limit)
        ]
        asked, question_words = self._read_as(query)
        overlaps = [
            len(question_words & content_words(s)) / len(question_words) if question_words else 0.0
            for *_, s in sentences
        ]
        # A listed paper (shown by title) with a sentence writing every question word passes the sentence check
        # without its sentences embedded: at 31.5k papers a list's members below k made an answer embed 100-180
        # sentences, most of its time. Measured: no answer changes on 328 questions at 31.5k nor on the seeds' spent
        # sets; a single shared word instead changed 22, 8 for the worse (docs/BENCHMARKS.md "Machine and code
        # separated").
        by_words = {
            i for (i, _, _), overlap in zip(sentences, overlaps, strict=True) if overlap >= 1.0 and near[i].id in listed
        }
        embedded = [n for n, (i, _, _) in enumerate(sentences) if i not in by_words]
        vectors = self.embedder.embed([asked] + [sentences[n][2] for n in embedded])
        similarity = dict(zip(embedded, (vectors[1:] @ vectors[0]).tolist(), strict=True))

        scored: dict[int, list[Scored]] = {}
        for n, (i, j, sentence) in enumerate(sentences):
            score = similarity.get(n, 0.0) + policy.lexical_weight * overlaps[n]
            scored.setdefault(i, []).append((score, j, sentence))

        kept = []
        for i, source in enumerate(near):
            ranked = sorted(scored.get(i, []), key=lambda t: (-t[0], t[1]))
            if query.defines:
                ranked = _defining_first(query.defines, ranked)
            if i > 0 and ranked and not self._has_evidence(ranked[0], question_words):
                continue  # close in embedding space, but no sentence of it speaks to the question
            kept.append((source, ranked))
        return kept, wants_list and len(near) > 1

    def _members(
        self, query: Query, sources: list[Source], members: tuple[str, ...]
    ) -> tuple[list[tuple[Source, list[Scored]]], bool]:
        """The judge's members, likeliest first: the first `quoted_papers` with their sentences best first, the
        rest with none (the answer lists them by title and id)."""
        by_id = {s.id: s for s in sources}
        chosen = [by_id[i] for i in members if i in by_id]
        quoted = chosen[: self.policy.quoted_papers]
        return [
            *zip(quoted, self.rank_sentences(query, quoted), strict=True),
            *((s, []) for s in chosen[len(quoted) :]),
        ], (len(chosen) > 1)

    def rank_sentences(self, query: Query, papers: list[Source]) -> list[list[Scored]]:
        """Each paper's quotable sentences, best first: cosine to the question plus a little word overlap."""
        limit = self.policy.pointer_words
        sentences = [
            (i, j, s)
            for i, src in enumerate(papers)
            for j, s in enumerate(split_sentences(src.abstract))
            if not is_pointer(s, limit)
        ]
        if not sentences:
            return [[] for _ in papers]
        asked, question_words = self._read_as(query)
        vectors = self.embedder.embed([asked] + [s for _, _, s in sentences])
        similarity = vectors[1:] @ vectors[0]
        scored: list[list[Scored]] = [[] for _ in papers]
        for (i, j, sentence), sim in zip(sentences, similarity, strict=True):
            overlap = len(question_words & content_words(sentence)) / len(question_words) if question_words else 0.0
            scored[i].append((float(sim) + self.policy.lexical_weight * overlap, j, sentence))
        ranked = [sorted(found, key=lambda t: (-t[0], t[1])) for found in scored]
        if query.defines:
            ranked = [_defining_first(query.defines, r) for r in ranked]
        return ranked

    def quote(self, source: Source, ranked: list[Scored], wants_list: bool, first: bool) -> Quote:
        """The sentence(s) of `source` that answer: one per paper for a list, two from the best paper otherwise."""
        if wants_list:
            chosen = ranked[:1]
            # Prefer the sentence saying what the paper does over background on the field.
            contributions = [r for r in ranked if _CONTRIBUTION.search(r[2])]
            if ranked and contributions and contributions[0][0] >= ranked[0][0] - self.policy.contribution_margin:
                chosen = contributions[:1]
        else:
            # A detail question gets a little more context from its best paper.
            chosen = sorted(ranked[: 2 if first else 1], key=lambda t: t[1])  # the abstract's order
        if not chosen:
            return Quote(_quote(source.snippet), ())
        return Quote(" ".join(_quote(s) for _, _, s in chosen), tuple(j for _, j, _ in chosen))

    def _uses_the_phrase(self, query: Query, source: Source) -> bool:
        """The paper writes the question's topic as a phrase ("conformal prediction") and clears the abstention
        bar: in a list it is an answer even when its cosine is far below the best paper's."""
        if source.score < self.policy.min_score:
            return False
        return contains_phrase(query.search, f"{source.title or ''}. {source.abstract}")

    def _read_as(self, query: Query) -> tuple[str, set[str]]:
        """(what a paper's sentences are ranked against, the words one of them shares to speak to the question). A
        topic list is read by its topic, as its papers were judged (rag.pipeline): "I'm writing the related work
        section and need references on diffusion models" quotes and keeps the papers "which papers study
        diffusion models?" does, not those whose best sentence mentions "related work"."""
        if query.wants_list and query.is_topic:
            return query.topic, content_words(query.topic) or set(query.terms)
        return query.search, set(query.terms)

    def _has_evidence(self, best: Scored, question_words: set[str]) -> bool:
        score, _, sentence = best
        return bool(question_words & content_words(sentence)) or score >= self.policy.sentence_evidence


@dataclass(frozen=True)
class Quote:
    """What an answer quotes of one paper: the text as shown, and which of its abstract's sentences (their
    positions in `split_sentences(abstract)`, so in `display_sentences(abstract)` too) it is made of."""

    text: str
    sentences: tuple[int, ...]
