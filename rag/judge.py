"""Whether to answer, and on which evidence: `judge(query, sources, policy) -> Verdict`, decided once.

The pipeline calls the judge once per question, after retrieval and reranking; the refusal message renders its
verdict (`refusal`), and the evidence selection reads the verdict's evidence (which papers hold the topic, which
give the count) instead of checking the rules again. A different judge is one argument to `Pipeline`: any
callable with this signature.

The rules, in the order a refusal names them:
- nothing retrieved (the store, or the year/venue restriction, has no match);
- a topic question no retrieved paper holds every facet of (rag.facets: the paper on graph neural networks does
  not answer "adversarial robustness of graph neural networks");
- a count question none of whose relevant papers gives a number of what it counts;
- a question naming a paper (a retrieved paper writes one of its names) and a dataset, benchmark, metric, model or
  robot (a coined name, or capitalized words the corpus writes as a name: "Cityscapes") that none of them writes
  ("what FID does DiVeQ reach on ImageNet?" of a DiVeQ abstract without FID or ImageNet): the abstracts do not
  report it, and the refusal quotes what the paper does report;
- a question naming one paper by a rare coined name ("DiVeQ"), read of that paper alone, whose other words the
  paper mostly does not write ("what codebook size did DiVeQ use in its VQGAN experiments?": under
  `Policy.unsaid_share` of them): it asks what the abstract does not report, and the refusal quotes what it does;
- (not a rule on the evidence) a question asking a field of its found paper's record that the store does not hold:
  its authors, a code link its abstract does not write, a decision not recorded (rag.record);
- the best paper under the bar: its calibrated relevance under `calibration.relevance_bar` (unless a paper writes
  the name a "what is X?" question asks about), or with the reranker off its cosine under `min_score` (less a
  slack for a paper holding every term of the question).
With `policy.bars_off` (the user chose the papers, or `--min-score 0`) no bar or rule applies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from .facets import facets_held, gives_count, holds_topic, missing_text
from .lexical import query_terms, term_coverages
from .policy import EVIDENCE, Policy
from .query import Query, mentions, names_any
from .record import asked_paper, holds, not_held, writes_a_name
from .terms import proper_names, term_evidence, term_stats, word_for
from .text import split_sentences, tidy_latex
from .types import Source, Verdict

__all__ = ["EVIDENCE", "Judge", "by_closeness", "evidence_rows", "judge", "list_beyond", "refusal"]

Judge = Callable[[Query, Sequence[Source], Policy], Verdict]


def judge(query: Query, sources: Sequence[Source], policy: Policy) -> Verdict:
    """The verdict on answering `query` from `sources` (best first) under `policy`: the evidence's, and for a
    question asking a field of its paper's record (rag.record), once the paper is found, whether the store holds it."""
    verdict = evidence_verdict(query, sources, policy)
    field = query.asks_record
    if field is None or not sources:
        return verdict
    # Papers the user chose are the papers asked about ("who wrote it?"), whatever names the question holds.
    paper = asked_paper(() if policy.bars_off else query.specifics, sources)
    if paper is None:
        # The question names a paper none shown writes: no answer from another paper's record; no store holds
        # authors, so that much is said.
        return Verdict(False, "not_held", asked=field) if field == "authors" else verdict
    # The paper is found when the evidence answers, or when it writes the name the question gives it (the
    # cross-encoder reads "is there a github link for the FeDaL code?" as barely about FeDaL's abstract: 0.01).
    if not (verdict.answers or writes_a_name(query.specifics, paper)):
        return verdict
    held = holds(field, paper)  # type: ignore[arg-type]
    return Verdict(held, "record" if held else "not_held", paper, asked=field)


