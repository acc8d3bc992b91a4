"""The topic a facet is cut from (rag.terms.topic_words): the question's words from its first to its last word that
authors' keywords name topics with, read from the shipped keyword statistics (train.keyword_uses), or a new name."""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace

import pytest

from rag.terms import KEYWORD_USES_PATH, is_new_name, keyword_uses, topic_words

from .helpers import ask


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("hi could u pls show me papers on spiking neural networks asap", "spiking neural networks"),
        ("For my thesis background chapter I need solid citations on machine unlearning", "machine unlearning"),
        ("disentangled representation learning as the main goal", "disentangled representation learning"),
        # inner words stay, whatever they are: a topic's parts are joined by them
        ("adversarial robustness of graph neural networks", "adversarial robustness of graph neural networks"),
        ("please help, thanks", "please help, thanks"),  # no topic word: nothing is cut
        # a request word that shares a stem with a topic word ("preference") is still no topic word
        ("machine unlearning, preferably", "machine unlearning"),
        ("quick q — which papers shaped the field of diffusion models", "field of diffusion models"),
        # misspelt and shortened request words are no new names
        ("recomend some papers on diffusion models", "diffusion models"),
        ("send papers abt diffusion models ty", "diffusion models"),
        # a misspelt topic word is a topic word
        ("papers on federeated learning pls", "federeated learning"),
        # a word a keyword pairs with its neighbour stays, though few keywords use it alone
        ("papers on skill discovery for agents, asap", "skill discovery for agents"),
        # a name the corpus has never seen is the topic
        ("Zorblax optimizer", "Zorblax optimizer"),
    ],
)
def test_the_words_around_a_topic_fall_away_and_the_topic_stays(text, topic):
    assert topic_words(text, 10) == topic


def test_request_words_are_in_no_keyword_and_topic_words_in_many():
    uses = keyword_uses().uses
    assert all(uses.get(word, 0) == 0 for word in ("thesis", "asap", "pls", "advisor", "citation", "preferably"))
    assert all(uses[word] >= 100 for word in ("unlearning", "clustering", "diffusion", "graph"))


@pytest.mark.parametrize(
    ("word", "new"),
    [
        ("Zorblax", True),
        ("DiVeQ", True),
        ("zorblax", True),
        ("recomend", False),
        ("realted", False),
        ("thx", False),
        ("tomorrow", False),
    ],
)
def test_a_new_name_is_no_word_of_the_language_nor_a_typo_of_one(word, new):
    assert is_new_name(word) is new


def test_the_keyword_statistics_are_the_file_their_card_names():
    card = (KEYWORD_USES_PATH.parent / "KEYWORD_USES.md").read_text(encoding="utf-8")
    (digest,) = re.findall(r"`keyword_uses.json.gz` ([0-9a-f]{64})", card)
    assert hashlib.sha256(KEYWORD_USES_PATH.read_bytes()).hexdigest() == digest


def test_a_topic_wrapped_in_scope_words_is_answered_and_was_refused_without_the_cut(seed_store, seed_settings):
    """dev3's "as the main goal" used to be read as a part of the topic no paper holds (the facet rule refused a
    paper at relevance 0.98); with the cut, the disentanglement papers are listed."""
    from rag.pipeline import Pipeline, answer_of
    from rag.query import parse

    store, embedder = seed_store
    question = "which papers have disentangled representation learning as the main goal?"
    answer = ask(question, store, embedder, seed_settings)
    assert not answer.abstained and {"000-14", "000-09"} <= set(answer.citations)
    pipeline = Pipeline(store, embedder, seed_settings)
    no_cut = replace(pipeline.policy, topic_reader=False, topic_word_uses=0)
    uncut = answer_of(pipeline.run(parse(question), policy=no_cut, stream=False))
    assert uncut.abstained and "covers “disentangled representation learning as the main goal”" in uncut.answer


def test_a_refusal_names_the_topic_without_the_request_around_it(seed_store, seed_settings):
    """The facet rule's refusal quotes the topic it judged, not "… for my thesis asap"."""
    store, embedder = seed_store
    answer = ask(
        "hi, could you find me papers on federated unlearning for my thesis asap?", store, embedder, seed_settings
    )
    assert answer.abstained and "no paper found covers “federated unlearning”;" in answer.answer


