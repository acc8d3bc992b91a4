"""The local backend's checks on what the model wrote (pure functions: no model needed). The cases are the
1.5B model's real mistakes on evals/questions.jsonl."""

from __future__ import annotations

from rag.backends.local import _tidy_sentence, parse_verdict, unsupported

from .helpers import generated, retrieve

PHYCLIP = (
    "PHyCLIP. We propose PHyCLIP, which employs an l1-Product metric on a Cartesian product of Hyperbolic factors. "
    "Experiments on zero-shot classification, retrieval and compositional understanding tasks demonstrate that "
    "PHyCLIP outperforms existing single-space approaches."
)
ZEROTUNING = (
    "ZeroTuning. We introduce ZeroTuning, a training-free method. For example, on Llama-3.1-8B, it yields "
    "relative improvements of 19.9% on classification, 4.5% on question answering and 2.1% on dialogue."
)
PURGE = (
    "PURGE. We propose PURGE, a method grounded in Group Relative Policy Optimization that formulates "
    "unlearning as a verifiable problem, reaching 11% unlearning effectiveness while preserving 98% utility."
)


def test_a_number_the_abstract_does_not_contain_is_caught():
    sentence = "PHyCLIP reports a zero-shot ImageNet accuracy of 80.5%."
    assert "80.5" in unsupported(
        sentence, "what zero-shot imagenet accuracy does PHyCLIP report?", PHYCLIP, PHYCLIP, False
    )


def test_numbers_the_abstract_states_pass_whatever_their_formatting():
    sentence = "On Llama-3.1-8B, ZeroTuning improves classification by 19.9% relative."
    question = "zerotuning relative improvement on classification with llama-3.1-8b?"
    assert unsupported(sentence, question, ZEROTUNING, ZEROTUNING, False) is None
    text = "PU-Bench reports 2,880 evaluations of 18 methods."
    assert unsupported("PU-Bench has 18 methods and 2880 evaluations.", "how many?", text, text, False) is None


def test_a_quantity_question_answered_without_the_quantity_is_caught():
    sentence = "ZeroTuning improves LLM performance with head-specific attention adjustments."
    question = "zerotuning relative improvement on classification with llama-3.1-8b?"
    assert "quantity" in unsupported(sentence, question, ZEROTUNING, ZEROTUNING, False)
    # ... unless the text the model read has no number to give.
    assert unsupported(sentence, question, ZEROTUNING, "ZeroTuning is a training-free method.", False) is None


def test_a_list_answer_pinning_the_questions_words_on_a_paper_is_caught():
    sentence = "PURGE is a novel method for federated unlearning."
    problem = unsupported(sentence, "which papers study federated unlearning?", PURGE, PURGE, True)
    assert problem is not None and "feder" in problem
    # Echoing words the abstract does use is fine, and detail answers may reuse the question's frame.
    assert (
        unsupported(
            "PURGE formulates unlearning as a verifiable problem.", "which papers study unlearning?", PURGE, PURGE, True
        )
        is None
    )
    assert (
        unsupported(
            "PURGE includes a verifiable unlearning formulation.", "what does PURGE include?", PURGE, PURGE, False
        )
        is None
    )


def test_the_models_brackets_never_read_as_citations():
    assert _tidy_sentence("the abstract shows X [001-02] works", True) == "This paper shows X (001-02) works."
    # Cut off mid-sentence by max_tokens: only whole sentences stay.
    assert _tidy_sentence("PURGE removes concepts. It also keeps utility and", False) == "PURGE removes concepts."


def test_numbers_inside_names_are_not_claims():
    text = "We fine-tune ResNet-50 and Qwen2.5 on A100 GPUs."
    assert unsupported("It trains ResNet50 on A100 GPUs with Qwen2.5.", "which gpus?", text, text, False) is None


def test_replies_cut_off_or_broken_are_read_field_by_field():
    assert parse_verdict('{"relevant": false, "sentence": ""}') == (False, "", True)
    assert parse_verdict('{"relevant": true, "sentence": "PURGE erases concepts."}') == (
        True,
        "PURGE erases concepts.",
        True,
    )
    # max_tokens cut inside the sentence, even inside an escape: what was said, marked unfinished.
    assert parse_verdict('{"relevant": true, "sentence": "It runs caf\\u00') == (True, "It runs caf", False)
    # cut after the sentence's closing quote: the sentence is whole.
    assert parse_verdict('{"relevant": true, "sentence": "It is 3.2x faster."') == (True, "It is 3.2x faster.", True)
    # nothing usable: relevant (retrieval chose the paper) with no sentence, so its own words stand in.
    assert parse_verdict("[1]") == (True, "", False)
    assert parse_verdict("") == (True, "", False)


class ScriptedModel:
    """Stands in for llama_cpp.Llama: replies from a script, one per call (fault cases the real model rarely hits)."""

    def __init__(self, replies):
        self.replies = list(replies)

    def create_chat_completion(self, **_):
        content, reason = self.replies.pop(0)
        return {
            "choices": [{"message": {"content": content}, "finish_reason": reason}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }


def local_backend(seed_store, replies):
    from rag.backends.local import LocalBackend
    from rag.config import Settings
    from rag.policy import Policy

    _, embedder = seed_store
    return LocalBackend(embedder, Settings(), Policy.from_settings(Settings()), llm=ScriptedModel(replies))


def sources_for(seed_store, question):
    from rag.config import Settings

    store, embedder = seed_store
    return retrieve(question, store, embedder, Settings()).sources


def test_a_model_rejecting_every_paper_leaves_the_best_papers_own_words(seed_store):
    question = "which papers study unlearning?"
    sources = sources_for(seed_store, question)
    backend = local_backend(seed_store, [('{"relevant": false, "sentence": ""}', "stop")] * 5)
    _, generation = generated(backend, question, sources)
    assert not generation.abstained
    best = backend.verdicts[0]["id"]
    assert generation.text.endswith(f"[{best}]") and generation.text.count("[") == 1
    abstract = next(s.abstract for s in sources if s.id == best)
    quoted = generation.text.split(" [")[0].removeprefix("- ")
    assert quoted.split(". ")[0][:40] in abstract  # a sentence of that paper, not model text


def test_unsupported_or_broken_sentences_give_way_to_the_abstract_and_lines_stream(seed_store):
    question = "which papers study unlearning?"
    sources = sources_for(seed_store, question)
    replies = [
        ('{"relevant": true, "sentence": "It removes 87.5% of memorized facts [999-99]."}', "stop"),  # no 87.5
        ('{"relevant": true, "sentence": "It erases', "length"),  # cut to a fragment
        ('{"relevant": true, "sentence": "It studies how encoding at learning time affects unlearning."}', "stop"),
    ] + [('{"relevant": false, "sentence": ""}', "stop")] * 5
    backend = local_backend(seed_store, replies)
    streamed, generation = generated(backend, question, sources)
    assert "".join(streamed) == generation.text
    assert "87.5" not in generation.text and "999-99" not in generation.text and "It erases" not in generation.text
    lines = generation.text.splitlines()
    assert len(lines) == 3 and all(line.startswith("- ") and line.endswith("]") for line in lines)
    assert "It studies how encoding at learning time affects unlearning." in lines[2]
    assert [v["unsupported"] is not None for v in backend.verdicts[:3]] == [True, True, False]
