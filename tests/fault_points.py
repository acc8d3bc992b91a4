"""Fault points for the store tests: the real `rag` CLI, run in this process with Chroma's writes counted, so a test
kills an ingest, or holds it, at an exact write instead of hoping it is still busy "by now".

    python -m tests.fault_points --at upsert:2 --action kill [--before] -- ingest FILE
    python -m tests.fault_points --at upsert:1 --action pause --pause-dir DIR -- ingest FILE
    python -m tests.fault_points --trace FILE -- ingest --rebuild FILE

A point is METHOD:N, the Nth call (from 1) in this process of one of Chroma's writes: `upsert`, `delete` and
`modify` of `chromadb.api.models.Collection.Collection` (what the embedded PersistentClient and the HttpClient
return) and the client's `delete_collection`. `kill` sends SIGKILL to this process once that call has returned
(or just before it, with --before): nothing after it runs, as with `kill -9`. `pause` writes DIR/paused (holding
this pid) before the call and blocks until DIR/release exists. `--trace` appends one line per call to FILE,
`METHOD:N details`, flushed before the call, so a test can list a command's writes and then kill at each.

The product holds no test code: this module patches the methods, then runs `rag.cli:main` with the arguments
after `--`.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
METHODS = ("upsert", "delete", "modify", "delete_collection")


def _describe(method: str, args: tuple, kwargs: dict) -> str:
    """What a call writes, for the trace: ids counted, names and metadata keys shown."""
    if method == "delete_collection":
        return str(kwargs.get("name", args[0] if args else ""))
    if method == "modify":
        parts = []
        if kwargs.get("name"):
            parts.append(f"name={kwargs['name']}")
        if kwargs.get("metadata") is not None:
            parts.append("metadata=" + ",".join(sorted(kwargs["metadata"])))
        return " ".join(parts)
    ids = kwargs.get("ids", args[0] if args else None) or []
    return f"{len(ids)} ids"


def _install(at: tuple[str, int] | None, action: str, before: bool, pause_dir: Path | None, trace: Path | None):
    from chromadb.api.client import Client
    from chromadb.api.models.Collection import Collection

    calls = dict.fromkeys(METHODS, 0)
    counting = threading.Lock()  # upserts run on the ingest's writer thread

    def act() -> None:
        if action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        assert pause_dir is not None
        marker = pause_dir / "paused"
        marker.with_suffix(".tmp").write_text(str(os.getpid()))
        marker.with_suffix(".tmp").rename(marker)  # whole, or not there
        while not (pause_dir / "release").exists():
            time.sleep(0.02)

    def wrap(owner: type, method: str) -> None:
        real: Callable = getattr(owner, method)

        def instrumented(self, *args, **kwargs):
            with counting:
                calls[method] += 1
                number = calls[method]
            if trace is not None:
                with trace.open("a") as log:
                    log.write(f"{method}:{number} {_describe(method, args, kwargs)}\n")
            hit = at == (method, number)
            if hit and (before or action == "pause"):
                act()
            result = real(self, *args, **kwargs)
            if hit and not before and action == "kill":
                act()
            return result

        setattr(owner, method, instrumented)

    for method in ("upsert", "delete", "modify"):
        wrap(Collection, method)
    wrap(Client, "delete_collection")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fault_points", description=__doc__.split("\n\n")[0])
    parser.add_argument("--at", help="METHOD:N, e.g. upsert:2")
    parser.add_argument("--action", choices=("kill", "pause"), default="kill")
    parser.add_argument("--before", action="store_true", help="kill before the call instead of after it")
    parser.add_argument("--pause-dir", type=Path)
    parser.add_argument("--trace", type=Path)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the `rag` arguments")
    options = parser.parse_args(argv)
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    at = None
    if options.at:
        method, _, number = options.at.partition(":")
        if method not in METHODS or not number.isdigit():
            parser.error(f"--at must be METHOD:N with METHOD one of {', '.join(METHODS)}")
        at = (method, int(number))
    if options.action == "pause" and options.pause_dir is None:
        parser.error("--action pause needs --pause-dir")
    _install(at, options.action, options.before, options.pause_dir, options.trace)

    from rag.cli import main as rag_main

    sys.argv = ["rag", *command]
    rag_main()


# -- the test side ----------------------------------------------------------------------------------------------


def command(
    rag_args: list[str], at: str | None = None, action: str = "kill", before: bool = False, **paths: Path
) -> list[str]:
    """The command line that runs `rag RAG_ARGS` with a fault point; `paths`: pause_dir=…, trace=…."""
    line = [sys.executable, "-m", "tests.fault_points"]
    if at:
        line += ["--at", at, "--action", action] + (["--before"] if before else [])
    for name, path in paths.items():
        line += [f"--{name.replace('_', '-')}", str(path)]
    return [*line, "--", *rag_args]


def fault_env(env: dict[str, str]) -> dict[str, str]:
    """`env` with this repository importable (`-m tests.fault_points` from any working directory)."""
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))}


def run(rag_args: list[str], env: dict[str, str], **point) -> subprocess.CompletedProcess:
    """Run `rag RAG_ARGS` to completion or to its fault point; `point` as for `command`."""
    return subprocess.run(
        command(rag_args, **point), env=fault_env(env), capture_output=True, text=True, timeout=300, cwd=REPO
    )


class Paused:
    """`rag RAG_ARGS` started and held at its fault point (`pause`) until `release()`."""

    def __init__(self, rag_args: list[str], env: dict[str, str], at: str, pause_dir: Path) -> None:
        pause_dir.mkdir(parents=True, exist_ok=True)
        self.pause_dir = pause_dir
        self.process = subprocess.Popen(
            command(rag_args, at=at, action="pause", pause_dir=pause_dir),
            env=fault_env(env),
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def wait(self, deadline_s: float = 300) -> None:
        """Until the process sits at its point. The deadline only matters when something is broken."""
        marker = self.pause_dir / "paused"
        give_up = time.monotonic() + deadline_s
        while not marker.exists():
            if self.process.poll() is not None:
                _, err = self.process.communicate()
                raise AssertionError(f"the process ended ({self.process.returncode}) before its fault point:\n{err}")
            if time.monotonic() > give_up:
                self.process.kill()
                raise AssertionError(f"the process did not reach its fault point in {deadline_s:.0f} s")
            time.sleep(0.02)
        assert int(marker.read_text()) == self.process.pid

    def release(self, timeout: float = 300) -> subprocess.CompletedProcess:
        """Let it go on, and wait for it to finish."""
        (self.pause_dir / "release").touch()
        out, err = self.process.communicate(timeout=timeout)
        return subprocess.CompletedProcess(self.process.args, self.process.returncode, out, err)

    def __enter__(self) -> Paused:
        return self

    def __exit__(self, *exc) -> None:
        if self.process.poll() is None:  # a failed test: never leave it blocked
            self.process.kill()
            self.process.communicate()


if __name__ == "__main__":
    main()
