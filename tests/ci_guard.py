"""A pytest plugin: under CI (`CI` set, as `.ci/run` runs), a skipped test is a failed test.

Every test in this suite is meant to run in CI; `.ci/run` installs what each one needs (the llama.cpp server,
the local model, root for the mounts). A skip there means an install step broke, and a green run that skipped
the tests it was meant to run would hide that.
"""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not os.environ.get("CI") or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    reason = reason.removeprefix("Skipped: ")
    report.outcome = "failed"
    report.longrepr = f"skipped under CI, where every test must run: {reason}"