def evidence_verdict(query: Query, sources: Sequence[Source], policy: Policy) -> Verdict:
    """Whether `sources` (best first) answer `query` under `policy`, by the rules or the learned judge."""
    if not sources:
        return Verdict(False, "no_papers")
    defined = defines_name(query, sources)
    if policy.bars_off:
        return Verdict(True, "chosen", defined=defined)
    if policy.judge_model is not None and sources[0].relevance is not None:
        return learned_verdict(query, sources, policy, defined)
    holding = None
    if query.is_topic:
        holding = frozenset(s.id for s in sources if holds_topic(s.facet_shares, policy.facet_bar))
    counting = None
    if query.counts:
        counting = frozenset(
            s.id for s in sources if gives_count(query.counts, s.abstract or s.snippet, policy.count_window)
        )

    reranked = sources[0].relevance is not None
    if reranked:
        assert policy.calibration is not None, "reranked sources are judged with the calibration that ranked them"
        bar = policy.calibration.relevance_bar
        under_bar = max(s.relevance or 0.0 for s in sources) < bar and not defined
    else:
        bar = 0.0
        # Fusion may rank first a paper with a lower cosine than another source: the best evidence counts.
        exact = (sources[0].term_coverage or 0.0) >= policy.exact_match_coverage
        under_bar = max(s.score for s in sources) < policy.min_score - (policy.exact_match_slack if exact else 0.0)
    relevant = [s for s in sources if s.relevance is None or s.relevance >= bar]
    no_count = counting is not None and not any(s.id in counting for s in relevant)
    no_topic = holding is not None and not holding
    naming, named, unnamed = lacking_details(query, sources)
    unsaid = None
    if reranked and not unnamed:
        assert policy.calibration is not None
        bar = policy.calibration.detail_bar
        unsaid = unsaid_words(query, sources, policy.unsaid_share, bar, policy.paper_name_df)
    if not (under_bar or no_count or no_topic or unnamed or unsaid):
        return Verdict(True, "evidence", holding=holding, counting=counting, defined=defined)

    closest = by_closeness(sources)
    if no_topic:  # the paper holding most of the topic's facets (the closest of those) shows what is missing
        return Verdict(False, "topic", max(closest, key=lambda s: facets_held(s.facet_shares, policy.facet_bar)))
    if no_count:
        return Verdict(False, "count", closest[0], counting=counting)
    if unnamed and naming is not None:
        return Verdict(False, "detail", naming, named=named, unnamed=unnamed)
    if unsaid is not None:
        paper, named, missing = unsaid
        return Verdict(False, "unsaid", paper, named=named, unnamed=missing)
    if reranked:
        return Verdict(False, "relevance", max(sources, key=lambda s: s.relevance or 0.0))
    return Verdict(False, "score", max(sources, key=lambda s: s.score))


def lacking_details(query: Query, sources: Sequence[Source]) -> tuple[Source | None, tuple[str, ...], tuple[str, ...]]:
    """(the closest paper writing one of the question's names, the names it writes, the names none of `sources`
    writes). A near miss names its paper ("DiVeQ") and a detail its abstract does not give ("FID on ImageNet", "on
    Cityscapes", "with the Allegro hand"); the cross-encoder still scores the paper relevant, since it is the right
    paper. The names are the coined ones (`Query.specifics`) and those in capitalized words the corpus writes as
    names (rag.terms.proper_names). Every paper shown is read, so "how do PURGE and Sharp MinMax differ?" is held by
    the two papers together. Lists are left to the facet rule: a list's names are its topic."""
    if query.wants_list:
        return None, (), ()
    names = tuple(dict.fromkeys((*query.specifics, *proper_names(query.search))))
    if len(names) < 2:
        return None, (), ()
    naming = [s for s in sources if any(mentions(name, s.text) for name in names)]
    if not naming:
        return None, (), ()
    unnamed = tuple(n for n in names if not any(mentions(n, s.text) for s in naming))
    if not unnamed:
        return None, (), ()
    closest = by_closeness(naming)[0]
    return closest, tuple(n for n in names if mentions(n, closest.text)), unnamed


