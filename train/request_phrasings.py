"""Request phrasings for the judge's training questions, written by the local Qwen model (offline), once.

    python -m train.request_phrasings --questions /tmp/judge-data/questions.jsonl \
        --out train/data/judge_requests.jsonl [--model qwen2.5-coder-1.5b] [--limit 300] [--upto N] [--seed 0]

train.judge_data words its questions from a few templates of its own ("any papers on {t}?"); a judge fitted on
them learns those lead-ins, not the ones people type. Here the `--backend local` model rewrites each question as
a researcher would send it (casual, with a reason, a scope, an aside), told to keep the question's key phrases
(`keep`: the keyword, the method and benchmark names) word for word. A rewrite is kept only when it still holds
every key phrase (and, for a description, 60% of its terms), names no year or venue (the sample store has none,
so a filter would empty it), and is one line of 4-60 words. The output holds the kept rewrites only, in the
questions file's format with `template` (the old wording) and `source` (the model) beside it: more training
questions over the same sample store, for `python -m train.fit_judge --extra OUT:STORE`.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

STYLES = (
    "casual and lowercase, like a quick chat message",
    "with a short reason why you need it (a related-work section, a reading group, a baseline to compare)",
    "as a long, polite request with some context about your own project",
    "terse, like a search box query, but still a request",
    "with a scope remark (for example 'only the main ones', 'not surveys', 'anything at all')",
    "as a question to a colleague who knows the conference well",
)
SYSTEM = (
    "You rewrite requests sent to a search assistant over machine-learning conference papers. Write the request "
    "the way a researcher would actually type it. Keep its meaning. Output only the rewritten request, one line."
)


def prompt(question: str, keep: list[str], style: str) -> str:
    kept = "; ".join(f'"{k}"' for k in keep)
    must = f" Keep these words exactly as written: {kept}." if keep else ""
    return f"Request: {question}\nRewrite it {style}.{must} Do not mention any year or conference name."


def acceptable(rewrite: str, question: dict) -> bool:
    """Whether `rewrite` still asks `question`: every key phrase kept, no year or venue, one sane line."""
    from rag.lexical import query_terms
    from rag.query import parse

    words = rewrite.split()
    if "\n" in rewrite or not 4 <= len(words) <= 60:
        return False
    lowered = rewrite.lower()
    if any(k.lower() not in lowered for k in question.get("keep", [])):
        return False
    if question["type"] == "paraphrase":
        wanted = query_terms(question["question"])
        if not wanted or len(wanted & query_terms(rewrite)) < 0.6 * len(wanted):
            return False
    parsed = parse(rewrite)
    return not (parsed.year or parsed.venue)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, required=True, help="train.judge_data's questions.jsonl")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="a rag.local_model name")
    parser.add_argument("--limit", type=int, default=0, help="rewrite at most this many (a seeded sample); 0: all")
    parser.add_argument(
        "--upto",
        type=int,
        default=0,
        help="ask only the chosen questions among the file's first UPTO (a shorter run, the same rewrites); 0: all",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from llama_cpp import Llama

    from rag.local_model import model_path

    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line]
    rng = random.Random(args.seed)
    chosen = set(range(len(questions)))
    if args.limit:
        chosen = set(rng.sample(sorted(chosen), min(args.limit, len(questions))))
    llm = Llama(model_path=str(model_path(args.model)), n_ctx=512, n_threads=2, verbose=False, seed=args.seed)
    asked = kept = 0  # (every chosen question is asked, kept or not, so a seed gives the same rewrites)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        for number, question in enumerate(questions):
            if args.upto and number >= args.upto:
                break
            if number in chosen:
                asked += 1
                reply = llm.create_chat_completion(
                    messages=[
                        {"role": "system", "content": SYSTEM},
                        {
                            "role": "user",
                            "content": prompt(question["question"], question.get("keep", []), rng.choice(STYLES)),
                        },
                    ],
                    max_tokens=80,
                    temperature=0.8,
                )
                rewrite = reply["choices"][0]["message"]["content"].strip().strip('"').strip()
                if acceptable(rewrite, question):
                    row = dict(question, question=rewrite, template=question["question"], source=args.model)
                    out.write(json.dumps(row) + "\n")
                    kept += 1
    print(json.dumps({"questions": len(questions), "asked": asked, "rewritten": kept}))


if __name__ == "__main__":
    main()
