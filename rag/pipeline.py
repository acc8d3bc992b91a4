"""The question's path, in one place: retrieve (fuse) → rerank → lexical evidence → judge → select/generate → cite.

    pipeline = Pipeline(store, embedder, settings)          # built once (by `Papers`): models and policy loaded
    for event in pipeline.run(query, k=5):                   # query, sources, text…, warning…, answer
        ...
    answer = pipeline.answer(query)                          # the same, consumed

`run` is a generator: the backend's text pieces pass through the citation check as they come, and a reader that
stops reading (closes the generator) stops the answer there, the LLM's stream included. Every tuned number comes
from the `Policy`; whether to answer is the judge's one `Verdict` (rag.judge), which the refusal message and the
evidence selection read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import replace
from itertools import zip_longest
from typing import TYPE_CHECKING

from .backends import Backend, get_backend
from .catalogue import asks_for_catalogue, catalogue, catalogue_answer
from .citations import CitationStreamFilter, enforce_citations, find_citations
from .embedding import OnnxMiniLM, get_embedder, get_query_embedder
from .errors import LLMError, RagError
from .facets import facet_shares, holds_topic
from .judge import NO_ANSWER, Judge, by_closeness, judge, left_out_note, list_beyond, refusal
from .lexical import LexicalIndex, get_index, query_terms, term_coverage
from .llm import drain
from .policy import Policy
from .query import Query, exclusion, list_evidence, reads_as_topic, search_text, specific_names
from .record import asked_field, asked_paper, named_paper, record_answer
from .retrieval import check_mode, fuse
from .spelling import speller_for
from .terms import keyword_pair, term_stats, topic_words
from .topic_span import load_topic_reader
from .types import Answer, Event, Retrieval, Source

if TYPE_CHECKING:
    from .config import Settings
    from .embedding import Embedder
    from .rerank import Reranker
    from .store import Store

__all__ = ["Pipeline", "answer_of", "reranked_as", "respond"]

# A paper is left out when it holds every word of what the question leaves out (a share of 1, less rounding).
_EVERY_WORD = 0.999


def reranked_as(query: Query) -> Query:
    """What the reranker reads of `query` (as retrieval applied it: `Retrieval.query`), here and where its
    calibration is fitted (train.calibrate). A list is judged paper by paper on its topic, not on the request around
    it ("… for my thesis"): the topic its facets are cut from. Retrieval still reads the whole text."""
    if query.is_topic and query.wants_list:
        return replace(query, search=query.topic)
    return query


class Pipeline:
    """One store's question path: the models, the policy and the judge, chosen once."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        settings: Settings,
        policy: Policy | None = None,
        judge: Judge = judge,
        reranker: Reranker | None = None,
    ) -> None:
        """`policy` defaults to the settings' (with the packaged calibration); `judge` to `rag.judge.judge`;
        `reranker` to the configured model when `settings.reranker` (a tuning script may give its own)."""
        self.store, self.embedder, self.settings = store, embedder, settings
        self.policy = policy or Policy.from_settings(settings)
        self.judge = judge
        if reranker is None and settings.reranker:
            from .rerank import get_reranker  # onnxruntime: loaded only when reranking is on

            reranker = get_reranker(settings)
        self.reranker = reranker
        self.query_embedder = get_query_embedder(settings, embedder)

    def minilm(self) -> OnnxMiniLM:
        """The packaged MiniLM, whatever model embeds the store: the list reader was fitted, and the record bar
        chosen, on its vectors."""
        if isinstance(self.embedder, OnnxMiniLM):
            return self.embedder
        return get_embedder(replace(self.settings, embed_backend="onnx"))  # type: ignore[return-value]

    def asks_for_list(self, query: Query, policy: Policy) -> Query:
        """`query` with `wants_list` as the list reader reads its question (the rules' reading without one)."""
        if policy.list_reader is None:
            return query
        values = [*self.minilm().embed([query.text])[0], *list_evidence(query.text)]
        return replace(query, wants_list=policy.list_reader.asks_for_list(values))

    def with_topic(self, query: Query, policy: Policy) -> Query:
        """`query` with the words naming its topic (read by rag.topic_span, or cut by rag.terms.topic_words under
        `RAG_TOPIC_CUT=keywords`), when their MiniLM cosine to its whole search text reaches
        `policy.topic_meaning_bar`: a cut that keeps one common word of a question about
        something else ("Who won the 2018 FIFA World Cup" → "World") is no topic of it, and a list judged on it
        cites any paper writing "world"."""
        if policy.topic_reader:
            cut = load_topic_reader().span(query.search) or query.search
        else:
            cut = topic_words(query.search, policy.topic_word_uses)
        if cut == query.search:
            return replace(query, topic_cut=None)
        if policy.topic_meaning_bar > 0:
            whole, part = self.minilm().embed([query.search, cut])
            if float(whole @ part) < policy.topic_meaning_bar:  # unit vectors: their cosine
                return replace(query, topic_cut=None)
        return replace(query, topic_cut=cut)

    def with_exclusion(self, query: Query) -> Query:
        """`query` searching without the clause that leaves papers out ("clustering papers but NOT the multi-view
        ones" searches "clustering"), what it leaves out kept as `excludes` (rag.query.exclusion); a cue that the
        field's keywords pair with the next word ("skip connections") is a term, not a clause."""
        if query.excludes is not None:
            return query
        kept, left_out = exclusion(query.search, keyword_pair)
        if left_out is None:
            return query
        search = search_text(kept)
        return replace(query, search=search, excludes=left_out, specifics=tuple(specific_names(search)))

    def asks_of_record(
        self, query: Query, sources: list[Source], k: int, policy: Policy, chosen: bool = False
    ) -> Query:
        """`query` with the field of its paper's record it asks for (rag.record): of the one of the `k` shown it
        names; else, unless it asks for a list, of the closest shown writing its names, or with no names the closest
        shown ("bib entry for that paper proving …"), as of the papers the user `chosen` (a follow-up about the paper
        in focus)."""
        shown = sources[:k]
        paper = named_paper(query.text, query.specifics, shown, policy.record_title_words)
        if paper is None and (chosen or not query.wants_list) and shown:
            paper = asked_paper(query.specifics, shown)
            # A name no shown paper writes names a paper below k (`named_below` looks for it), not the closest.
            if paper is None and (chosen or not query.specifics):
                paper = by_closeness(shown)[0]
        if paper is None:
            return query
        field = asked_field(query.text, paper, self.minilm(), policy.record_bar, policy.record_title_words)
        return replace(query, asks_record=field)

    def named_below(self, found: Retrieval, k: int, policy: Policy) -> Retrieval:
        """`found` with the paper its question names by a word only that candidate writes shown first, when the
        question asks a field of its record but the paper ranked below `k`: in "bibtex for PURGE" the topic is
        "bibtex" (no abstract writes it), and the cross-encoder, reading that, ranks PURGE's paper 20th."""
        query = found.query
        named = named_paper(query.text, query.specifics, found.candidates, policy.record_title_words)
        if named is None or named in found.sources[:k]:
            return found
        if self.asks_of_record(query, [named], 1, policy).asks_record is None:
            return found
        return replace(found, sources=[named, *(s for s in found.sources if s is not named)])

    # -- stages ----------------------------------------------------------------------------------------

    def retrieve(
        self,
        query: Query,
        k: int | None = None,
        paper_ids: list[str] | None = None,
        mode: str | None = None,
        policy: Policy | None = None,
    ) -> Retrieval:
        """The `k` best papers for `query`: fused candidates, reranked, with the lexical evidence the judge reads."""
        started = time.perf_counter()
        policy = policy or self.policy
        k = k or self.settings.k
        mode = mode or self.settings.retriever
        check_mode(mode)
        query = self.with_exclusion(query)
        calibration = policy.calibration if self.reranker is not None else None
        # The reranker reorders more candidates than are kept: the paper it puts first may be fused 12th.
        wanted = max(k, calibration.candidates) if calibration else k
        with self.store.reading():
            index = get_index(self.store) if mode != "dense" else None
            speller = speller_for(index) if index is not None and self.settings.spelling else None
            query, sources = fuse(
                query, self.store, self.query_embedder, self.settings, policy, wanted, paper_ids, mode, index, speller
            )
            query = self.with_topic(self.asks_for_list(query, policy), policy)
            # What the corpus reads as the topic decides whether the question names one: "for my thesis I need
            # solid citations on X" is X asked for, not a paper described in twelve words.
            query = replace(query, is_topic=reads_as_topic(query, query.topic))
            if query.is_topic and query.wants_list:
                sources = self.with_topic_candidates(query, sources, policy, wanted, paper_ids, mode, index)
            if calibration and sources:
                assert self.reranker is not None
                sources = self.reranker.rerank(reranked_as(query), sources, calibration)
            if query.excludes:
                query, sources = self.without_excluded(query, sources, index, policy)
            # The learned judge weighs every candidate, paper by paper; the rules judge reads the top k, and for a
            # list every candidate (a list's members may rank below k: rag.judge.list_beyond). Every candidate is
            # kept: a question naming a paper ranked below k is asked of it (`named_below`).
            whole = policy.judge_model is not None or query.wants_list
            self.add_lexical_evidence(query, sources if whole else sources[:k], index, mode, policy)
        return Retrieval(query, sources[:k], (time.perf_counter() - started) * 1000, sources)

    def with_topic_candidates(
        self,
        query: Query,
        sources: list[Source],
        policy: Policy,
        wanted: int,
        paper_ids: list[str] | None,
        mode: str,
        index: LexicalIndex | None,
    ) -> list[Source]:
        """A list's candidates: those its topic alone retrieves (what "which papers study X?" retrieves) and those
        its whole text retrieves (what the words around the topic add), taken in turn, each with its best chunk's
        cosine to the topic and the rank its own retrieval gave, `wanted` in all. Retrieving on the topic alone
        loses what the whole text finds (docs/EVALUATION.md); on the whole text alone, a request's words ("for my
        thesis") shape the list."""
        topic = query.topic
        if topic == query.search:
            return sources
        topical, by_topic = fuse(
            replace(query, search=topic),
            self.store,
            self.query_embedder,
            self.settings,
            policy,
            wanted,
            paper_ids,
            mode,
            index,
            None,
        )
        # A paper both retrievals find is read as the topic's retrieval found it (its cosine to the topic, its rank
        # there), so its relevance is what "which papers study X?" gives it, however the request around X reads.
        by_topic_id = {source.id: source for source in by_topic}
        merged: dict[str, Source] = {}
        for pair in zip_longest(by_topic, sources):
            for source in pair:
                if source is not None:
                    merged.setdefault(source.id, by_topic_id.get(source.id, source))
        kept = list(merged.values())[:wanted]
        # A paper only the whole text retrieves is read by its cosine to the topic as well (the reranker's logit and
        # term coverage read the topic: `reranked_as`), so the words around the topic do not lift it over the cite
        # bar; its rank stays the one its retrieval gave.
        others = {source.id for source in kept} - by_topic_id.keys()
        if others:
            cosines = self.store.best_cosines(self.query_embedder.embed([topical.search])[0], sorted(others))
            kept = [replace(s, score=cosines.get(s.id, s.score)) if s.id in others else s for s in kept]
        return kept

    def without_excluded(
        self, query: Query, sources: list[Source], index: LexicalIndex | None, policy: Policy
    ) -> tuple[Query, list[Source]]:
        """`sources` less the papers holding what the question leaves out ("clustering papers but NOT the
        multi-view ones"), cut to the words naming a topic (rag.terms.topic_words: "the pure flow matching work" →
        "flow matching"); a paper holds it when it writes every word of one of its alternatives ("X, Y or Z", "X
        and not Y" name alternatives). The question asks for them to go: no bar weighs it. The ids left out are
        `query.excluded` (and `query.excludes` the words cut), and the answer says so (`rag.judge.left_out_note`)."""
        assert query.excludes is not None
        cut = topic_words(query.excludes, policy.topic_word_uses)
        # "LLM unlearning, not generic unlearning": what tells them apart ("generic") names no topic, and leaving
        # out the papers holding the rest would leave out the topic itself.
        if set(query_terms(cut)) <= set(query_terms(query.topic)):
            return query, sources
        # "medical imaging and not protein" leaves out either: as facets, "and" would join them into one.
        named = " or ".join(part.replace("not ", "") for part in cut.split(" and "))
        index = index or get_index(self.store)
        shares = facet_shares(named, [s.text for s in sources], index, light=0.0)
        left_out = [s for s, held in zip(sources, shares, strict=True) if held and holds_topic(held, _EVERY_WORD)]
        if not left_out:
            return query, sources
        kept = [s for s in sources if s not in left_out]
        return replace(query, excludes=cut, excluded=tuple(s.id for s in left_out)), kept

    def add_lexical_evidence(
        self, query: Query, sources: list[Source], index: LexicalIndex | None, mode: str, policy: Policy
    ) -> None:
        """What the judge reads besides relevance: the share of the question's terms the top paper holds, and for
        a topic question each paper's share of each facet (rag.facets)."""
        if not sources:
            return
        if mode != "dense":
            sources[0].term_coverage = term_coverage(query.search, [sources[0].text])
        if query.is_topic:
            index = index or get_index(self.store)
            focus = facet_focus(policy.facet_focus)
            # The request and scope words around the topic are no part a paper must hold ("… for my thesis, asap").
            shares = facet_shares(query.topic, [s.text for s in sources], index, policy.light_facet, focus)
            for source, held in zip(sources, shares, strict=True):
                source.facet_shares = held

    def backend(self, name: str, policy: Policy | None = None) -> Backend:
        return get_backend(name, self.settings, self.embedder, policy or self.policy)

    # -- the whole path --------------------------------------------------------------------------------

    def run(
        self,
        query: Query,
        *,
        k: int | None = None,
        backend: str | None = None,
        paper_ids: list[str] | None = None,
        policy: Policy | None = None,
        stream: bool = True,
        depth: int | None = None,
        fallback: bool = True,
    ) -> Iterator[Event]:
        """The answer to `query` as events: "query" (as applied), "sources", "text" pieces, any "warning", "answer".

        When an LLM backend fails, the answer is the extractive one with a warning: a person asking a question
        gets an answer, not an error. `stream=False`: the reader wants the answer whole (an LLM is asked for it
        whole). For the eval: `depth` retrieves that many papers (the "sources" event has them all, to score the
        ranking) while the answer reads the top `k`; `fallback=False` lets an LLM's failure raise, since scoring
        extractive answers as the LLM's would make the numbers lie.
        """
        started = time.perf_counter()
        policy = policy or self.policy
        k = k or self.settings.k
        if query.counts_papers and paper_ids is None and self.reranker is not None and policy.calibration:
            # "how many papers study X?" is a count over the store, not a list of the first k (rag.trend).
            from .trend import count_answer, trend

            counted = trend(self, query)
            answer = count_answer(counted, query, k, "extractive", started)
            yield Event("query", query=query)
            yield Event("sources", sources=list(answer.sources))
            yield Event("text", text=answer.answer)
            yield Event("answer", answer=answer)
            return
        if paper_ids is None and asks_for_catalogue(query):
            # "list the ICLR 2026 orals": every paper the filter keeps, not those closest to "list the papers".
            answer = catalogue_answer(catalogue(self.store, query), query, "extractive", started)
            yield Event("query", query=query)
            yield Event("sources", sources=list(answer.sources))
            yield Event("text", text=answer.answer)
            yield Event("answer", answer=answer)
            return
        chosen = self.backend(backend or self.settings.backend, policy)
        spare = self.backend("extractive", policy) if fallback and chosen.name != "extractive" else None
        found = self.retrieve(query, k=max(k, depth or 0), paper_ids=paper_ids, policy=policy)
        if paper_ids is None:
            found = self.named_below(found, k, policy)
        # Only a question is asked of a paper's record: a search is not, and does not pay for reading it.
        asked = self.asks_of_record(found.query, found.sources, k, policy, chosen=paper_ids is not None)
        found = replace(found, query=asked)
        yield Event("query", query=found.query)
        yield Event("sources", sources=list(found.sources))
        if paper_ids is not None and found.query.asks_record is not None:
            # A follow-up asking a field of the paper in focus ("who wrote it?"): that paper is the one asked
            # about, whatever the evidence makes of "who wrote this paper".
            policy = replace(policy, papers_chosen=True)
        # The learned judge weighs every candidate (a list's members may rank below k); the rules, the top k,
        # and a list's further members among the rest.
        learned = policy.judge_model is not None
        judged = found.candidates if learned else found.sources[:k]
        yield from respond(
            found.query,
            judged,
            chosen,
            policy,
            shown=k,
            more=[] if learned else found.candidates[k:],
            judge=self.judge,
            fallback=spare,
            stream=stream,
            retrieve_ms=found.elapsed_ms,
            started=started,
        )

    def answer(self, query: Query, **options) -> Answer:
        """`run(query, stream=False, **options)`'s answer."""
        return answer_of(self.run(query, stream=False, **options))


