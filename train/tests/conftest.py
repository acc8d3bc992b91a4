"""train/tests: the tests that train and export a model, so need torch (`pip install -e '.[train]'`).

CI never collects them (`testpaths = ["tests"]`, and `.ci/run` installs no torch). Run them where the `[train]`
extra is installed: `pytest train/tests`. Without torch and sentence-transformers these files are not collected
at all (not skipped: under CI a skip is a failure, tests/ci_guard.py)."""

from __future__ import annotations

import importlib.util

collect_ignore_glob = (
    []
    if all(importlib.util.find_spec(m) for m in ("torch", "sentence_transformers", "all_minilm_l6_v2", "onnx"))
    else ["test_*.py"]
)
