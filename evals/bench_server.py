"""The HTTP server's latency: warm `/api/ask` p50/p95 and the SSE stream's time to first text, for one client and
for 16 concurrent clients, against a real `rag serve` process on 127.0.0.1.

    python evals/bench_server.py --store STORE --out bench-server [--label seeds] [--rounds 2]

The questions are the eval set's (evals/questions.jsonl), each asked once to warm up; then, one client: every
question `--rounds` times through `/api/ask` and through `/api/ask/stream`; then 16 clients, each asking the whole
list through the stream endpoint at once. Time to first text is from sending the request to the first `text`
event; total is to the `answer` event. Writes results.json and a Markdown table (server.md) under --out.

    python evals/bench_server.py --store STORE --out bench-burst --bursts 3 [--code OLD_CHECKOUT]

`--bursts N` measures overload instead: N bursts of 100 clients at once (each its own connection, a 30 s
timeout, one `/api/ask`): the admitted answers' p95, the share refused (503) and how fast, client timeouts, the
recovery (from the last client of a burst leaving to a new question answered), and the server's RSS after each
burst. `--code DIR` runs the server from another checkout (PYTHONPATH), to compare two versions in one run.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
CLIENTS = 16


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))]


def start_server(store: Path, code: Path | None = None) -> tuple[subprocess.Popen, str]:
    import os

    env = {**os.environ, "PYTHONPATH": str(code)} if code else None
    process = subprocess.Popen(
        [sys.executable, "-m", "rag", "serve", "--store", str(store), "--port", "0", "--no-access-log"],
        env=env,
        cwd=code,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    for line in process.stderr:
        match = re.search(r"(http://127\.0\.0\.1:\d+) \(the page", line)  # not a Chroma server's URL
        if match:
            url = match.group(1)
            break
    else:
        raise SystemExit(f"rag serve did not start (exit {process.wait()})")
    threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.3)
    raise SystemExit("rag serve did not answer /healthz")


def ask(client: httpx.Client, question: str) -> float:
    started = time.perf_counter()
    response = client.post("/api/ask", json={"question": question})
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000


def stream(client: httpx.Client, question: str) -> tuple[float, float]:
    """(ms to the first `text` event, ms to the `answer` event)."""
    started = time.perf_counter()
    first = None
    with client.stream("POST", "/api/ask/stream", json={"question": question}) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if line == "event: text" and first is None:
                first = (time.perf_counter() - started) * 1000
            elif line == "event: answer":
                break
    total = (time.perf_counter() - started) * 1000
    return (first if first is not None else total), total


def summary(values: list[float]) -> dict:
    return {"p50": round(statistics.median(values), 1), "p95": round(percentile(values, 95), 1), "n": len(values)}


BURST_CLIENTS = 100
CLIENT_TIMEOUT_S = 30.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def one_burst(url: str, questions: list[str]) -> dict:
    def one(i: int) -> tuple[int, float]:
        started = time.perf_counter()
        with httpx.Client(base_url=url, timeout=CLIENT_TIMEOUT_S) as client:
            try:
                status = client.post("/api/ask", json={"question": questions[i % len(questions)]}).status_code
            except httpx.TimeoutException:
                status = 0
        return status, time.perf_counter() - started

    with ThreadPoolExecutor(BURST_CLIENTS) as pool:
        results = list(pool.map(one, range(BURST_CLIENTS)))
    left = time.perf_counter()  # every client has its reply or has given up
    recovered = None
    with httpx.Client(base_url=url, timeout=CLIENT_TIMEOUT_S) as client:
        while time.perf_counter() - left < 300:
            try:
                if client.post("/api/ask", json={"question": questions[0]}).status_code == 200:
                    recovered = time.perf_counter() - left
                    break
            except httpx.TimeoutException:
                pass
            time.sleep(0.2)
    answered = [seconds * 1000 for status, seconds in results if status == 200]
    refused = [seconds * 1000 for status, seconds in results if status == 503]
    return {
        "answered": len(answered),
        "answered_p95_ms": round(percentile(answered, 95), 1) if answered else None,
        "refused": len(refused),
        "refused_max_ms": round(max(refused), 1) if refused else None,
        "timed_out": sum(1 for status, _ in results if status == 0),
        "other": sum(1 for status, _ in results if status not in (0, 200, 503)),
        "recovery_s": round(recovered, 2) if recovered is not None else None,
    }


def bursts(args: argparse.Namespace, questions: list[str]) -> None:
    process, url = start_server(args.store, args.code)
    rows = []
    try:
        for _ in range(args.bursts):
            row = one_burst(url, questions)
            row["rss_mb"] = rss_mb(process.pid)
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        process.terminate()
        process.wait(timeout=60)
    label = args.label or str(args.code or "this checkout")
    (args.out / "burst.json").write_text(json.dumps({"label": label, "bursts": rows}, indent=2))
    table = [
        f"| {label}: burst | answered | p95 answered | refused (slowest) | timed out | recovery | RSS |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, row in enumerate(rows, 1):
        table.append(
            f"| {n} | {row['answered']} | {row['answered_p95_ms']} ms | {row['refused']} ({row['refused_max_ms']} ms) "
            f"| {row['timed_out']} | {row['recovery_s']} s | {row['rss_mb']} MB |"
        )
    (args.out / "burst.md").write_text("\n".join(table) + "\n")
    print("\n".join(table))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--label", default="")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--questions", type=Path, default=HERE / "questions.jsonl")
    parser.add_argument("--bursts", type=int, default=0, help="measure N bursts of 100 clients instead")
    parser.add_argument("--code", type=Path, default=None, help="run the server from this checkout")
    args = parser.parse_args()
    questions = [json.loads(line)["question"] for line in args.questions.read_text().splitlines() if line.strip()]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.bursts:
        bursts(args, questions)
        return

    process, url = start_server(args.store)
    try:
        with httpx.Client(base_url=url, timeout=600) as client:
            papers = client.get("/api/info").json()["papers"]
            for question in questions:  # warm: every question once
                ask(client, question)
            one_ask = [ask(client, q) for _ in range(args.rounds) for q in questions]
            one_stream = [stream(client, q) for _ in range(args.rounds) for q in questions]

        def client_run(offset: int) -> list[tuple[float, float]]:
            order = questions[offset:] + questions[:offset]  # each client starts elsewhere in the list
            with httpx.Client(base_url=url, timeout=600) as own:
                return [stream(own, q) for q in order]

        started = time.perf_counter()
        with ThreadPoolExecutor(CLIENTS) as pool:
            runs = list(pool.map(client_run, [i * len(questions) // CLIENTS for i in range(CLIENTS)]))
        wall = time.perf_counter() - started
        many = [timing for run in runs for timing in run]
    finally:
        process.terminate()
        process.wait(timeout=30)

    results = {
        "label": args.label,
        "store": str(args.store),
        "papers": papers,
        "questions": len(questions),
        "one_client": {
            "ask_ms": summary(one_ask),
            "stream_first_text_ms": summary([f for f, _ in one_stream]),
            "stream_total_ms": summary([t for _, t in one_stream]),
        },
        "sixteen_clients": {
            "stream_first_text_ms": summary([f for f, _ in many]),
            "stream_total_ms": summary([t for _, t in many]),
            "answers_per_s": round(len(many) / wall, 2),
        },
    }
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    one, sixteen = results["one_client"], results["sixteen_clients"]
    table = [
        f"| {args.label or args.store} ({papers} papers) | p50 | p95 |",
        "|---|---|---|",
        f"| 1 client: `/api/ask` | {one['ask_ms']['p50']} ms | {one['ask_ms']['p95']} ms |",
        f"| 1 client: SSE first text | {one['stream_first_text_ms']['p50']} ms | "
        f"{one['stream_first_text_ms']['p95']} ms |",
        f"| 1 client: SSE answer | {one['stream_total_ms']['p50']} ms | {one['stream_total_ms']['p95']} ms |",
        f"| 16 clients: SSE first text | {sixteen['stream_first_text_ms']['p50']} ms | "
        f"{sixteen['stream_first_text_ms']['p95']} ms |",
        f"| 16 clients: SSE answer | {sixteen['stream_total_ms']['p50']} ms | {sixteen['stream_total_ms']['p95']} ms |",
        f"| 16 clients: throughput | {sixteen['answers_per_s']} answers/s | |",
    ]
    (args.out / "server.md").write_text("\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
