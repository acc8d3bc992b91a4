"""`rag serve` as a real process on 127.0.0.1, for the tests of the HTTP API, the OpenAI-compatible endpoint and
the web page."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .helpers import cli_env

STARTUP_SECONDS = 120  # the models load before the port answers; two cores shared with other tests


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    stderr: list[str] = field(default_factory=list)

    def log(self) -> str:
        return "".join(self.stderr)


@contextmanager
def running_server(store: Path | None, *args: str, **env: str) -> Iterator[Server]:
    """`rag serve --store STORE --port 0 ARGS` (no --store: RAG_STORE or RAG_CHROMA_URL in `env` say where), once
    /healthz answers; stopped afterwards."""
    where = [] if store is None else ["--store", str(store)]
    process = subprocess.Popen(
        [sys.executable, "-m", "rag", "serve", *where, "--port", "0", *args],
        env=cli_env(**env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = Server("", process)
    found = threading.Event()

    def drain() -> None:  # keep the pipe empty, and keep what was said for failure messages
        assert process.stderr is not None
        for line in process.stderr:
            server.stderr.append(line)
            match = re.search(r"(http://127\.0\.0\.1:\d+) \(the page", line)  # not the store's URL
            if match and not found.is_set():
                server.url = match.group(1)
                found.set()

    threading.Thread(target=drain, daemon=True).start()
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline and process.poll() is None:
            if found.is_set() and _healthy(server.url):
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"rag serve did not start (exit {process.poll()}):\n{server.log()}")
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False
