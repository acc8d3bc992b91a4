"""Every word list and language regex of `rag` that decides how a question, or a sentence of an abstract, is read.

Moved here unchanged (issue 27, item 6) from rag.query, rag.followups, rag.evidence, rag.facets, rag.text and
rag.backends.local, so that each can be measured (a question set with it and without it) and removed one by
one. Each entry says what it is for and which function reads it; those modules import it from here. Patterns
about format rather than language (a citation `[ID]`, a paper id, a year on its own, a number, a token, LaTeX,
a file's header line) stay where they are used.

This module holds 33 regexes (compiled patterns; the 14 regex fragments they are built from are not counted)
and 369 listed words and phrases, in 16 word lists (a list built on others counts only the words it adds;
words written inside a regex count with that regex, not here). The grammar words every reader leaves out are
the library's: NLTK's English stopword list as llama-index-core ships it (FUNCTION_WORDS, not counted), with
the nine it lacks. `counts()` computes both numbers, and tests/test_lexicon.py checks this sentence against it.

A bottom layer: it imports the standard library and nothing of the project, so every module may import it.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

# == function words: the library's list, and the few it lacks ================================================


def _library_stopwords() -> frozenset[str]:
    """NLTK's English stopword list as llama-index-core ships it, in its package data. Read as a file: nltk is
    not needed, and importing bm25s (which carries the same list) costs 220 ms on the CLI path."""
    # The top-level name is looked up without importing it (finding "llama_index.core" would import llama_index).
    spec = importlib.util.find_spec("llama_index")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location, "core", "_static", "nltk_cache", "corpora", "stopwords", "english")
        if path.is_file():
            return frozenset(path.read_text(encoding="utf-8").split())
    raise ImportError("llama-index-core's English stopword list is missing: reinstall llama-index-core")


# Grammar words (articles, pronouns, auxiliaries, prepositions): the library's list, 198 words. Every word list
# below that leaves out grammar is built on it; it is not ours, so it is not counted.
FUNCTION_WORDS = _library_stopwords()
# Modal verbs and the like that NLTK's list lacks. Read with FUNCTION_WORDS wherever it is.
MORE_FUNCTION_WORDS = frozenset("also could would may might must shall via whose".split())

# == what a question asks for: the search text (rag.query.search_text, rag.query.asks_for_list) ===============

# "which papers study X?" → "X": the scaffolding carries no topic and drags every question's vector
# towards the same generic "papers study" direction. Verbs may come in pairs ("propose or analyze").
# A fragment of SCAFFOLD: the verb after "which papers …".
SCAFFOLD_VERB = (
    r"(?:study|studies|studying|studied|address|addresses|addressing|addressed|investigate|investigates|"
    r"investigated|tackle|tackles|tackled|explore|explores|explored|consider|considers|focus on|focuses on|"
    r"look at|looked at|looking at|deal with|deals with|dealing with|are about|is about|about|on|regarding|"
    r"concerning|related to|propose|proposes|proposed|use|uses|using|with|for|in|analy[sz]e|analy[sz]es|"
    r"analy[sz]ed|work with|works with|worked on|work on|involve|involves|introduce|introduces|present|presents|"
    r"apply|applies|develop|develops|published on|done on|written on|out there on|exists? on|is there on|"
    r"are there on)"
)
# A request around the question, which says who asks or how politely, not what: "could you …", "I'm looking for
# …", "recommend …", "tell me about …". Removed first by query._scaffolding_removed, query.asks_for_list and
# query.parse (for names_a_topic).
LEAD_IN = re.compile(
    r"^\s*(?:(?:hi|hey|hello)\b[\s,!.]*)?(?:(?:please|pls|kindly)\s+)?"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:(?:find|show|give|get|list|recommend|suggest)\s+(?:me\s+)?)?"
    r"|i(?:'m|\s+am)\s+(?:looking|searching)\s+for\s+"
    r"|i\s+(?:want|need|would\s+like|'d\s+like)\s+(?:to\s+(?:find|see|read(?:\s+about)?|know\s+about)\s+)?"
    r"|help\s+me\s+find\s+|do\s+you\s+(?:know|have)\s+(?:of\s+)?|tell\s+me\s+about\s+|point\s+me\s+to\s+"
    r"|(?:recommend|suggest|search\s+for|look\s+for|get|pull\s+up)(?:\s+me)?\s+)",
    re.I,
)
# What names papers as such: "papers", "work", "the literature", "prior work". A fragment of SCAFFOLD.
PAPERS_NOUN = r"(?:papers?|works?|studies|research|articles|publications|literature|submissions)"
# "which papers study X", "has anyone studied X", "are there any recent works on X": the words before the topic,
# cut off by query._scaffolding_removed when they name papers (group "noun") or ask for work by a verb (group
# "work" with group "verb": "has anyone studied X", "what has been published on X"; "what is X" asks what X is,
# and keeps its words).
SCAFFOLD = re.compile(
    r"^\s*(?:(?:(?P<work>what\s+has\s+been|has\s+anyone|have\s+people|did\s+anyone|does\s+anyone)|has\s+there\s+been|"
    r"which|what|are\s+there|is\s+there|any|list|find|show|give|do|does|did)(?:\s+me)?\s+)?"
    r"(?:(?:are|were)\s+)?(?:(?:the|some|any|a|recent|other|good|relevant|existing|prior|related|key|notable)\s+)*"
    r"(?:iclr\s*)?(?:(?:19|20)\d\d\s+)?"
    rf"(?:(?P<noun>{PAPERS_NOUN})\s+)?"
    r"(?:(?:that|which|do|does|is|are|has\s+been|have\s+been|there)\s+)*"
    rf"(?P<verb>{SCAFFOLD_VERB}(?:\s+(?:or|and)\s+{SCAFFOLD_VERB})*\b)?\s*",
    re.I,
)
# A message asking for papers in its own words ("I'm writing a related work section on X, what should I cite?",
# "Give me an overview of the literature on X"): it names what it wants with one of these. Not "sota" or "state
# of the art": "what balanced accuracy do sota llms get on …" asks a detail. query._scaffolding_removed (then
# REQUEST_WORDS are trimmed) and query.asks_for_list (a list, unless ONE_PAPER_ASKED).
PAPER_REQUEST = re.compile(
    r"\b(?:papers|works|research|literature|studies|articles|publications|refs|references|reads|reading\s+list|"
    r"(?:should|to|can)\s+i\s+cite|survey\s+(?:of|the)|overview\s+of|read\s+up|recommend\w*|suggest\w*|looking\s+for|"
    r"searching\s+for|point\s+me|track\s+down|dig\s+up|work\s+(?:on|about|in|into|regarding|tackling|covering)|"
    r"anyone|anybody|anything\s+on|(?:has|have)\s+been\s+(?:done|proposed|published|written))\b",
    re.I,
)
# The words such a message wraps its topic in, stripped from either end of what is left once the scaffolding
# above is gone (query._request_words_trimmed; "|"-separated, read as a set of phrases). Longest first; only words
# that do not end a topic may end the message ("kernel methods", "neural architecture search" keep theirs), and
# only words that do not start one may start it ("reading comprehension", "state space models").
REQUEST_WORDS = (
    "state of the art|related work section|i'm new to|i am new to|new to|track down|dig up|point me to|point me|"
    "help me|introduction to|intro to|looking for|search for|look for|lately|recently|for my project|for my thesis|"
    "papers|paper|works|work|research|literature|studies|articles|article|publications|publication|refs|references|"
    "reads|reading|resources|material|approaches|methods|techniques|anything|something|stuff|im|there's|what's|"
    "regarding|concerning|around|related|covering|discussing|addressing|tackling|investigating|studying|exploring|"
    "examining|much|many|lots|ones|one|please|pls|plz|thanks|thank|kindly|hi|hey|hello|really|good|great|best|relevant|"
    "recent|existing|prior|previous|key|main|important|seminal|notable|influential|background|find|show|give|get|"
    "list|recommend|suggest|searching|seeking|collect|gather|read|learn|understand|know|survey|cite|start|mind|"
    "need|want|like|see|tell|overview|sota|exist|exists|available|done|published|written|writing|worked|working|"
    "anyone|anybody|people|proposed|suggesting|address|addresses|cover|covers|discuss|discusses|tackle|tackles|"
    "investigate|investigates|study|explore|explores|examine|examines|far"
)
# The request words and phrases as the trimmer reads them: those above, and every function word ("tell me about",
# "what should i read" are request words one by one).
REQUEST_PHRASES = frozenset(REQUEST_WORDS.split("|")) | FUNCTION_WORDS | MORE_FUNCTION_WORDS
# Request words that may close a message but also end topics, kept at the end: "kernel methods", "case studies",
# "operations research". query._request_words_trimmed.
REQUEST_WORDS_NOT_LAST = frozenset(
    "approaches methods techniques studies research reading search learning work works material".split()
)
# Request words that may open a message but also start topics, kept at the start: "reading comprehension".
# query._request_words_trimmed.
REQUEST_WORDS_NOT_FIRST = frozenset(["reading"])

# == year and venue (rag.query.parse_filters, rag.query.normalize_venue) =====================================

# The venues a question or a --venue flag may name, as the stores write them.
VENUES = {"iclr": "ICLR", "neurips": "NeurIPS", "icml": "ICML", "cvpr": "CVPR", "acl": "ACL", "emnlp": "EMNLP"}
# A fragment of the year phrases below: a year, not "2025-bench", "2025b", "2025.5".
YEAR = r"((?:19|20)\d\d)(?![\w\-]|\.\d)"
# A fragment, after a venue's name: "ICLR'26", "ICLR ’25", "iclr26", "ICLR 26": its own shorthand, 20xx.
SHORT_YEAR = r"['’]?(\d\d)(?![\w\-]|\.\d)"
# "ICLR 2025", "NeurIPS'2025", "iclr ’25" in a question: the venue and year it restricts to. query.parse_filters.
VENUE_YEAR = re.compile(rf"(?<![\w\-])({'|'.join(VENUES)})\s*(?:['’]?{YEAR}|{SHORT_YEAR})", re.I)
# Years joined, with or without their venue: "2025 or 2026", "ICLR 2025/2026", "ICLR 2025 + 2026", "2024-2026",
# "between 2024 and 2026", "ICLR 2025 and ICLR 2026", "2023, 2024 or 2025", "ICLR'25/'26": the years from the first
# to the last (query.parse_filters, before the one-year phrases, which would read "ICLR 2025/2026" as ICLR 2025
# alone). A shorthand year only after a venue's name, "/", a dash or an apostrophe; query.year_range reads which
# joined years restrict (a venue's, after "between", or where a year phrase would be one: not "the 2020-2021
# pandemic", "2024-05", "2048 or 2049 dims").
# A fragment of YEAR_RANGE: a venue's name before a year, if any.
VENUE_NAME = rf"(?:(?:{'|'.join(VENUES)})\s*)?"
YEAR_RANGE = re.compile(
    rf"(?<![\w\-.])(between\s+)?(?:{VENUE_NAME}['’]?(?:19|20)\d\d|(?:{'|'.join(VENUES)})\s*['’]?\d\d)(?!\d)"
    rf"(?:(?:\s*[/\-–+]\s*{VENUE_NAME}['’]?(?:(?:19|20)\d\d|\d\d)"
    rf"|\s*(?:,|&|\bor\b|\band\b|\bto\b|\bthrough\b)\s*{VENUE_NAME}(?:['’]?(?:19|20)\d\d|['’]\d\d))(?![\w\-]|\.\d))+",
    re.I,
)
# A lower bound on the year: "since 2023", "nothing older than 2020", "2023 onwards", "2024+", "2023 or later"
# (that year and after), "after 2023", "newer than 2023" (the years after it). query.parse_filters, before the
# exact-year phrases below, which would read "since 2021" as 2021 alone.
YEAR_SINCE = re.compile(
    rf"(?<![\w\-.])(?:since|(?:nothing|none|not|no)\s+(?:older|earlier)\s+than)\s+(?:the\s+year\s+)?{YEAR}"
    rf"|(?<![\w\-.])(?:from\s+)?{YEAR}\s*(?:\+|(?:and|or)?\s*(?:onwards?|later|newer|after|beyond)\b)"
    rf"|(?<![\w\-.])(?:after|newer\s+than|later\s+than)\s+{YEAR}",
    re.I,
)
# Phrases that restrict by year: "in 2026", "from 2025", "2025 papers", "only 2025", "2025 only", and a year
# that opens or closes the question ("2026 clustering papers", "unlearning, 2025?"). A year glued to a name
# ("GPT-2025", "Model2025") or a number ("2025.5") is not a filter, nor one that follows a name written with
# inner capitals or digits ("ImageNet 2012", "WMT 2014": query.parse_filters checks). query.parse_filters, when
# VENUE_YEAR finds nothing.
# A fragment: the words that tie a year or a venue to the papers ("papers from 2025", "work at ICLR").
PLACE_PREPOSITION = r"(?:in|from|of|during|at|for)"
YEAR_PHRASE = re.compile(
    rf"(?<![\w\-.])(?:only\s+)?(?:(?:published|presented|accepted|submitted)\s+)?{PLACE_PREPOSITION}\s+"
    rf"(?:the\s+)?(?:year\s+)?{YEAR}(?:\s+only\b)?"
    rf"|(?<![\w\-.])(?:only\s+)?{YEAR}\s+(?=(?:papers?|submissions?|works?|abstracts?|articles?)\b)"
    rf"|(?<![\w\-.])only\s+(?:the\s+)?(?:year\s+)?{YEAR}|(?<![\w\-.]){YEAR}\s+only\b"
    rf"|^\s*{YEAR}(?=\s)|(?<![\w\-.]){YEAR}(?=\W*$)",
    re.I,
)
# A decision that qualifies the papers asked for: "accepted papers on X", "rejected submissions about RLHF",
# "orals on diffusion", "accepted orals", "spotlight papers", "show posters about X", "X — oral presentations
# only", "poster session papers", "only withdrawn ones", "papers accepted at ICLR 2026" (query.decision_in_text,
# read before the year and venue leave the text; the words are removed from the search text, and the filter is
# dropped where the store holds no decisions). "accepted" or "rejected" must qualify a papers noun (a year may
# stand between: "accepted 2025 papers"), go with "only" ("accepted only"), follow "got" ("papers that got
# accepted"), or tie the papers to a venue ("were accepted at ICLR 2026"; "tokens were accepted" is no filter).
# The presentations (rag.corpus.DECISIONS: oral, spotlight, poster), papers of their own, one or several joined
# ("orals or spotlights only": both), name papers in the plural ("any orals involving X"), or else must be
# followed by a papers noun, a preposition or "only" ("an oral or a poster?", "oral health" are no filter).
PRESENTATION = r"(?:orals?|spotlights?|posters?)"
JOINED = r"\s*(?:,|/|\+|&|\bor\b|\band\b)\s*"  # "orals or spotlights", "oral + spotlight", "oral/poster"
DECISION_PHRASE = re.compile(
    rf"(?<![\w\-])(?:(?:only|just)\s+)?(?:(accepted|rejected|withdrawn)\s+)?({PRESENTATION}(?:{JOINED}{PRESENTATION})*)"
    r"(?:\s+(?:presentations?|sessions?))?"
    r"(?=\s+(?:papers?|submissions?|works?|on|about|in|for|from|at|that|which|studying|using|with|only)\b"
    r"|(?<=s)(?![\w\-]))"
    rf"|(?<![\w\-])(?:only\s+)?(accepted|rejected|withdrawn)\s+(?=(?:{VENUE_NAME}['’]?(?:19|20)\d\d\s+)?"
    r"(?:papers?|submissions?|works?|ones|articles?)\b)"
    r"|(?<![\w\-])(?:only\s+(accepted|rejected|withdrawn)|got\s+(accepted)"
    r"|(accepted|rejected|withdrawn)\s+only)(?![\w\-])"
    rf"|(?<![\w\-])(?:(?:were|was|got|been|be|are|is)\s+)?(accepted|rejected)\s+"
    rf"(?=(?:at|to|in|into|from|by)\s+(?:{'|'.join(VENUES)})(?![\w\-]))",
    re.I,
)

# == what a question leaves out (rag.query.exclusion) =========================================================

# A clause leaving papers out: "but NOT the multi-view ones", "skip the pure flow matching work", "leave out X",
# "excluding X", "other than X", "X don't count". "not" leaves papers out only where it opens a clause (after a
# comma, dash, bracket or colon, "but", "and", "is", "are"), not in "I'm not sure" or "whether or not". A clause
# naming a role rather than a topic ("not papers that just use a contrastive loss", "not only the deep ones")
# leaves no paper out by its words: the reranker reads it with the rest of the question. The clause ends at the
# next punctuation mark or spaced dash.
EXCLUSION = re.compile(
    r"(?:(?:^|[,;(\u2014\u2013:]\s*|\s-{1,2}\s+|\b(?:but|and|is|are)\s+)not\b"
    r"|\b(?:but\s+)?(?:skip(?:ping)?|leave\s+out|leaving\s+out|exclud(?:e|ing)|except(?:\s+for)?|other\s+than|besides"
    r"|apart\s+from|aside\s+from|ignor(?:e|ing)|do(?:es)?(?:\s+not|n['\u2019]?t)\s+(?:count|mean|want|include))\b)"
    r"(?![^.;!?()\u2014\u2013,:]*\b(?:just|merely|only|simply|solely)\b)"
    r"(?!\s*(?:the\s+|any\s+)?(?:papers?|ones?|works?|methods?)\s+(?:that|which|where|who)\b)"
    r"\s*(?P<excluded>(?:(?!\s-{1,2}\s)[^.;!?()\u2014\u2013,:])+)"
    r"|(?P<counted>(?:(?!\s-{1,2}\s)[^.;!?()\u2014\u2013,:])+?)\s+do(?:es)?(?:\s+not|n['\u2019]?t)\s+count\b",
    re.I,
)

# == a list of papers, or one (rag.query.asks_for_list, rag.query.names_a_topic) =============================

# A question asks for a list when it asks for papers in the plural ("which papers …", "what methods …", "are
# there works on …", "papers on …") or says "list". "which paper studies X?" asks for one: "studies" is its
# verb, and a singular noun ("paper") between the question word and a plural one ends the look-ahead.
# Fragments of LIST_QUESTION: the plural nouns that ask for a list, the singular ones that stop the look-ahead.
LIST_PLURAL_NOUN = r"(?:papers|works|studies|articles|publications|submissions|methods|approaches)"
LIST_SINGULAR_NOUN = r"(?:paper|work|study|article|publication|submission|method|approach)"
# query.asks_for_list, and query.names_a_topic (a list question names a topic, however long).
LIST_QUESTION = re.compile(
    r"^\s*(?:please\s+)?list\b"
    r"|\b(?:which|what|any|find|show me|give me|are there|is there)\s+"
    rf"(?:(?!{LIST_SINGULAR_NOUN}\b)[\w'\-]+\s+){{0,4}}?"
    rf"{LIST_PLURAL_NOUN}\b"
    rf"|^\s*{LIST_PLURAL_NOUN}\b",
    re.I,
)
# "is there work on X?", "any research on X", "what has been published on X", "has anyone studied X?": papers in
# general, asked for with a mass noun or none. query.asks_for_list.
WORK_IN_GENERAL = re.compile(
    r"^\s*(?:(?:(?:is|are)\s+there|any|find|show|give|what|which)(?:\s+me)?\s+)?"
    r"(?:(?:the|some|any|recent|prior|existing|relevant)\s+)*(?:work|research|literature)\s+"
    r"(?:on|about|regarding|concerning|related\s+to|in|exists?\s+on|is\s+there\s+on|has\s+been\s+done\s+on)\b"
    r"|^\s*(?:has|have|did|does)\s+(?:anyone|anybody|people)\b|^\s*what\s+has\s+been\s+(?:published|done|written)\b",
    re.I,
)
# "which paper …", "the paper that …": one paper, however the rest is worded. query.asks_for_list (a
# PAPER_REQUEST message asking for one paper is no list).
ONE_PAPER_ASKED = re.compile(r"\b(?:which|what|the|a|one)\s+(?:\w+\s+)?paper\b(?!s)", re.I)
# A question about a detail opens with a question word or an auxiliary ("how many parameters does X have?",
# "does X use Y?"); a topic is typed bare ("adversarial robustness of graph neural networks"), short.
# query.names_a_topic.
QUESTION_OPENER = re.compile(
    r"^\s*(?:what|how|which|why|when|where|who|whose|whom|does|do|did|is|are|was|were|can|could|should|would|"
    r"will|has|have|compare|contrast|explain|describe|summari[sz]e|tell|give)\b",
    re.I,
)

# == what a count question counts, what a definition question defines (rag.query) ============================

# "how many baselines was FeDaL compared against?" counts baselines: the words after "how many", up to an
# auxiliary, "and", a preposition or the end. query.counted_noun.
HOW_MANY = re.compile(
    r"\bhow\s+many\s+((?:(?!(?:does|do|did|is|are|was|were|has|have|had|can|could|will|would|should|and|or|"
    r"in|on|of|for|with|per)\b)[\w\-]+\s*){1,4})",
    re.I,
)
# "what is CAMEL?", "what are QUANNs?", "MinPV - what is it", "what does STOD stand for?": the whole question asks
# what one coined name is. query.defined_name.
DEFINITION_QUESTION = re.compile(
    r"^(?:what(?:'s|\s+is|\s+are)|define|explain)\s+(?:an?\s+|the\s+)?(?P<a>.+?)\s*\??$"
    r"|^(?P<b>.+?)\s*[-–—:]+\s*what(?:'s|\s+is|\s+are)\s+(?:it|they|this|that)\s*\??$"
    r"|^what\s+does\s+(?P<c>.+?)\s+stand\s+for\s*\??$",
    re.I,
)

# == follow-ups in a conversation (rag.followups) =============================================================

# "any year", "regardless of the year", "no year": the follow-up lifts the year filter. followups.find_year.
ANY_YEAR = re.compile(
    r"\b(?:any|all|every|other)\s+years?\b|\bregardless of (?:the )?years?\b|\bno year\b|\bwhichever year\b", re.I
)
# "the second one" → 2, "the last one" → -1: followups._ordinal_value, and followups._ordinal_name for messages.
ORDINAL_WORDS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "last": -1,
}
# "the first three" → 3 papers: followups.find_ordinals, on ORDINAL_RANGE's group.
COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
# Fragments of ORDINAL_RANGE and ORDINAL: an ordinal ("second", "3rd"), and the nouns a list's items go by.
ORDINAL_WORD = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|\d{1,2}(?:st|nd|rd|th))"
LISTED_NOUN = r"(?:ones?|papers?|results?|items?|entr(?:y|ies)|sources?|works?|articles?|studies|study)"
# A fragment of ORDINAL: "the first time", "the last year": an ordinal that is not about the list.
NOT_ABOUT_LIST = (
    r"(?!\s+(?:to|time|times|answer|question|year|years|step|steps|stage|author|authors|layer|layers|order)\b)"
)
# "the first three", "top 5 papers": the first n papers of the list. followups.find_ordinals.
ORDINAL_RANGE = re.compile(
    rf"\b(?:the\s+)?(?:first|top)\s+(two|three|four|five|six|seven|eight|nine|ten|\d{{1,2}})\b(?:\s+{LISTED_NOUN}\b)?",
    re.I,
)
# "the second one", "and the third", "2nd paper": one paper of the list. followups.find_ordinals.
ORDINAL = re.compile(
    rf"(?:\b(?:the|and|or)\s+|,\s*)({ORDINAL_WORD})\b{NOT_ABOUT_LIST}(?:\s+{LISTED_NOUN}\b)?"
    rf"|\b({ORDINAL_WORD})\s+{LISTED_NOUN}\b",
    re.I,
)
# "#2", "number 3", "paper 4": one paper of the list by its number. followups.find_ordinals.
ORDINAL_NUMBER = re.compile(r"(?:#\s*|\b(?:number|no\.|paper|result|item|source)\s+)(\d{1,2})\b", re.I)
# A fragment of SINGULAR_REFERENCE: what "this …" or "that …" refers to a paper by.
REFERRING_NOUN = r"(?:paper|one|work|method|approach|model|study|article|abstract|framework|technique|algorithm|system)"
# "it", "its", "this method", "the paper": the paper under discussion. followups.resolve.
SINGULAR_REFERENCE = re.compile(
    rf"\b(?:it|its|itself)\b|\b(?:this|that|the same|said)\s+{REFERRING_NOUN}\b|\bthe paper\b",
    re.I,
)
# "they", "them", "both", "these papers": the papers under discussion. followups.resolve.
PLURAL_REFERENCE = re.compile(
    r"\b(?:they|them|their|theirs|themselves|both|each of them|all of them)\b"
    r"|\b(?:these|those|the)\s+(?:papers|ones|works|methods|approaches|models|studies|two|three|four)\b",
    re.I,
)
# "what about diffusion?", "and for vision?": the previous question about a new subject. followups.resolve.
# ("which papers study X?" starts a new search even if it says "they" or "their".)
CONTINUATION = re.compile(
    r"^\s*(?:and|also|but|so|then|now|ok(?:ay)?|what about|how about|same for|same|only|just|instead)\b[\s,]*", re.I
)
# "compare them", "how do they differ?": a follow-up about the papers under discussion. followups.resolve.
COMPARISON = re.compile(
    r"\b(?:compare[sd]?|comparing|comparison|contrast|differ(?:s|ence|ences)?|versus|vs\.?|similarit(?:y|ies)"
    r"|in common)\b",
    re.I,
)
# The label an LLM may put before its rewritten question ("Standalone question: …"), removed by
# followups.parse_condensed.
CONDENSED_LABEL = re.compile(r"^(?:standalone question|rewritten question|question)\s*:\s*", re.I)

# == which papers and sentences answer (rag.evidence) ========================================================

# "what benchmark does the brain tumor segmentation paper use?" is about one paper: the best match answers it,
# and a second paper sharing only a word ("benchmark") must not be cited. Evidence Selector.select, with
# SEVERAL_PAPERS, for a question the list reader reads as no list ("the full list with one line per paper" is one).
ONE_PAPER_NAMED = re.compile(r"\bthe\s+(?:[\w'\-]+\s+){0,10}?paper\b(?!s)", re.I)
# Questions naming two papers ("the X paper and the Y paper", "contrast the X paper with SelKD"), or comparing
# named methods ("how do PURGE and Sharp MinMax differ?"): Selector.select keeps a paper for each.
SEVERAL_PAPERS = re.compile(r"\b(and|vs\.?|versus|compare[ds]?|contrast|differ\w*|both|each|between|other)\b", re.I)
# For "which papers ..." a sentence saying what the paper does beats background on the field. evidence.quote.
CONTRIBUTION = re.compile(
    r"\b(we|this (paper|work|study)|our (method|approach|framework|work)|here)\b[^.]{0,40}?\b"
    r"(propose|introduce|present|develop|design|study|show|investigate|analy[sz]e|characteri[sz]e|"
    r"establish|derive|provide|demonstrate|find|reveal)",
    re.I,
)
# "Additionally, we develop …" quoted alone leans on a sentence the reader never saw; the connective only
# adds, so dropping it changes no claim ("However", "Hence" do change meaning and stay). evidence._quote.
ADDITIVE_OPENER = re.compile(r"^(?:Furthermore|Moreover|Additionally|In addition|Besides),\s+(?=\w)")

# == the parts of a topic, and counts (rag.facets) ===========================================================

# Words joining two parts of a topic: facets.facets cuts a topic at them. "mixture of experts" is cut too; each
# part is then held by the papers on it, so the cut costs nothing there.
FACET_JOIN = re.compile(
    r"\s+(?:of|in|for|on|with|via|using|under|from|through|to|and|across|against|without|based on|beyond|inside|"
    r"within|plus|into|over|versus|vs\.?)\s+|\s*[:;,]\s+|\s+[-–—]\s+",
    re.I,
)
# Alternatives inside a part: "PDEs or physics-informed neural nets", "test-time compute / inference scaling",
# "llms (interpretability)". facets.facets.
FACET_ALTERNATIVE = re.compile(r"\s+or\s+|\s*/\s*|\s*[()]\s*", re.I)
# Words naming the research act or the kind of answer, not its topic: "prove results in a linear regression
# setting" is about linear regression; "clustering papers" about clustering. Dropped from facets before weighing
# (facets._generic_stems, stemmed; a space-separated string). Read by stem, so one word per stem: "analysis",
# "analyse" and "analyze" stem apart; "paper", "work", "use", "new" are BM25 stopwords, dropped before.
GENERIC_WORDS = (
    "studying approaches technique analyze analyse analysis proposing prove result novel recent designed "
    "specifically setting anything something etc idea application modify improve apply introduce develop "
    "investigate explore"
)
# The small words an acronym may skip when a text spells it out ("moe": mixture of experts). facets._spelled_out.
ACRONYM_SMALL_WORDS = frozenset("a an the of for from with and or in on to by via".split())
# Numbers written as words, a count as much as digits ("three datasets"). A space-separated string; the
# alternation of COUNT_NUMBER.
NUMBER_WORDS = (
    "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen twenty thirty forty "
    "fifty hundred hundreds thousand thousands million millions billion billions dozen dozens"
)
# A count: digits ("54", "2,880", "**2880**") or a number word, not a share or a ratio ("5%", "14x", "3-fold").
# facets.gives_count.
COUNT_NUMBER = re.compile(
    rf"(?<![\w.])(?:\d[\d,]*(?:\.\d+)?[kKmMbB]?|(?:{'|'.join(NUMBER_WORDS.split())}))(?![\w%×.]|[-\s]?fold\b)",
    re.I,
)

# == stopwords (rag.text) ====================================================================================

# Paper boilerplate: says nothing about which paper or sentence answers ("which papers propose methods for X").
# Part of EVIDENCE_STOPWORDS, BM25_STOPWORDS and FOLLOWUP_FILLER.
BOILERPLATE = frozenset(
    """paper papers work works study studies propose proposes proposed approach method methods
    show shows use uses used using""".split()
)
# For sentence evidence (text.content_words): grammar, boilerplate and question scaffolding. Deliberately wider
# than BM25's on boilerplate ("model", "approaches", "reports" say nothing about which sentence answers) and
# without stemming: a sentence shares a question's word as written.
EVIDENCE_STOPWORDS = (
    frozenset("address addresses approaches model models report reported reports studied".split())
    | FUNCTION_WORDS
    | MORE_FUNCTION_WORDS
    | BOILERPLATE
)
# The stopwords of BM25 (text.bm25_stopwords): grammar and boilerplate, and "based", "done", "new", which say
# nothing about which paper answers ("what is DiVeQ?" is about "diveq" alone).
BM25_STOPWORDS = frozenset("based done new".split()) | FUNCTION_WORDS | MORE_FUNCTION_WORDS | BOILERPLATE

# == what a follow-up asks about (rag.followups.content_words) ================================================

# Words that carry no topic of their own in a follow-up: grammar, requests, references, fillers, the words that
# name an answer's parts, ordinals and numbers. Here, after the lists it is built on.
# followups.content_words ("what datasets does it use?" → datasets; none left: about the papers in focus).
FOLLOWUP_FILLER = (
    frozenset(
        """
        another either else neither instead least less let onto us ok okay go talk say says said please
        tell explain describe elaborate detail details continue summarize summarise summary overview give list
        know want like many much
        compare compared compares comparing comparison contrast differ differs difference differences versus vs
        similar similarity similarities common relate related relation
        article articles result results item items entry entries source sources abstract abstracts approaches
        model models framework technique algorithm system number top year years one ones
        """.split()
    )
    | FUNCTION_WORDS
    | MORE_FUNCTION_WORDS
    | BOILERPLATE
    | frozenset(ORDINAL_WORDS)
    | frozenset(NUMBER_WORDS.split())
)

# == what the local model's answers are checked for (rag.backends.local) =====================================

# A question asking for a quantity: "how many…", "what accuracy…", "…relative improvement on…?". local.unsupported
# refuses a sentence without a number for it.
QUANTITY_QUESTION = re.compile(
    r"\bhow (many|much|large|fast|big|long)\b|\bby how\b|"
    r"\b(accuracy|speed-?up|gain|improvement|reduction|percentage|success rate|error rate|psnr|bleu|f1)\b",
    re.I,
)
# "The abstract discusses X" reads as if the user had asked about an abstract: local._tidy_sentence says "This
# paper" instead.
MODEL_SELF_REFERENCE = re.compile(r"^(the|this) (abstract|text|passage)( itself)?(?=\s|$)", re.I)

# == the counts ===============================================================================================

# The word lists above, each with the lists it is built on (their words are not counted again). FUNCTION_WORDS is
# the library's and counts none of its words.
LIBRARY_LISTS = ("FUNCTION_WORDS",)
WORD_LISTS: dict[str, tuple[str, ...]] = {
    "FUNCTION_WORDS": (),
    "MORE_FUNCTION_WORDS": (),
    "REQUEST_WORDS": (),
    "REQUEST_PHRASES": ("REQUEST_WORDS", "FUNCTION_WORDS", "MORE_FUNCTION_WORDS"),
    "REQUEST_WORDS_NOT_LAST": (),
    "REQUEST_WORDS_NOT_FIRST": (),
    "VENUES": (),
    "ORDINAL_WORDS": (),
    "COUNT_WORDS": (),
    "GENERIC_WORDS": (),
    "ACRONYM_SMALL_WORDS": (),
    "NUMBER_WORDS": (),
    "BOILERPLATE": (),
    "EVIDENCE_STOPWORDS": ("FUNCTION_WORDS", "MORE_FUNCTION_WORDS", "BOILERPLATE"),
    "BM25_STOPWORDS": ("FUNCTION_WORDS", "MORE_FUNCTION_WORDS", "BOILERPLATE"),
    "FOLLOWUP_FILLER": (
        "FUNCTION_WORDS",
        "MORE_FUNCTION_WORDS",
        "BOILERPLATE",
        "ORDINAL_WORDS",
        "NUMBER_WORDS",
    ),
}
# The regex fragments above: pieces of a regex's source shared by the patterns, not regexes of their own.
FRAGMENTS = (
    "SCAFFOLD_VERB",
    "PAPERS_NOUN",
    "YEAR",
    "SHORT_YEAR",
    "VENUE_NAME",
    "PLACE_PREPOSITION",
    "PRESENTATION",
    "JOINED",
    "LIST_PLURAL_NOUN",
    "LIST_SINGULAR_NOUN",
    "ORDINAL_WORD",
    "LISTED_NOUN",
    "NOT_ABOUT_LIST",
    "REFERRING_NOUN",
)


def entries(name: str) -> list[str]:
    """The words (or phrases) of the word list `name`, as written: a "|"-separated string by "|", any other
    string by whitespace, a dict by its keys, a set in sorted order."""
    value = globals()[name]
    if isinstance(value, str):
        return value.split("|") if "|" in value else value.split()
    if isinstance(value, dict):
        return list(value)
    return sorted(value)


def listed_words() -> dict[str, int]:
    """How many words (or phrases) each word list adds to the lists it is built on; a library's list adds none."""
    found = {}
    for name, bases in WORD_LISTS.items():
        inherited = set().union(*(entries(base) for base in bases))
        found[name] = 0 if name in LIBRARY_LISTS else len(set(entries(name)) - inherited)
    return found


def regexes() -> list[str]:
    """The names of the compiled patterns this module holds."""
    return [name for name, value in globals().items() if isinstance(value, re.Pattern)]


def counts() -> tuple[int, int]:
    """(regexes, listed words and phrases): the two numbers the module docstring states."""
    return len(regexes()), sum(listed_words().values())