def unsaid_words(
    query: Query, sources: Sequence[Source], share: float, bar: float, rare: int
) -> tuple[Source, tuple[str, ...], tuple[str, ...]] | None:
    """(the paper the question names, the names it writes, the question's words no paper read writes, most topical
    first) when the papers read write under `share` of the question's other words (`Policy.unsaid_share`), else
    None. "What codebook size did DiVeQ use in its VQGAN experiments?" names its paper, which the cross-encoder
    scores relevant (0.82: the paper is on topic) though its abstract never gives a codebook size; what a question
    asks of a named paper is in the words beside the name. `bar`, `rare`: see `words_beside_names`."""
    read = words_beside_names(query, sources, bar, rare) if share > 0 else None
    if read is None:
        return None
    paper, written, others, lacking = read
    if 1 - len(lacking) / len(others) >= share:
        return None
    stats = term_stats()
    by_topicality = sorted(lacking, key=lambda term: (-stats.topicality(term), term))
    return paper, written, tuple(word_for(term, query.text) for term in by_topicality)


def words_beside_names(
    query: Query, sources: Sequence[Source], bar: float, rare: int
) -> tuple[Source, tuple[str, ...], frozenset[str], frozenset[str]] | None:
    """(the paper the question names, the names it writes, the question's other stemmed words, those of them the
    paper does not write). A paper is named by a coined name of the question that at most `rare` of the corpus's
    abstracts write (`Policy.paper_name_df`: "DiVeQ", "PURGE"; not "GPU" or "InfoNCE", vocabulary that a
    description of a paper uses). None for a list, a definition ("what is X?"), a count (its own rule), a question
    of a paper's record, a question naming no paper, one read across several papers (another shown at relevance
    `bar`, the calibration's detail bar, or named too: a comparison), one of a single other word (written or not:
    no share to weigh), and unranked sources (no relevance to read by)."""
    if query.wants_list or query.defines or query.counts or query.asks_record:
        return None
    if not sources or sources[0].relevance is None:
        return None
    stats = term_stats()
    names = [
        name for name in query.specifics if min((stats.df(t) for t in query_terms(name)), default=rare + 1) <= rare
    ]
    named = [s for s in sources if any(mentions(name, s.text) for name in names)]
    read = {s.id for s in named} | {s.id for s in sources if (s.relevance or 0.0) >= bar}
    if len(named) != 1 or len(read) != 1:
        return None
    paper = named[0]
    written = tuple(name for name in query.specifics if mentions(name, paper.text))
    others = frozenset(query_terms(query.search) - {term for name in written for term in query_terms(name)})
    if len(others) < 2:
        return None
    return paper, written, others, others - query_terms(paper.text)


def list_beyond(query: Query, verdict: Verdict, more: Sequence[Source], policy: Policy) -> Verdict:
    """A list answered from the top k, with the candidates ranked below them that pass the list's own test: the
    calibrated relevance at the cite bar, and every facet of the topic held. "Which papers study X?" names every
    such paper the reranker read, not the first k of them."""
    if not (query.wants_list and more and verdict.members is None and verdict.counting is None):
        return verdict
    if policy.calibration is None or more[0].relevance is None:
        return verdict  # without the reranker no calibrated test says a paper below k belongs
    bar = policy.calibration.cite_bar
    facets_needed = verdict.holding is not None
    beyond = tuple(
        s.id
        for s in more
        if (s.relevance or 0.0) >= bar and (not facets_needed or holds_topic(s.facet_shares, policy.facet_bar))
    )
    if not beyond:
        return verdict
    holding = verdict.holding | frozenset(beyond) if verdict.holding is not None else None
    return replace(verdict, beyond=beyond, holding=holding, more_may_match=beyond[-1] == more[-1].id)


def learned_verdict(query: Query, sources: Sequence[Source], policy: Policy, defined: bool) -> Verdict:
    """One model weighs every candidate's evidence: answer when the likeliest paper reaches the answer bar, and
    cite every paper reaching the member bar, paper by paper (a list lists all it finds, not the first k)."""
    model = policy.judge_model
    assert model is not None
    rows = evidence_rows(query, sources, policy)
    likely = [model.probability(row) for row in rows]
    order = sorted(range(len(sources)), key=lambda i: -likely[i])
    best = order[0]
    if likely[best] >= model.answer_bar:
        members = tuple(sources[i].id for i in order if i == best or likely[i] >= model.member_bar)
        return Verdict(True, "evidence", defined=defined, members=members, likelihood=likely[best])
    return Verdict(False, "judged", sources[best], likelihood=likely[best], weakest=model.weakest(rows[best]))


