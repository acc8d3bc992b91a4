"""Whether a topic asked for in other words gets the answer "which papers study <topic>?" gets.

    python evals/phrasings.py --store /tmp/seeds evals/phrasings_dev.txt [evals/phrasings_heldout2.txt …]

Each line of a phrasing file is a request for papers with `{topic}` in it ("has anyone studied {topic}?", "I'm
writing a related work section on {topic}, what should I cite?"). For eight topics the seeds cover, each request
is parsed (`rag.query.parse`) and answered (`Papers.ask`, extractive); printed per file: the share parsed as the
canonical question is (same search text, a list, a topic), the share citing exactly the canonical answer's papers
in its order, and the share citing the same papers in any order (what a reader of the list sees as the same
answer), with the templates that miss. A line may name after a TAB the restriction its request asks for
("year=2025", "accepted", "oral", comma-separated; "none"), written by the set's author: its canonical answer is
then the canonical question's papers of that year or decision, and reading the request as the canonical question
includes reading that restriction. phrasings_dev.txt was written with the parser's request words;
phrasings_heldout.txt and phrasings_heldout2.txt were written by helpers who saw no code (docs/EVALUATION.md says
which was looked at when).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

if TYPE_CHECKING:
    from rag.corpus import Paper
    from rag.query import Query

TOPICS = (
    "machine unlearning",
    "multi-view clustering",
    "spiking neural networks",
    "hyperbolic embeddings",
    "knowledge distillation",
    "diffusion models",
    "contrastive learning",
    "implicit neural representations",
)


def canonical(topic: str) -> str:
    return f"which papers study {topic}?"


STATUSES = ("accepted", "oral", "spotlight", "poster", "rejected", "withdrawn")


@dataclass(frozen=True)
class Request:
    """A line of a phrasing file: the request, and the year and decisions it restricts to (the author's)."""

    template: str
    year: int | None = None
    statuses: tuple[str, ...] = ()

    def admits(self, paper: Paper) -> bool:
        from rag.query import STATUS_FILTERS

        decisions = {d for status in self.statuses for d in STATUS_FILTERS[status]}
        return (self.year is None or paper.year == self.year) and (not decisions or paper.status in decisions)

    def read_as_asked(self, query: Query) -> bool:
        """Whether the parser read the restriction as written: the year, and a decision among those asked."""
        return query.year == self.year and (query.status in self.statuses if self.statuses else query.status is None)


def read_requests(path: Path) -> list[Request]:
    requests = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        template, _, restriction = line.partition("\t")
        year, statuses = None, []
        for part in filter(None, (p.strip() for p in restriction.split(","))):
            if part.startswith("year="):
                year = int(part.removeprefix("year="))
            elif part in STATUSES:
                statuses.append(part)
            elif part != "none":
                raise SystemExit(f"{path}: unknown restriction {part!r}")
        requests.append(Request(template.strip(), year, tuple(statuses)))
    return requests


def main(argv: list[str] | None = None) -> None:
    from rag import Papers
    from rag.errors import InputError
    from rag.query import parse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--verbose", action="store_true", help="list the templates that miss")
    args = parser.parse_args(argv)

    papers = Papers(store=args.store)
    expected = {t: (parse(canonical(t)).search.lower(), papers.ask(canonical(t)).citations) for t in TOPICS}
    for path in args.files:
        requests = read_requests(path)
        parsed = same = same_papers = 0
        missed: dict[str, str] = {}
        for request in requests:
            template = request.template
            for topic in TOPICS:
                question = template.replace("{topic}", topic)
                query = parse(question)
                search, citations = expected[topic]
                citations = [c for c in citations if request.admits(papers.get(c))]
                as_canonical = query.search.lower() == search and query.wants_list and query.is_topic
                if as_canonical and request.read_as_asked(query):
                    parsed += 1
                else:
                    missed.setdefault(template, f"read as {query.search!r} (year {query.year}, {query.status})")
                try:
                    cited = papers.ask(question).citations
                except InputError:  # "rejected submissions about X" of a store with none: a one-line error, no paper
                    cited = []
                same += cited == citations
                same_papers += set(cited) == set(citations)
                if set(cited) != set(citations):
                    missed.setdefault(template, "other citations")
        n = len(requests) * len(TOPICS)
        print(
            f"{path.name}: {len(requests)} requests x {len(TOPICS)} topics: parsed as the canonical question "
            f"{parsed}/{n} ({parsed / n:.3f}); same citations {same}/{n} ({same / n:.3f}); the same papers in any "
            f"order {same_papers}/{n} ({same_papers / n:.3f})"
        )
        if args.verbose:
            for template, why in missed.items():
                print(f"  {template}  ({why})")


if __name__ == "__main__":
    main()