@pytest.mark.parametrize(
    "question",
    [
        "Who won the 2018 FIFA World Cup?",
        "who won the 2022 FIFA World Cup",
        "tire pressure light on but tires look fine",
    ],
)
def test_a_cut_keeping_one_word_of_another_subject_is_no_topic_and_the_question_is_refused(
    question, seed_store, seed_settings
):
    """The keyword cut kept "World" (or "fine"), which a seed paper writes: the list was judged on that word and
    cited the paper. Its meaning is not the question's (MiniLM cosine under `topic_meaning_bar`), so the whole text
    is read. The topic reader's cut ("World Cup") is refused too."""
    from rag.pipeline import Pipeline, answer_of
    from rag.query import parse

    store, embedder = seed_store
    assert ask(question, store, embedder, seed_settings).abstained
    pipeline = Pipeline(store, embedder, seed_settings)
    keyword_cut = replace(pipeline.policy, topic_reader=False)
    found = pipeline.retrieve(parse(question), policy=keyword_cut)
    assert found.query.topic == found.query.search
    assert answer_of(pipeline.run(parse(question), policy=keyword_cut, stream=False)).abstained
    every_cut = replace(keyword_cut, topic_meaning_bar=0.0)
    assert not answer_of(pipeline.run(parse(question), policy=every_cut, stream=False)).abstained


def test_a_cut_keeping_the_questions_meaning_is_its_topic(seed_store, seed_settings):
    """A request wrapped around a topic keeps the topic as its cut: the facets, the reranker and the refusal read
    "machine unlearning", not the request."""
    from .helpers import retrieve

    store, embedder = seed_store
    found = retrieve(
        "For my related work section I need every paper in this collection on machine unlearning",
        store,
        embedder,
        seed_settings,
    )
    assert found.query.topic == "machine unlearning" != found.query.search


@pytest.mark.parametrize("topic", ["multi-view clustering", "knowledge distillation"])
@pytest.mark.parametrize(
    "request_",
    [
        # request words sharing a stem with topic words ("recommend", "preferably") were read as parts of the topic
        "Just joined a new team and everyone keeps talking about {topic}. Any papers you'd recommend so I can catch "
        "up?",
        "{topic}, preferably",
        # the reranker read "related work section of my thesis" with the topic, and a member fell under the bar
        "i'm writing the related work section of my thesis and just realized i barely cite anything on {topic}. can "
        "you find me the papers i should be citing?",
        # more than 8 words and not opening like a list: read as a description of one paper until a list request
        # was read by its topic words (rag.query.reads_as_topic); 2 of the plain answer's 3 or 4 papers were cited
        "I am putting together a grant proposal and need to show I know the prior work on {topic}",
        "our lab is starting a project next semester and I was asked to collect the papers on {topic}",
    ],
)
def test_a_list_asked_in_request_words_cites_the_papers_the_plain_question_cites(
    seed_store, seed_settings, topic, request_
):
    store, embedder = seed_store
    plain = ask(f"which papers study {topic}?", store, embedder, seed_settings)
    asked = ask(request_.format(topic=topic), store, embedder, seed_settings)
    assert plain.citations and set(asked.citations) == set(plain.citations)


def test_a_paper_described_in_other_words_is_no_topic_however_few_topic_words_it_holds(seed_store, seed_settings):
    """A question about one paper keeps its whole text: cut to its topic words ("rl"), this description would be
    a short topic whose facets no paper holds."""
    from rag.pipeline import Pipeline
    from rag.query import parse

    store, embedder = seed_store
    question = "scrubbing banned facts out of a released chatbot with an rl objective that punishes any reference"
    retrieval = Pipeline(store, embedder, seed_settings).retrieve(parse(question))
    assert not retrieval.query.is_topic
    answer = ask(question, store, embedder, seed_settings)
    assert answer.citations[:1] == ["001-02"]


def test_a_list_described_in_more_than_8_topic_words_is_answered_not_refused_for_a_part(seed_store, seed_settings):
    """A list whose topic words run past 8 describes what it wants; read as a topic, it was refused because no
    paper holds every part of "noisy labels, partial or candidate labels, label proportions, positive-unlabeled"."""
    from rag.pipeline import Pipeline
    from rag.query import parse

    store, embedder = seed_store
    question = (
        "papers on learning from imperfect supervision: noisy labels, partial or candidate labels, label "
        "proportions, positive-unlabeled data"
    )
    assert parse(question).is_topic  # as parsed, before the corpus reads its topic words
    assert not Pipeline(store, embedder, seed_settings).retrieve(parse(question)).query.is_topic
    answer = ask(question, store, embedder, seed_settings)
    assert not answer.abstained and len(set(answer.citations) & {"000-05", "000-08", "002-16", "002-19"}) >= 2


