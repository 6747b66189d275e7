"""`solrace serve` as a user meets it (issue 12, bug 10): a port already in use is one line,
not a traceback, and fetching the page's files does not fill the log at INFO."""

from __future__ import annotations

import subprocess
import sys
import urllib.request

from helpers.race import log_showing


def test_a_port_in_use_is_one_line(race_server, redis_url, key_prefix):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "solrace",
            "serve",
            "--host",
            race_server.host,
            "--port",
            str(race_server.port),
            "--redis-url",
            redis_url,
            "--redis-prefix",
            key_prefix,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert f"port {race_server.port}" in lines[0] and "in use" in lines[0]
    assert "Traceback" not in proc.stderr


def test_static_files_are_not_logged_at_info(race_server):
    for path in ("/", "/style.css", "/js/app.js", "/healthz"):
        with urllib.request.urlopen(race_server.url + path) as resp:
            assert resp.status == 200
    log = log_showing(race_server, "solrace serving on")
    assert "solrace serving on" in log, log[-2000:]
    assert "HTTP response sent" not in log and "connection closed" not in log, log[-2000:]
