"""Warm ask and reranked search latency over the first N eval questions on one store; prints one JSON line.

python evals/latency_warm.py STORE N      # evals/side_by_side.sh runs it for two checkouts
"""

import json
import statistics
import sys
import time
from pathlib import Path

from rag.api import Papers


def main() -> None:
    store, count = sys.argv[1], int(sys.argv[2])
    lines = Path(__file__).with_name("questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines][:count]
    papers = Papers(store)
    papers.ask(questions[0])  # warm up: the models, the lexical index
    papers.search(questions[0])
    ask, search = [], []
    for question in questions:
        started = time.perf_counter()
        papers.ask(question)
        ask.append(time.perf_counter() - started)
        started = time.perf_counter()
        papers.search(question)
        search.append(time.perf_counter() - started)
    print(json.dumps({"ask_p50_s": statistics.median(ask), "search_p50_s": statistics.median(search)}))


if __name__ == "__main__":
    main()
