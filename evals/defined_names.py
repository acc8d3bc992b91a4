"""Whether "what is X?" is answered by the sentence that introduces X, for the names the seed abstracts define.

    python evals/defined_names.py --store /tmp/seeds

A name is defined where an abstract writes "Some Long Name (SLN)": a parenthesised token with two capitals or
more that no other seed abstract writes ("QUANNs", "SelKD"; not "LLMs"). For each, `Papers.ask("what is SLN?")`
on the default extractive backend. Printed: the names, the share of answers citing the defining paper, and the
share quoting the sentence that writes "(SLN)", where the abstract spells the name out. Nothing is tuned here.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

_DEFINED = re.compile(r"\(\s*\**([A-Za-z][A-Za-z0-9-]*)\**\s*\)")


def defined_names(papers: dict[str, str]) -> dict[str, str]:
    """Each coined name written in parentheses by exactly one abstract, with that paper's id."""
    writers: dict[str, set[str]] = defaultdict(set)
    for paper_id, abstract in papers.items():
        for match in _DEFINED.finditer(abstract):
            name = match.group(1)
            if sum(c.isupper() for c in name) >= 2:
                writers[name].add(paper_id)
    spelled = {name: ids for name, ids in writers.items() if len(ids) == 1}
    # a name any other abstract writes at all is shared vocabulary ("SVD"), not this paper's coinage
    return {
        name: next(iter(ids))
        for name, ids in spelled.items()
        if not any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", a) for p, a in papers.items() if p not in ids)
    }


def main(argv: list[str] | None = None) -> None:
    from rag import Papers
    from rag.corpus import load_papers

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--seeds", type=Path, default=REPO / "seeds")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)

    papers = {p.id: p.abstract for p in load_papers([args.seeds])}
    names = defined_names(papers)
    client = Papers(store=args.store)
    cited = introduced = 0
    for name, paper_id in sorted(names.items()):
        answer = client.ask(f"what is {name}?")
        right = paper_id in answer.citations
        quoted = right and f"({name})" in answer.answer.replace("*", "")
        cited += right
        introduced += quoted
        if args.verbose:
            print(f"{'✓' if quoted else '✗'} {name} [{paper_id}] {' '.join(answer.answer.split())[:160]!r}")
    n = len(names)
    print(
        f"{n} defined names; cite the defining paper {cited}/{n} ({cited / n:.3f}); "
        f"quote the sentence spelling the name out {introduced}/{n} ({introduced / n:.3f})"
    )


if __name__ == "__main__":
    main()