def test_a_wrapped_list_takes_its_candidates_in_turn_from_its_topic_and_its_whole_text(seed_store, seed_settings):
    """What "which papers study knowledge distillation?" retrieves first is among a wrapped request's candidates,
    beside what its whole text retrieves first, each paper once, as many candidates as one retrieval gives."""
    from rag.lexical import get_index
    from rag.pipeline import Pipeline
    from rag.query import parse
    from rag.retrieval import fuse

    store, embedder = seed_store
    pipeline = Pipeline(store, embedder, seed_settings)
    query = parse("hey can u find me papers on knowledge distillation for my thesis pls")
    index, wanted = get_index(store), 20
    shared = (pipeline.policy, wanted, None, "hybrid", index, None)
    _, whole = fuse(query, store, pipeline.query_embedder, seed_settings, *shared)
    _, topic = fuse(
        replace(query, search="knowledge distillation"), store, pipeline.query_embedder, seed_settings, *shared
    )
    merged = [s.id for s in pipeline.with_topic_candidates(query, whole, *shared[:-1])]
    assert merged[0] == topic[0].id and len(merged) == len(set(merged)) == wanted
    assert {s.id for s in topic[:10]} | {s.id for s in whole[:10]} <= set(merged)


@pytest.mark.parametrize("topic", ["diffusion models", "implicit neural representations"])
@pytest.mark.parametrize(
    "request_",
    [
        # the topic cut is exactly the plain question's, yet a member was dropped: its best sentence, ranked against
        # the whole request, shared none of the request's words ("writing", "section", "references")
        "I'm writing the related work section for my paper and need references on {topic}.",
        # ranked in turn with what the whole text retrieves, a member's fused rank doubled and its relevance fell
        # under the cite bar
        "Are there any notable studies focused on {topic} that I should know about?",
    ],
)
def test_a_list_wrapped_in_a_long_request_is_read_by_its_topic_paper_by_paper(
    seed_store, seed_settings, topic, request_
):
    store, embedder = seed_store
    plain = ask(f"which papers study {topic}?", store, embedder, seed_settings)
    asked = ask(request_.format(topic=topic), store, embedder, seed_settings)
    assert len(plain.citations) >= 4 and set(asked.citations) == set(plain.citations)


def test_a_paper_the_topic_retrieves_has_the_relevance_the_plain_question_gives_it(seed_store, seed_settings):
    """A list's candidates come from its topic's retrieval and its whole text's, taken in turn; a paper the topic
    retrieves is reranked with the cosine and rank that retrieval gave it, not its place in the merged list."""
    from .helpers import retrieve

    store, embedder = seed_store
    plain = retrieve("which papers study diffusion models?", store, embedder, seed_settings)
    wrapped = retrieve(
        "hey, do you know any work on diffusion models? trying to get up to speed",
        store,
        embedder,
        seed_settings,
    )
    assert wrapped.query.search != plain.query.search  # two retrievals were merged
    assert wrapped.query.topic == plain.query.search  # the same topic
    read = {s.id: (s.score, s.fused_rank, s.relevance) for s in plain.candidates}
    shared = [s for s in wrapped.candidates if s.id in read][:5]
    assert len(shared) == 5
    assert [(s.score, s.fused_rank) for s in shared] == [read[s.id][:2] for s in shared]
    # The int8 cross-encoder quantizes each batch's activations on the fly: the same pair's logit moves a little
    # with the other passages in its batch.
    assert all(s.relevance == pytest.approx(read[s.id][2], abs=0.05) for s in shared)


def test_every_candidate_of_a_wrapped_list_is_read_by_its_cosine_to_the_topic(seed_store, seed_settings):
    """The papers only the whole text retrieves are weighed by their closeness to the topic too, as the logit and
    term coverage are: the words around the topic ("trying to get up to speed") do not lift them."""
    from .helpers import retrieve

    store, embedder = seed_store
    wrapped = retrieve(
        "hey, do you know any work on diffusion models? trying to get up to speed", store, embedder, seed_settings
    )
    plain = {s.id for s in retrieve("which papers study diffusion models?", store, embedder, seed_settings).candidates}
    whole_only = [s for s in wrapped.candidates if s.id not in plain]
    assert whole_only  # the whole text adds candidates of its own
    topic = embedder.embed(["diffusion models"])[0]
    best = store.best_cosines(topic, [s.id for s in wrapped.candidates])
    assert all(s.score == pytest.approx(best[s.id], abs=1e-4) for s in wrapped.candidates)