def defines_name(query: Query, sources: Sequence[Source]) -> bool:
    """ "what is CAMEL?" is answered by a paper that names CAMEL, whatever its relevance: the cross-encoder and
    MiniLM score a rare name low (CAMEL's own paper: relevance 0.25), and a name that a paper writes is a name that
    paper defines or uses."""
    return bool(query.defines) and any(names_any((query.defines,), s.text) for s in sources)


def by_closeness(sources: Sequence[Source]) -> list[Source]:
    """A refusal's "closest papers", by what the bar judged (relevance, or else cosine), not the fused rank."""
    return sorted(sources, key=lambda s: -s.closeness)


NO_ANSWER = "The indexed abstracts don't answer this: none of the retrieved papers addresses the question."


def years_bound(since: int | None, until: int | None) -> str | None:
    """A year bound as a refusal words it: "2023 on", "2025-2026" (None: no bound)."""
    if since is not None and until is not None:
        return f"{since}-{until}"
    return f"{since} on" if since is not None else None


def refusal(verdict: Verdict, query: Query, policy: Policy) -> str:
    """The one line saying why `verdict` refuses, naming the closest paper and the bar or rule it missed."""
    lead = "The indexed abstracts don't answer this: "
    closest = verdict.closest
    restriction = query.venue or query.year or years_bound(query.since, query.until)
    if verdict.reason == "not_held":
        return f"{lead}{not_held(verdict.asked, closest, query.specifics)}"  # type: ignore[arg-type]
    if verdict.reason == "no_papers" or closest is None:
        if restriction:  # say which restriction emptied the search: "ICLR 2027" is a typo the user can fix
            return f"{lead}the store has no paper from {restriction}."
        return f"{lead}no paper in the store matches the question."
    if verdict.reason == "topic":
        shares = closest.facet_shares or ()
        where = f" from {restriction}" if restriction else ""
        covers = "covers all of" if len(shares) > 1 else "covers"
        unmentioned = bool(shares) and max(share for _, share in shares) == 0
        lacks = missing_text(shares, policy.facet_bar) or (
            "never mentions it" if unmentioned else "shares only some of its terms"
        )
        # The topic as the facets were cut from it, not the request around it ("… asap, for my thesis").
        found = f"no paper{where} found {covers} “{query.topic}”"
        return f"{lead}{found}; the closest ({closest.id}, {_judged(closest)}) {lacks}."
    if verdict.reason == "count":
        return (
            f"{lead}none of the papers found gives a number of {query.counts}; "
            f"the closest ({closest.id}, {_judged(closest)}) gives none."
        )
    if verdict.reason == "detail":
        said = _closest_sentence(query, closest)
        reports = f"; what it does report: “{said}”" if said else ""
        return (
            f"{lead}the paper that writes {_names(verdict.named, 'and')} ({closest.id}, {_judged(closest)}) never "
            f"mentions {_names(verdict.unnamed, 'or')}{reports}"
        )
    if verdict.reason == "unsaid":
        said = _closest_sentence(query, closest)
        reports = f"; what it does report: “{said}”" if said else ""
        return (
            f"{lead}the paper that writes {_names(verdict.named, 'and')} ({closest.id}, {_judged(closest)}) never "
            f"mentions {_names(verdict.unnamed[:3], 'or')}{reports}"
        )
    if verdict.reason == "judged":
        assert policy.judge_model is not None and verdict.likelihood is not None
        why = _weakest_text(verdict.weakest, closest, query, policy)
        return (
            f"{lead}the closest paper ({closest.id}, relevance {closest.relevance or 0:.2f}) {why}; "
            f"judged {verdict.likelihood:.2f} likely to answer, under the bar {policy.judge_model.answer_bar:g}."
        )
    if verdict.reason == "relevance":
        assert policy.calibration is not None
        bar = policy.calibration.relevance_bar
        return f"{lead}the closest paper ({closest.id}) has relevance {closest.relevance:.2f}, below the bar {bar:g}."
    return (
        f"{lead}the closest paper ({closest.id}) scores {closest.score:.2f}, below the evidence threshold "
        f"{policy.min_score:g}."
    )


