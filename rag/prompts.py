"""Prompt templates are plain files in `prompts/`, loaded by name; no prompt text lives in code."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .errors import RagError


def prompt_dirs(override: Path | None = None) -> list[Path]:
    here = Path(__file__).resolve().parent
    dirs = [here / "_data" / "prompts", here.parent / "prompts"]
    return ([override] if override else []) + [d for d in dirs if d.is_dir()]


@lru_cache(maxsize=32)
def load_prompt(name: str, override: Path | None = None) -> str:
    """The template `name` (e.g. "answer_system.md"), from `override` first, then the bundled prompts."""
    for directory in prompt_dirs(override):
        path = directory / name
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise RagError(f"prompt template {name!r} not found (looked in {', '.join(map(str, prompt_dirs(override)))})")


def render(template: str, **values: str) -> str:
    """Fill `{name}` placeholders; other braces in the template are left alone."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template
