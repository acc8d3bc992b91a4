"""The README's examples are real: each command of its ```console blocks runs, and prints what the README shows.

The convention: in a ```console block, a line starting with `$ ` is a command (run by bash from the repository
root, through the installed `ask` and `rag`), and the lines after it, up to the next command or the block's end,
are its stdout. A block opened with ```console not-compared is shown only (it needs an LLM or a server, or
takes minutes). Commands run against the 95 seeds as the default store of a fresh home, so the README's paths
read /home/me/.local/share/rag-papers/store. Only what legitimately varies is normalised: timings and that home.

`python -m tests.test_readme SEED_STORE` rewrites the README's outputs from real runs (SEED_STORE: a store
holding the seeds, copied first; `rag ingest seeds/ --store DIR` builds one).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
BIN = Path(sys.executable).parent
SHOWN_HOME = "/home/me"

BLOCK = re.compile(r"^```console(?P<flags>[^\n]*)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)
VARYING = [
    (re.compile(r"\d+(?:\.\d+)?s\)"), "<seconds>s)"),  # ingest: "(0 chunks embedded in 1.5s)"
    (re.compile(r'("(?:retrieve|generate|total)": )\d+(?:\.\d+)?'), r"\1<ms>"),  # --json: "timings_ms"
]


@dataclass(frozen=True)
class Example:
    command: str
    shown: str  # the output as the README shows it
    line: int  # the command's line in the README, for failure messages

    def __str__(self) -> str:
        return f"README.md:{self.line}: $ {self.command}"


def examples(text: str) -> list[Example]:
    """The compared commands of the README, in order, each with the output shown after it."""
    found: list[Example] = []
    for block in BLOCK.finditer(text):
        if "not-compared" in block["flags"]:
            continue
        first_line = text.count("\n", 0, block.start("body")) + 1
        current: list[str] | None = None
        for number, line in enumerate(block["body"].splitlines(), first_line):
            if line.startswith("$ "):
                current = []
                found.append(Example(line[2:], "", number))
            elif current is not None:
                last = found[-1]
                found[-1] = Example(last.command, last.shown + line + "\n", last.line)
    return [Example(e.command, e.shown.rstrip("\n"), e.line) for e in found]


def normalised(output: str) -> str:
    for pattern, replacement in VARYING:
        output = pattern.sub(replacement, output)
    return output.rstrip("\n")


def make_home(seed_store: Path, home: Path) -> dict[str, str]:
    """A fresh home whose default store holds the seeds; the environment to run the README's commands in."""
    data = home / ".local" / "share"
    shutil.copytree(seed_store, data / "rag-papers" / "store")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(data),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",  # `ask` and `rag` are this environment's
        HF_HUB_OFFLINE="1",
        ANONYMIZED_TELEMETRY="False",
    )
    return env


def run(example: Example, env: dict[str, str]) -> subprocess.CompletedProcess:
    result = subprocess.run(
        ["bash", "-c", example.command], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    # The README's paths are the shown home's, whatever temporary directory this one is.
    result.stdout = result.stdout.replace(env["HOME"], SHOWN_HOME)
    return result


EXAMPLES = examples(README.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def readme_env(seed_store_dir, tmp_path_factory) -> dict[str, str]:
    return make_home(seed_store_dir, tmp_path_factory.mktemp("readme") / "home")


def test_the_readme_compares_ask_search_show_and_json():
    """Marking blocks not-compared must not leave the main commands unchecked."""
    commands = [e.command for e in EXAMPLES]
    for needle in ("ask ", "rag search ", "rag show ", "--json", "rag ingest "):
        assert any(needle in c for c in commands), f"no compared README example runs {needle.strip()!r}"
    assert all(e.shown for e in EXAMPLES), [str(e) for e in EXAMPLES if not e.shown]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.command[:60] for e in EXAMPLES])
def test_readme_example_prints_what_the_readme_shows(example, readme_env):
    result = run(example, readme_env)
    assert result.returncode == 0, f"{example} exited {result.returncode}:\n{result.stderr}"
    assert normalised(result.stdout) == normalised(example.shown), f"{example}: the README shows other output"


def regenerate(seed_store: Path) -> None:
    """Rewrite each compared command's output in README.md with what it prints now."""
    lines = README.read_text(encoding="utf-8").split("\n")
    with tempfile.TemporaryDirectory() as tmp:
        env = make_home(seed_store, Path(tmp) / "home")
        for example in reversed(examples("\n".join(lines))):  # from the end: earlier line numbers stay right
            result = run(example, env)
            if result.returncode != 0:
                raise SystemExit(f"{example} exited {result.returncode}:\n{result.stderr}")
            shown = len(example.shown.splitlines())
            lines[example.line : example.line + shown] = result.stdout.rstrip().split("\n")
    README.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    regenerate(Path(sys.argv[1]))
