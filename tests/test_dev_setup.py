"""`./dev serve` on a fresh clone says what it is doing while npm and pip work (issue 23,
item 9: a minute of silence). The setup runs here on a copy of the script with stand-ins for
python and npm on PATH, so the test needs no network and takes a moment."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_setup_on_a_fresh_clone_says_each_step(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    (clone / "client" / "web").mkdir(parents=True)
    for name in ("engine", "protocol", "server", "bench", "cli"):
        (clone / name).mkdir()
    shutil.copy(ROOT / "dev", clone / "dev")
    shutil.copy(ROOT / "pyproject.toml", clone / "pyproject.toml")
    shutil.copy(ROOT / "setup.py", clone / "setup.py")
    shutil.copy(ROOT / "client" / "web" / "package.json", clone / "client" / "web")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    # python3 -m venv DIR: a venv whose python records what it was asked (pip) and succeeds
    _script(
        bin_dir / "fake-python",
        f'echo "python $*" >> {log}\n'
        'if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin"; '
        f'printf \'#!/bin/sh\\necho "venv-python $*" >> {log}\\n\' > "$3/bin/python"; '
        'chmod +x "$3/bin/python"; fi\n',
    )
    _script(bin_dir / "npm", f'echo "npm $*" >> {log}\nmkdir -p node_modules\n')
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env["PYTHON"] = str(bin_dir / "fake-python")
    done = subprocess.run(
        ["./dev", "setup"], cwd=clone, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    said = done.stderr
    for step in ("making the Python environment", "web client's packages", "Python dependencies"):
        assert step in said, said
    assert said.count("done in") == 3, said
    calls = log.read_text()
    assert "npm ci" in calls and "venv-python -m pip install" in calls, calls

    again = subprocess.run(
        ["./dev", "setup"], cwd=clone, env=env, capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 0 and again.stderr == ""  # nothing to do: nothing said