def _weakest_text(weakest: str | None, closest: Source, query: Query, policy: Policy) -> str:
    """The weakest evidence of the closest paper, in words."""
    if weakest in ("facet_min", "facet_mean") and closest.facet_shares:
        return missing_text(closest.facet_shares, policy.facet_bar) or "holds only part of the topic"
    if weakest == "count_missing" and query.counts:
        return f"gives no number of {query.counts}"
    if weakest == "names_held" and query.names:
        lacking = [name for name in query.names if not names_any((name,), closest.text)]
        if lacking:
            return f"never writes {', '.join(lacking)}"
    if weakest in ("topic_held", "topic_missing", "rare_held", "rare_missing", "coverage"):
        (held,) = term_evidence(query.text, [closest.text])
        if held.missing:
            said = _closest_sentence(query, closest)
            reports = f"; what it does report: “{said}”" if said else ""
            return f"never mentions “{word_for(held.missing, query.text)}”{reports}"
    return "matches the question only loosely"


def _closest_sentence(query: Query, source: Source) -> str:
    """The sentence of `source`'s abstract holding most of the question's terms: what the paper does say about the
    question's subject (a near miss: the benchmark asked about is missing, the one it reports is here)."""
    sentences = split_sentences(source.abstract or source.snippet)
    if not sentences:
        return ""
    coverages = term_coverages(query.text, sentences)
    best = max(range(len(sentences)), key=lambda i: (coverages[i], -i))
    if coverages[best] == 0:
        return ""
    return tidy_latex(sentences[best]).replace("[", "(").replace("]", ")")  # never read as a citation


def _names(names: Sequence[str], joined: str) -> str:
    """ "A", "A and B", "A, B or C": the names a refusal says a paper writes, or never mentions."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {joined} {names[-1]}"


def _judged(source: Source) -> str:
    """What a message shows of a paper's match: its relevance, or else its cosine."""
    return f"relevance {source.relevance:.2f}" if source.relevance is not None else f"{source.score:.2f}"


# -- the evidence as numbers: what the learned judge weighs (rag.policy.JudgeModel) -------------------------------


def evidence_rows(query: Query, sources: Sequence[Source], policy: Policy) -> list[list[float]]:
    """Each candidate's evidence (EVIDENCE, in order): the rules' findings as numbers, for one model to weigh."""
    if not sources:
        return []
    best = max(s.relevance or 0.0 for s in sources)
    texts = [s.text for s in sources]
    coverages = term_coverages(query.search, texts)
    # The whole question, request words and all: the corpus's statistics weigh which words it is about.
    held_terms = term_evidence(query.text, texts, term_stats())
    last = max(len(sources) - 1, 1)
    rows = []
    for place, (source, coverage, terms) in enumerate(zip(sources, coverages, held_terms, strict=True)):
        relevance = min(max(source.relevance or 0.0, 1e-4), 1 - 1e-4)
        shares = [share for _, share in source.facet_shares or ()]
        text = source.abstract or source.snippet
        count_missing = bool(query.counts) and not gives_count(query.counts, text, policy.count_window)
        held = sum(names_any((name,), source.text) for name in query.names)
        rows.append(
            [
                math.log(relevance / (1 - relevance)),
                relevance - best,
                place / last,
                place / last if query.wants_list else 0.0,
                min(shares, default=1.0),
                sum(shares) / len(shares) if shares else 1.0,
                float(count_missing),
                held / len(query.names) if query.names else 1.0,
                coverage,
                terms.topic_held,
                terms.rare_held,
                terms.topic_missing,
                terms.rare_missing,
            ]
        )
    return rows


def left_out_note(query: Query) -> str:
    """The line closing an answer that left papers out as its question asked ("… but NOT the multi-view ones"),
    naming them, uncited; "" when none was left out."""
    if not query.excluded:
        return ""
    papers = "paper" if len(query.excluded) == 1 else "papers"
    return (
        f"\n\nLeft out, as asked: {len(query.excluded)} {papers} on “{query.excludes}” ({', '.join(query.excluded)})."
    )