def respond(
    query: Query,
    sources: list[Source],
    backend: Backend,
    policy: Policy,
    *,
    judge: Judge = judge,
    fallback: Backend | None = None,
    stream: bool = True,
    retrieve_ms: float = 0.0,
    started: float | None = None,
    shown: int | None = None,
    more: Sequence[Source] = (),
) -> Iterator[Event]:
    """Judge `sources`, then refuse or generate, checking citations: "text" pieces, any "warning", the "answer".

    `shown`: the answer shows the first `shown` sources and any member of the verdict beyond them (all when None);
    the backend reads those, and cites only them. `more`: candidates ranked below `sources`, read for a list's
    further members (rag.judge.list_beyond). An `LLMError` from `backend` is answered by `fallback` with a
    warning; without a fallback it propagates.
    """
    started = time.perf_counter() if started is None else started
    timings = {"retrieve": retrieve_ms, "generate": 0.0}
    verdict = judge(query, sources, policy)
    if verdict.answers and more:
        verdict = list_beyond(query, verdict, more, policy)
    top = sources if shown is None else sources[:shown]
    if verdict.reason == "record" and verdict.closest is not None:
        # The field is in the paper's record (its decision, the code link its abstract writes): no model needed.
        paper = verdict.closest
        text = record_answer(verdict.asked, paper)  # type: ignore[arg-type]
        yield Event("text", text=text)
        timings["total"] = (time.perf_counter() - started) * 1000
        listed = [paper, *(s for s in top if s is not paper)]
        yield Event("answer", answer=Answer(query, text, [paper.id], listed, False, "extractive", [], timings, None))
        return
    if not verdict.answers:
        text = refusal(verdict, query, policy) + left_out_note(query)
        yield Event("text", text=text)
        timings["total"] = (time.perf_counter() - started) * 1000
        closest = verdict.closest
        ordered = by_closeness(top) if verdict.members is None and verdict.likelihood is None else list(top)
        # The paper the refusal names is the first row shown, wherever it ranked (the rules' topic refusal names
        # the paper holding most of the topic, which need not be the most relevant).
        listed = [closest, *(s for s in ordered if s is not closest)] if closest else ordered
        refused = Answer(query, text, [], listed, True, backend.name, [], timings, None)
        yield Event("answer", answer=refused)
        return
    if verdict.members is not None:
        by_id = {s.id: s for s in sources}
        beyond = [by_id[i] for i in verdict.members if by_id[i] not in top]
        sources = [*top, *beyond]
    elif verdict.beyond:
        by_id = {s.id: s for s in more}
        sources = [*top, *(by_id[i] for i in verdict.beyond)]
    else:
        sources = list(top)

    valid = [s.id for s in sources]
    checker = CitationStreamFilter(valid) if (stream and backend.streams) else None
    shown = False  # whether any streamed text reached the reader
    generate_started = time.perf_counter()
    warnings: list[str] = []
    already_dropped: list[str] = []
    used = backend
    try:
        with closing(backend.generate(query, sources, verdict, stream=stream)) as pieces:
            while True:
                try:
                    piece = next(pieces)
                except StopIteration as done:
                    generation = done.value
                    break
                checked = checker.feed(piece) if checker else ""
                if checked:
                    shown = True
                    yield Event("text", text=checked)
    except LLMError as exc:
        if fallback is None:
            raise
        # An unclosed "[..." the filter still holds is dropped, never shown: it was not checked.
        already_dropped = list(checker.dropped) if checker else []
        if shown:
            yield Event("text", text="\n")  # end the half answer's line: the warning and the whole answer follow
        warning = f"{exc}; " + (
            "the answer above is incomplete, here is the extractive answer instead"
            if shown
            else "showing the extractive answer instead"
        )
        warnings.append(warning)
        yield Event("warning", text=warning)
        generation = drain(fallback.generate(query, sources, verdict, stream=False))
        used, checker = fallback, None
    if checker:
        tail = checker.flush()
        if tail:
            yield Event("text", text=tail)
    timings["generate"] = (time.perf_counter() - generate_started) * 1000

    text, dropped = enforce_citations(generation.text, valid)
    dropped = list(dict.fromkeys(already_dropped + dropped))
    abstained = generation.abstained or not text.strip()
    if abstained:
        text = NO_ANSWER
        yield Event("text", text=text)
    elif checker is None:  # not streamed: the checked text, whole
        yield Event("text", text=text)
    citations = [] if abstained else find_citations(text)
    if note := left_out_note(query):
        text += note
        yield Event("text", text=note)
    quoted = {pid: generation.quoted[pid] for pid in citations if generation.quoted.get(pid)}
    timings["total"] = (time.perf_counter() - started) * 1000
    answer = Answer(
        query,
        text,
        citations,
        by_closeness(sources) if abstained else sources,
        abstained,
        used.name,
        dropped,
        timings,
        generation.usage,
        warnings,
        quoted,
    )
    yield Event("answer", answer=answer)


def answer_of(events: Iterable[Event]) -> Answer:
    """The final answer of a stream of events (the events before it read and left)."""
    for event in events:
        if event.type == "answer" and event.answer is not None:
            return event.answer
    raise RagError("the answer stopped before it was complete")


def facet_focus(power: float) -> Callable[[str], float] | None:
    """A facet term's weight besides its IDF (`Policy.facet_focus`): the corpus burstiness to `power`. A term the
    corpus never uses (a coined name: "Zorblax", "DiVeQ") has no known use, so it keeps its IDF weight (1), not the
    smoothed burstiness of a word seen once (0)."""
    if not power:
        return None
    stats = term_stats()
    return lambda term: max(stats.burstiness(term), 0.0) ** power if term in stats.terms else 1.0
