"""The local backend's checks on what the model wrote (pure functions: no model needed). The cases are the
1.5B model's real mistakes on evals/questions.jsonl."""

from __future__ import annotations

from rag.backends.local import _tidy_sentence, unsupported

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
