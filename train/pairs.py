"""Training pairs for learned relevance (issue 16): pseudo-queries from the corpus with BM25 hard negatives.

    python -m train.pairs --corpus ../shared/corpus --out pairs-out [--limit N] [--seed S]

Reads the corpus (JSONL or .jsonl.gz: `id`, `title`, `abstract`, `keywords`, `primary_area`), leaves out the 95
seed papers, the known-item papers of evals/corpus_known_items.jsonl and every paper sharing one of their titles,
holds out a fixed slice of the rest for known-item checks, and writes for a sample of the remaining papers:

- `pairs.jsonl`: `{"query", "positive_id", "negative_ids", "kind"}`, kind one of KINDS; the negatives are the
  papers BM25 ranks highest for the query that are not the positive, share neither its title nor any of its
  specific keywords, and (for a query built from a keyword or a name) do not contain that keyword or name
  anywhere: the near-miss case. `--kinds` picks the kinds written; `conjunction` ("A for B" from two of the
  paper's keywords; negatives that hold A or B but not both; its lines also carry `"parts": [A, B]`) is written
  only when named, so the default output is the same as before it existed; so is `describe` (the words after "we
  propose" in the abstract as a description query; its lines carry `"hidden"`, the sentence the query came from,
  which training removes from the positive's passage);
- `heldout_ids.txt`: the held-out papers, one id a line (never a positive or a negative);
- `manifest.json`: the arguments, the sha256 of every file read, the exclusions and the counts per kind.

Needs only the runtime dependencies (bm25s, PyStemmer); the `[train]` extra is for the training itself.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rag.errors import InputError, RagError

REPO = Path(__file__).resolve().parent.parent
KINDS = ("title", "keyword", "area_keyword", "template", "conjunction", "describe")
# `conjunction` and `describe` are opt-in (`--kinds`): the default run writes the same bytes as before they existed.
DEFAULT_KINDS = ("title", "keyword", "area_keyword", "template")
DEFAULT_KNOWN_ITEMS = REPO / "evals" / "corpus_known_items.jsonl"
SEED_MATCH = 0.8  # word-set Jaccard for a seed abstract that was edited after the corpus was collected
DEPTH = 30  # BM25 candidates looked at per query for negatives
GENERIC_KEYWORD_DF = 300  # keywords on more papers than this ("large language models") make no keyword query
CONJUNCTION_DEPTH = 200  # BM25 candidates looked at per conjunction query (the phrase checks keep few of them)
CONJUNCTION_TRIES = 3  # keyword pairs of one paper tried before its conjunction query is dropped
DESCRIBE_WORDS = 24  # a description query keeps at most this many words (the eval's paraphrases have 12-25)
DESCRIBE_WINDOW = 150  # the described sentence must end within the abstract's first words the model reads
# A sentence saying what the paper does ("we propose", "this paper introduces"); the words after the verb are
# the description. Else the abstract's first sentence (the problem it addresses) is described.
CONTRIBUTION = re.compile(
    r"\b(?:we|this (?:paper|work|study))\s+(?:\w+ly\s+)?"
    r"(?:propose|introduce|present|develop|design|study|investigate|show|prove|establish|analy[sz]e|demonstrate)s?\b"
    r"(?:\s+that)?[\s,:]*",
    re.IGNORECASE,
)
DESCRIBE_FILLER = {"a", "an", "the", "that", "which", "is", "are", "novel", "new", "here", "to"}
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
CONJUNCTION_WORD_DF = 500  # a one-word part in more titles + abstracts than this ("uncertainty") is too vague
# How users join two topics; {a} and {b} are the paper's two keywords, in a seeded random order.
CONJUNCTION_FORMS = (
    "{a} for {b}",
    "{a} in {b}",
    "{b} with {a}",
    "{a}-based {b}",
    "papers on {a} and {b}",
    "{a} for {b} papers",
    "work on {a} in {b}",
    "which papers study {a} for {b}?",
    "{b} using {a}",
    "anything on {a} and {b}?",
)

# Title openings users turn into "how can we ...?" questions: gerund → base form.
GERUNDS = {
    "accelerating": "accelerate",
    "aligning": "align",
    "benchmarking": "benchmark",
    "boosting": "boost",
    "bridging": "bridge",
    "compressing": "compress",
    "controlling": "control",
    "detecting": "detect",
    "enhancing": "enhance",
    "estimating": "estimate",
    "evaluating": "evaluate",
    "explaining": "explain",
    "generating": "generate",
    "improving": "improve",
    "learning": "learn",
    "measuring": "measure",
    "mitigating": "mitigate",
    "optimizing": "optimize",
    "predicting": "predict",
    "reducing": "reduce",
    "scaling": "scale",
    "training": "train",
    "understanding": "understand",
    "unlocking": "unlock",
}
# Capitalised tokens that are not coined names.
COMMON_CAPS = {"llm", "llms", "ai", "rl", "ml", "gnn", "gnns", "nlp", "3d", "2d", "vlm", "vlms", "mllm", "mllms"}


@dataclass(frozen=True)
class Record:
    id: str
    title: str
    abstract: str
    keywords: tuple[str, ...]
    area: str


def normalize(text: str) -> str:
    """Lowercase, punctuation and runs of whitespace collapsed to one space: how titles are compared."""
    return " ".join(re.sub(r"[\W_]+", " ", text.lower()).split())


def corpus_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.name.endswith((".jsonl", ".jsonl.gz")))
        if files:
            return files
        raise InputError(f"{path}: no .jsonl or .jsonl.gz files")
    raise InputError(f"{path}: no such file or directory")


def read_corpus(files: list[Path]) -> tuple[list[Record], dict[str, str]]:
    """The records of every file, and each file's sha256; a malformed line is refused naming file and line."""
    records: list[Record] = []
    digests: dict[str, str] = {}
    seen: set[str] = set()
    for path in files:
        raw = path.read_bytes()
        digests[path.name] = hashlib.sha256(raw).hexdigest()
        try:
            text = (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8")
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read ({exc.__class__.__name__})") from None
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                record = _record(line, f"{path}:{number}")
                if record.id in seen:
                    raise InputError(f"{path}:{number}: duplicate id {record.id!r}")
                seen.add(record.id)
                records.append(record)
    if not records:
        raise InputError("the corpus is empty")
    return records, digests


def _record(line: str, where: str) -> Record:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: invalid JSON ({exc.msg})") from None
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected a JSON object")
    for key in ("id", "title", "abstract"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise InputError(f"{where}: missing or empty {key!r}")
    keywords = row.get("keywords") or []
    if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        raise InputError(f"{where}: 'keywords' must be a list of strings or null")
    area = row.get("primary_area") or ""
    if not isinstance(area, str):
        raise InputError(f"{where}: 'primary_area' must be a string or null")
    return Record(
        row["id"],
        " ".join(row["title"].split()),
        row["abstract"],
        tuple(k.strip() for k in keywords if k.strip()),
        area,
    )


def match_seeds(seed_abstracts: dict[str, str], records: list[Record]) -> dict[str, list[str]]:
    """Seed id → the corpus ids holding its abstract: the same text once normalised, or else the corpus
    abstract sharing the most words with it (Jaccard ≥ SEED_MATCH). Seeds absent from the corpus map to []."""
    by_abstract: dict[str, list[str]] = defaultdict(list)
    for record in records:
        by_abstract[normalize(record.abstract)].append(record.id)
    words: dict[str, set[str]] = {}
    found: dict[str, list[str]] = {}
    for seed_id, abstract in seed_abstracts.items():
        key = normalize(abstract)
        if key in by_abstract:
            found[seed_id] = by_abstract[key]
            continue
        if not words:
            words = {k: set(k.split()) for k in by_abstract}
        mine = set(key.split())
        best, score = max(((k, len(mine & w) / len(mine | w)) for k, w in words.items()), key=lambda kv: kv[1])
        found[seed_id] = by_abstract[best] if score >= SEED_MATCH else []
    return found


def known_item_ids(path: Path | None) -> set[str]:
    if path is None:
        return set()
    from rag.evaluation.questions import load_questions

    return {gold for q in load_questions([path]) for gold in q.gold_ids}


def held_out(paper_id: str, fraction: float) -> bool:
    """A fixed slice of the corpus, the same for every seed and limit: the first bytes of sha256("heldout:"+id)."""
    digest = hashlib.sha256(f"heldout:{paper_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") < fraction * 2**64


def coined_name(title: str, title_counts: Counter) -> str | None:
    """A name the title introduces ("ProtComposer: ...", "DiVeQ: ..."): the part before a colon when it is one
    or two words with inner capitals or digits, not a common acronym, and in no more than two titles."""
    head, colon, _ = title.partition(":")
    tokens = head.split()
    if not colon or not 1 <= len(tokens) <= 2:
        return None
    if not any(re.search(r"[A-Z].*[A-Z]|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]", t) for t in tokens):
        return None
    name = head.strip()
    if normalize(name) in COMMON_CAPS or title_counts[normalize(name)] > 2:
        return None
    return name


def queries_for(record: Record, rng: random.Random, keyword_df: Counter, title_counts: Counter) -> list[dict]:
    """The pseudo-queries of one paper: {query, kind, avoid}, where `avoid` is the normalised phrase a
    negative must not contain (the keyword or name the query asks for), or ""."""
    out = [{"query": record.title, "kind": "title", "avoid": ""}]
    usable = sorted(
        (k for k in record.keywords if len(normalize(k)) >= 3 and keyword_df[normalize(k)] <= GENERIC_KEYWORD_DF),
        key=lambda k: (keyword_df[normalize(k)], normalize(k)),
    )
    if usable:
        rare = usable[0]
        out.append({"query": f"which papers study {rare.lower()}?", "kind": "keyword", "avoid": normalize(rare)})
        area = (
            re.sub(r"\s*\(.*?\)", "", record.area).strip().removesuffix(", etc.")
        )  # "(physics, chemistry, biology, etc.)" dropped
        if area and not area.lower().startswith("other topics"):
            other = usable[1] if len(usable) > 1 else rare
            form = rng.choice(("{kw} ({area})", "papers on {kw} in {area}", "{area}: {kw}"))
            query = form.format(area=area.lower(), kw=other.lower())
            out.append({"query": query, "kind": "area_keyword", "avoid": normalize(other)})
    name = coined_name(record.title, title_counts)
    if name:
        out.append({"query": f"what is {name}?", "kind": "template", "avoid": normalize(name)})
    first, _, tail = subject(record.title).partition(" ")
    if first.lower() in GERUNDS and tail:
        out.append({"query": f"how can we {GERUNDS[first.lower()]} {tail.lower()}?", "kind": "template", "avoid": ""})
    elif not name and usable:
        keyword = rng.choice(usable).lower()
        form = rng.choice(("papers on {kw}", "anything on {kw}?", "{kw} papers", "work on {kw}"))
        out.append({"query": form.format(kw=keyword), "kind": "template", "avoid": normalize(keyword)})
    return out


class Stems:
    """Text as its stemmed, non-stopword tokens joined by spaces (the BM25 tokenizer's words, stemmer and
    stopwords): " a b " in " text " is a phrase match that "diffusion model" and "Diffusion Models" both pass."""

    def __init__(self) -> None:
        import Stemmer

        from rag.text import bm25_stopwords

        self.stopwords = set(bm25_stopwords())
        self.stemmer = Stemmer.Stemmer("english")

    def __call__(self, text: str) -> str:
        words = [w for w in re.findall(r"(?u)\b\w\w+\b", text.lower()) if w not in self.stopwords]
        return " ".join(self.stemmer.stemWords(words))


def acronym_of(short: str, long: str) -> bool:
    """Whether the one-word keyword `short` abbreviates `long` ("gnns" / "graph neural networks")."""
    words = normalize(long).split()
    initials = "".join(w[0] for w in words)
    return len(words) > 1 and len(short.split()) == 1 and short.lower().rstrip("s") == initials


def conjunction_parts(
    record: Record, keyword_df: Counter, stems: Stems, word_df: Callable[[str], int]
) -> list[tuple[str, str]]:
    """The paper's keywords a conjunction query can join: specific (the keyword query's df rule; a one-word
    keyword also in at most CONJUNCTION_WORD_DF papers' text by `word_df`, which drops "embeddings" and keeps
    "gflownet"), a parenthesis dropped ("Large Language Models (LLMs)"), rarest first, each as (keyword, stemmed
    phrase), and each held by the paper's own title or abstract (what the model reads, not just the keywords)."""
    text = f" {stems(record.title + ' ' + record.abstract)} "
    parts, seen = [], set()
    for keyword in sorted(record.keywords, key=lambda k: (keyword_df[normalize(k)], normalize(k))):
        if len(normalize(keyword)) < 3 or keyword_df[normalize(keyword)] > GENERIC_KEYWORD_DF:
            continue
        plain = " ".join(re.sub(r"\s*\(.*?\)", "", keyword).split()).lower()
        phrase = stems(plain)
        if len(plain) < 3 or not phrase or phrase in seen or f" {phrase} " not in text:
            continue
        if " " not in phrase and word_df(phrase) > CONJUNCTION_WORD_DF:
            continue
        seen.add(phrase)
        parts.append((plain, phrase))
    return parts


def conjunction_choices(parts: list[tuple[str, str]], rng: random.Random) -> list[tuple[tuple, tuple]]:
    """The keyword pairs to try, in a seeded order: two parts sharing no stemmed word (not "contrastive learning"
    with "graph contrastive learning") and neither the other's acronym."""
    choices = []
    for i, first in enumerate(parts):
        for second in parts[i + 1 :]:
            if set(first[1].split()) & set(second[1].split()):
                continue
            if acronym_of(first[0], second[0]) or acronym_of(second[0], first[0]):
                continue
            choices.append((first, second) if rng.random() < 0.5 else (second, first))
    rng.shuffle(choices)
    return choices[:CONJUNCTION_TRIES]


def subject(title: str) -> str:
    """A title without the name it introduces: "ProtComposer: Compositional Protein ..." → "Compositional ..."."""
    head, colon, rest = title.partition(":")
    return rest.strip() if colon and rest.strip() and len(head.split()) <= 3 else title


def description(record: Record, title_counts: Counter) -> tuple[str, str] | None:
    """A descriptive query for `record` and the abstract sentence it came from: the words after "we propose" (or
    the like) in the first sentence that says what the paper does, else the first sentence, lowercased, without
    the name the title introduces or any parenthesised acronym, cut to DESCRIBE_WORDS words. The sentence is
    hidden from the positive passage in training (the inverse cloze task): the model must match the description
    to the rest of the title and abstract, as with a user's paraphrase, not find the same words again."""
    sentences = SENTENCE_END.split(" ".join(record.abstract.split()))
    read = 0
    chosen = None
    for sentence in sentences:
        read += len(sentence.split())
        if read > DESCRIBE_WINDOW:
            break
        cue = CONTRIBUTION.search(sentence)
        if cue:
            chosen = (sentence, sentence[cue.end() :])
            break
    if chosen is None and sentences and len(sentences[0].split()) <= DESCRIBE_WINDOW:
        chosen = (sentences[0], sentences[0])
    if chosen is None:
        return None
    sentence, text = chosen
    name = coined_name(record.title, title_counts)
    if name:
        text = re.sub(rf"\b{re.escape(name)}\b,?", " ", text)
    text = re.sub(r"\s*\([^)]*\)", "", text)  # "(DiVeQ)", "(e.g., ...)"
    text = re.sub(r"\\[a-z]+\{([^}]*)\}", r"\1", text).replace("$", "")  # "\textit{dynamic fortresses}"
    words = text.strip(" ,;:.").split()[:DESCRIBE_WORDS]
    while words and words[0].lower().strip(",") in DESCRIBE_FILLER:
        words = words[1:]
    if len(words) < 6:  # "we propose DiVeQ." leaves nothing that describes
        return None
    return " ".join(words).lower().rstrip(" ,;:."), sentence


class Negatives:
    """BM25 (Lucene, stemmed, the rag's stopwords) over the training pool's titles and abstracts."""

    def __init__(self, pool: list[Record], keyword_df: Counter):
        import bm25s

        from rag.lexical import tokenize

        self.pool = pool
        self.keyword_df = keyword_df
        self.bm25 = bm25s.BM25()
        self.bm25.index(tokenize([f"{r.title}\n{r.abstract}" for r in pool]), show_progress=False)
        self._text: dict[int, str] = {}
        self._stems: dict[int, tuple[str, str]] = {}
        self.stems: Stems | None = None

    def topics(self, record: Record) -> set[str]:
        """A paper's specific keywords, normalised (the generic ones, on many papers, say little)."""
        return {normalize(k) for k in record.keywords if self.keyword_df[normalize(k)] <= GENERIC_KEYWORD_DF}

    def text(self, doc: int) -> str:
        if doc not in self._text:
            record = self.pool[doc]
            self._text[doc] = " " + normalize(" ".join((record.title, record.abstract, *record.keywords))) + " "
        return self._text[doc]

    def mine(self, query: str, positive: Record, avoid: str, n: int) -> list[str]:
        import numpy as np

        from rag.lexical import query_terms

        known = self.bm25.get_tokens_ids(sorted(t for t in query_terms(query) if t))
        if not known:
            return []
        scores = self.bm25.get_scores(known)
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > DEPTH:
            candidates = candidates[np.argpartition(-scores[candidates], DEPTH - 1)[:DEPTH]]
        # Best first; equal scores in pool order, so the output does not depend on argpartition's choice.
        ranked = sorted(candidates.tolist(), key=lambda doc: (-float(scores[doc]), doc))
        title, abstract, topics = normalize(positive.title), normalize(positive.abstract), self.topics(positive)
        negatives: list[str] = []
        for doc in ranked:
            other = self.pool[doc]
            if other.id == positive.id or normalize(other.title) == title or normalize(other.abstract) == abstract:
                continue
            if (avoid and f" {avoid} " in self.text(doc)) or topics & self.topics(other):
                continue
            negatives.append(other.id)
            if len(negatives) == n:
                break
        return negatives

    def word_df(self, stem: str) -> int:
        """How many pool papers' titles and abstracts hold the stemmed word (the BM25 index's posting list)."""
        token = self.bm25.vocab_dict.get(stem)
        if token is None:
            return 0
        indptr = self.bm25.scores["indptr"]
        return int(indptr[token + 1] - indptr[token])

    def stemmed(self, doc: int) -> tuple[str, str]:
        """A pool paper's stemmed title + abstract, and the same with its keywords, each padded with spaces."""
        if doc not in self._stems:
            record = self.pool[doc]
            visible = self.stems(f"{record.title} {record.abstract}")
            self._stems[doc] = (f" {visible} ", f" {visible} {self.stems(' '.join(record.keywords))} ")
        return self._stems[doc]

    def mine_conjunction(
        self, query: str, positive: Record, a: tuple[str, str], b: tuple[str, str], n: int
    ) -> tuple[list[str], list[str]]:
        """The half matches of "A for B": papers among BM25's best for the query whose title or abstract holds
        one part's stemmed phrase while the other part is nowhere in them (title, abstract, keywords), sharing
        no specific keyword with the positive but the part they hold. Best first, up to `n` for each part."""
        import numpy as np

        from rag.lexical import query_terms

        known = self.bm25.get_tokens_ids(sorted(t for t in query_terms(query) if t))
        if not known:
            return [], []
        scores = self.bm25.get_scores(known)
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > CONJUNCTION_DEPTH:
            candidates = candidates[np.argpartition(-scores[candidates], CONJUNCTION_DEPTH - 1)[:CONJUNCTION_DEPTH]]
        ranked = sorted(candidates.tolist(), key=lambda doc: (-float(scores[doc]), doc))
        title, abstract, topics = normalize(positive.title), normalize(positive.abstract), self.topics(positive)
        halves: dict[str, list[str]] = {a[1]: [], b[1]: []}
        for doc in ranked:
            other = self.pool[doc]
            if other.id == positive.id or normalize(other.title) == title or normalize(other.abstract) == abstract:
                continue
            visible, everything = self.stemmed(doc)
            has_a, has_b = f" {a[1]} " in everything, f" {b[1]} " in everything
            if has_a == has_b:
                continue
            held, keyword = (a[1], a[0]) if has_a else (b[1], b[0])
            if f" {held} " not in visible or len(halves[held]) >= n:
                continue
            if (topics & self.topics(other)) - {normalize(keyword)}:
                continue
            halves[held].append(other.id)
            if all(len(ids) >= n for ids in halves.values()):
                break
        return halves[a[1]], halves[b[1]]

    def conjunction(self, record: Record, seed: int, n: int) -> tuple[dict | None, bool]:
        """One conjunction query of `record`, or None; and whether it had a keyword pair to try. The query's
        negatives alternate between the two parts' half matches (A only, B only, A only, …), so the first two
        are one of each; a pair is kept only when both parts have at least one."""
        if self.stems is None:
            self.stems = Stems()
        # Its own generator per paper: the other kinds' draws, and so their output, do not change.
        rng = random.Random(f"conjunction:{seed}:{record.id}")
        parts = conjunction_parts(record, self.keyword_df, self.stems, self.word_df)
        choices = conjunction_choices(parts, rng)
        for a, b in choices:
            query = rng.choice(CONJUNCTION_FORMS).format(a=a[0], b=b[0])
            only_a, only_b = self.mine_conjunction(query, record, a, b, (n + 1) // 2)
            if only_a and only_b:
                mixed = [x for i in range(max(len(only_a), len(only_b))) for x in only_a[i : i + 1] + only_b[i : i + 1]]
                pair = {"query": query, "positive_id": record.id, "negative_ids": mixed[:n], "kind": "conjunction"}
                return pair | {"parts": [a[0], b[0]]}, True
        return None, bool(choices)


def build(args: argparse.Namespace) -> dict:
    from rag.corpus import load_papers

    started = time.perf_counter()
    files = corpus_files(args.corpus)
    records, digests = read_corpus(files)
    seeds = load_papers([args.seeds])
    seed_map = match_seeds({p.id: p.abstract for p in seeds}, records)
    seed_ids = {i for ids in seed_map.values() for i in ids}
    known = known_item_ids(args.known_items) & {r.id for r in records}
    seed_titles = {normalize(r.title) for r in records if r.id in seed_ids}
    known_titles = {normalize(r.title) for r in records if r.id in known}
    excluded = {"seeds": set(), "seed_titles": set(), "known_items": set(), "known_item_titles": set()}
    for r in records:
        title = normalize(r.title)
        if r.id in seed_ids:
            excluded["seeds"].add(r.id)
        elif title in seed_titles:
            excluded["seed_titles"].add(r.id)
        elif r.id in known:
            excluded["known_items"].add(r.id)
        elif title in known_titles:
            excluded["known_item_titles"].add(r.id)
    out_of_play = set().union(*excluded.values())
    rest = [r for r in records if r.id not in out_of_play]
    # Held out: the hash slice, and every paper sharing a title with one (resubmissions across years).
    held_titles = {normalize(r.title) for r in rest if held_out(r.id, args.heldout_fraction)}
    heldout = sorted(r.id for r in rest if normalize(r.title) in held_titles)
    held = set(heldout)
    pool = [r for r in rest if r.id not in held]
    if not pool:
        raise InputError("no corpus papers left for training after the exclusions and the held-out slice")

    rng = random.Random(args.seed)
    order = list(range(len(pool)))
    rng.shuffle(order)
    positives = [pool[i] for i in order[: args.limit or len(pool)]]
    keyword_df = Counter(normalize(k) for r in pool for k in set(r.keywords))
    title_counts = Counter(normalize(r.title.partition(":")[0]) for r in records)
    negatives = Negatives(pool, keyword_df)
    pairs, dropped = [], Counter()
    for record in positives:
        for query in queries_for(record, rng, keyword_df, title_counts):  # drawn for every kind: same rng stream
            if query["kind"] not in args.kinds:
                continue
            mined = negatives.mine(query["query"], record, query["avoid"], args.negatives)
            if not mined and query["kind"] != "title":
                # The query's words are in no other paper ("what is ProtComposer?", a keyword only this paper
                # uses): the near misses are then the papers on the same subject, found by its title.
                mined = negatives.mine(subject(record.title), record, query["avoid"], args.negatives)
            if not mined:
                dropped[query["kind"]] += 1
                continue
            pairs.append(
                {"query": query["query"], "positive_id": record.id, "negative_ids": mined, "kind": query["kind"]}
            )
        if "describe" in args.kinds:
            described = description(record, title_counts)
            mined = negatives.mine(described[0], record, "", args.negatives) if described else []
            if mined:
                query, hidden = described
                pairs.append(
                    {"query": query, "positive_id": record.id, "negative_ids": mined, "kind": "describe"}
                    | {"hidden": hidden}
                )
            elif described:
                dropped["describe"] += 1
        if "conjunction" in args.kinds:
            pair, tried = negatives.conjunction(record, args.seed, args.negatives)
            if pair:
                pairs.append(pair)
            elif tried:
                dropped["conjunction"] += 1

    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "pairs.jsonl").open("w", encoding="utf-8") as handle:
        for pair in pairs:
            handle.write(json.dumps(pair, ensure_ascii=False) + "\n")
    (args.out / "heldout_ids.txt").write_text("".join(f"{i}\n" for i in heldout), encoding="utf-8")
    kinds = Counter(p["kind"] for p in pairs)
    manifest = {
        "command": "python -m train.pairs " + " ".join(args.argv),
        "seed": args.seed,
        "limit": args.limit,
        "negatives_per_query": args.negatives,
        "heldout_fraction": args.heldout_fraction,
        "corpus": {"files": digests, "records": len(records)},
        "known_items": _shown(args.known_items) if args.known_items else None,
        "seeds": {
            "abstracts": len(seeds),
            "matched": sum(bool(ids) for ids in seed_map.values()),
            "corpus_ids": {seed: ids for seed, ids in sorted(seed_map.items()) if ids},
        },
        "excluded": {name: len(ids) for name, ids in excluded.items()},
        "heldout": len(heldout),
        "pool": len(pool),
        "positives": len(positives),
        "pairs": len(pairs),
        "kinds": {kind: kinds[kind] for kind in KINDS if kind in args.kinds},
        "dropped_without_negatives": {kind: dropped[kind] for kind in KINDS if dropped[kind]},
        "seconds": round(time.perf_counter() - started, 1),
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _shown(path: Path) -> str:
    """A path as the manifest records it: relative to the repo when inside it."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m train.pairs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="a corpus .jsonl(.gz) file or a folder of them")
    parser.add_argument("--out", type=Path, required=True, help="folder for pairs.jsonl, heldout_ids.txt, manifest")
    parser.add_argument("--limit", type=int, default=0, help="positive papers to sample (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the sample and the query forms")
    parser.add_argument("--negatives", type=int, default=4, help="hard negatives per query (default 4)")
    parser.add_argument("--heldout-fraction", type=float, default=0.02, help="corpus slice held out (default 0.02)")
    parser.add_argument("--seeds", type=Path, default=REPO / "seeds", help="the seed lists to exclude")
    parser.add_argument(
        "--known-items",
        type=Path,
        default=DEFAULT_KNOWN_ITEMS if DEFAULT_KNOWN_ITEMS.is_file() else None,
        help="a question set whose gold papers are excluded too (default: evals/corpus_known_items.jsonl)",
    )
    parser.add_argument("--no-known-items", dest="known_items", action="store_const", const=None)
    parser.add_argument(
        "--kinds",
        default=",".join(DEFAULT_KINDS),
        help=f"comma-separated query kinds to write, of {', '.join(KINDS)} (default: {','.join(DEFAULT_KINDS)})",
    )
    args = parser.parse_args(argv)
    if args.limit < 0 or args.negatives < 1 or not 0 <= args.heldout_fraction < 1:
        parser.error("--limit ≥ 0, --negatives ≥ 1 and 0 ≤ --heldout-fraction < 1")
    args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if not args.kinds or set(args.kinds) - set(KINDS):
        parser.error(f"--kinds takes a comma-separated subset of {', '.join(KINDS)}")
    args.argv = argv
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        manifest = build(args)
    except RagError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    print(f"{manifest['pairs']} pairs from {manifest['positives']} papers in {manifest['seconds']} s → {args.out}")


if __name__ == "__main__":
    main()
