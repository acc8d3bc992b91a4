"""Which words the field writes as names: the words the corpus's abstracts capitalize inside a sentence.

    python -m train.proper_names --corpus ../shared/corpus --out rag/models/terms

Writes `proper_names.json.gz` (a sorted list of lowercased words) and `PROPER_NAMES.md`: every word the abstracts
write capitalized, inside a sentence, in at least half of their uses there ("Cityscapes", "Kodak", "Allegro",
"Gaussian"; not "Research", which a title or heading capitalizes but a sentence does not). A sentence's first word
and a word after a colon, bracket or quote are capitalized by position and not counted. rag.terms reads the list
to tell a name a question gives ("on Cityscapes", "with the Allegro hand") from an ordinary word it capitalizes.
Word statistics, like the store's BM25 index: every corpus paper counts.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
from collections import Counter
from pathlib import Path

from train.pairs import corpus_files, read_corpus

# A word of letters, capitalized or not; a coined name ("ImageNet", "CIFAR") is read by its capitals elsewhere.
_WORD = re.compile(r"(?<![\w\-])[A-Za-z][a-z]+(?!\w)")
_POSITIONAL = (":", "(", '"', "“")  # a word after one of these is capitalized by position


def capitalized_uses(abstracts: list[str]) -> tuple[Counter[str], Counter[str]]:
    """(uses written capitalized, uses in lowercase) of every word inside the abstracts' sentences, lowercased."""
    from rag.text import split_sentences

    capitalized: Counter[str] = Counter()
    lowercase: Counter[str] = Counter()
    for abstract in abstracts:
        for sentence in split_sentences(abstract):
            for match in _WORD.finditer(sentence):
                if match.start() == 0 or sentence[: match.start()].rstrip().endswith(_POSITIONAL):
                    continue
                word = match.group(0)
                (capitalized if word[0].isupper() else lowercase)[word.lower()] += 1
    return capitalized, lowercase


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    files = corpus_files(args.corpus)
    records, _ = read_corpus(files)
    capitalized, lowercase = capitalized_uses([r.abstract for r in records])
    names = sorted(w for w, n in capitalized.items() if n >= lowercase[w])
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "proper_names.json.gz"
    with gzip.GzipFile(path, "wb", mtime=0) as f:  # mtime 0: the same corpus gives the same bytes
        f.write(json.dumps(names, separators=(",", ":")).encode())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    sources = ", ".join(f"{f.name} {hashlib.sha256(f.read_bytes()).hexdigest()[:12]}…" for f in files)
    (args.out / "PROPER_NAMES.md").write_text(
        "# rag-papers proper names\n\n"
        f"- **What**: {len(names)} words (lowercased) that the abstracts write capitalized inside a sentence in at\n"
        "  least half of their uses there; a sentence's first word, and one after a colon, bracket or quote, not\n"
        "  counted.\n"
        f"- **Data**: the abstracts of {len(records)} ICLR 2025+2026 papers ({sources}).\n"
        f"- **Command**: `python -m train.proper_names --corpus {args.corpus} --out {args.out}`.\n"
        f"- **sha256**: `proper_names.json.gz` {digest}.\n"
        "- **Read by**: rag.terms.proper_names (the names a question asks a near-miss detail by: rag.judge).\n",
        encoding="utf-8",
    )
    print(f"{len(names)} proper names from {len(records)} abstracts -> {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
