"""`[ID]` citations: finding them, and removing any that name a paper that was not retrieved.

Works on whole texts and on streams (token by token), so an invalid citation never reaches the screen. In an
answer, square brackets mean a checked citation and nothing else: any other bracket group (`[see 999-99]`,
`[999‐99]` with a Unicode hyphen, an unfinished `[999-`, a model's markdown link `[https://…#…](…)`, even
`[CLS]`, which could pass for an OpenReview id) is shown in parentheses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .corpus import ID_PATTERN as _ID

# A bracket group whose every comma/semicolon-separated part looks like a paper id.
_GROUP = re.compile(rf"\[\s*({_ID}(?:\s*[,;]\s*{_ID})*)\s*\]")
_PART_SPLIT = re.compile(r"\s*[,;]\s*")
MAX_GROUP_CHARS = 300


def find_citations(text: str) -> list[str]:
    """Cited ids in order of first appearance, without duplicates."""
    found: list[str] = []
    for match in _GROUP.finditer(text):
        for part in _PART_SPLIT.split(match.group(1)):
            if part and part not in found:
                found.append(part)
    return found


def _rewrite_group(match: re.Match, valid: set[str], dropped: list[str]) -> str:
    kept = []
    for part in _PART_SPLIT.split(match.group(1)):
        if part in valid:
            if part not in kept:
                kept.append(part)
        elif part not in dropped:
            dropped.append(part)
    return "[" + ", ".join(kept) + "]" if kept else ""


def _neutralise(text: str) -> str:
    """A bracket group that is not a citation, in parentheses: brackets are for checked citations only.

    (An earlier rule kept groups without a digit in brackets; SmolLM2 then showed a made-up URL in brackets.)
    """
    return text.replace("[", "(").replace("]", ")")


def enforce_citations(text: str, valid_ids: Iterable[str]) -> tuple[str, list[str]]:
    """The text with citations of non-retrieved ids removed, and the removed ids."""
    # The stream filter over the whole text: what was streamed and what is kept are the same by construction.
    stream = CitationStreamFilter(valid_ids)
    cleaned = stream.feed(text) + stream.flush()
    dropped = stream.dropped
    # A removed citation leaves "word ." or "word  word"; tidy that up.
    cleaned = re.sub(r"[ \t]+([.,;:!?)])", r"\1", cleaned)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)
    return cleaned.strip(), dropped


class CitationStreamFilter:
    """Feed tokens in, get displayable text out: bracket groups are held until closed, then checked."""

    def __init__(self, valid_ids: Iterable[str]) -> None:
        self.valid = set(valid_ids)
        self.dropped: list[str] = []
        self._held = ""  # an open "[..." group, or trailing whitespace that may precede one

    def feed(self, token: str) -> str:
        out = []
        for char in token:
            out.append(self._push(char))
        return "".join(out)

    def _push(self, char: str) -> str:
        held = self._held
        if held.lstrip(" \t").startswith("["):
            held += char
            if char == "]":
                self._held = ""
                return self._resolve(held)
            if char == "\n" or len(held) > MAX_GROUP_CHARS:
                self._held = ""
                return _neutralise(held)  # not a citation after all
            self._held = held
            return ""
        if char == "[":
            self._held = held + char
            return ""
        if char in " \t":
            self._held = held + char
            return ""
        self._held = ""
        return held + char

    def _resolve(self, held: str) -> str:
        stripped = held.lstrip(" \t")
        space = held[: len(held) - len(stripped)]
        match = _GROUP.fullmatch(stripped)
        if not match:
            return space + _neutralise(stripped)
        rewritten = _rewrite_group(match, self.valid, self.dropped)
        return space + rewritten if rewritten else ""

    def flush(self) -> str:
        held, self._held = self._held, ""
        return _neutralise(held)
