"""The web client's pure modules (cards, moves, the room reducer, clocks) under Node's test runner.

They hold the rules of what a click means and how server messages change the page's
model, so they are tested alone here; the browser tests then check the wiring.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from helpers.timing import scaled

JS_TESTS = Path(__file__).parent / "js"


def test_pure_modules_pass_under_node() -> None:
    node = shutil.which("node")
    assert node, "node is required for the web client's unit tests (apt-get install nodejs)"
    files = sorted(str(p) for p in JS_TESTS.glob("*.test.mjs"))
    assert len(files) >= 2
    proc = subprocess.run(
        [node, "--test", *files], capture_output=True, text=True, timeout=scaled(120)
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    passed = int(re.search(r"^# pass (\d+)", out, re.M).group(1))
    failed = int(re.search(r"^# fail (\d+)", out, re.M).group(1))
    assert failed == 0 and passed >= 10, out[-2000:]
