"""What the repository itself must hold: no path that only exists on one machine.

A checkout must work wherever it is cloned, so no tracked file may name an absolute path
inside someone's workspace, home or temporary directory (tests write under pytest's
tmp_path, benchmarks under a directory they are given). System locations that are the
same on every machine of a kind (/proc, /usr/bin, /etc) are not machine-specific.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: an absolute path into a workspace, a home directory or the temporary directory
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|home|root|Users|tmp|var/tmp)/[\w.${}-]")

BINARY_SUFFIXES = {".png", ".jpg", ".ico", ".woff", ".woff2"}


def tracked_text_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    files = [ROOT / name for name in out.split("\0") if name]
    this = Path(__file__).resolve()  # its own examples below are not paths
    return [f for f in files if f.suffix not in BINARY_SUFFIXES and f.is_file() and f != this]


def test_no_tracked_file_names_a_machine_specific_path() -> None:
    offenders = []
    for path in tracked_text_files():
        text = path.read_text(errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if MACHINE_PATH.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "machine-specific paths:\n" + "\n".join(offenders)


def test_the_pattern_catches_what_it_should() -> None:
    assert MACHINE_PATH.search("The contract is /work/shared/RULES.md")
    assert MACHINE_PATH.search('path=f"/tmp/solrace-boards-{width}.png"')
    assert MACHINE_PATH.search("cd /root/project")
    assert not MACHINE_PATH.search("for line in open('/proc/cpuinfo')")
    assert not MACHINE_PATH.search("executable_path='/usr/bin/chromium'")
    assert not MACHINE_PATH.search("see docs/RULES.md and ../shared/RULES.md")


def test_the_rules_contract_is_in_the_repository() -> None:
    rules = ROOT / "docs" / "RULES.md"
    assert rules.is_file()
    assert "## 2. Deals" in rules.read_text()


def test_every_server_module_is_named_in_the_architecture() -> None:
    """docs/ARCHITECTURE.md is where a newcomer finds what each server module holds: a module
    it does not name is a module nobody can find."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    modules = sorted(
        p.relative_to(ROOT / "server").as_posix()
        for p in (ROOT / "server").rglob("*.py")
        if p.name != "__init__.py"
    )
    assert modules, "no server module found"
    missing = [name for name in modules if f"`{name.rsplit('/', 1)[-1]}`" not in text]
    assert not missing, f"docs/ARCHITECTURE.md does not name: {missing}"


def test_every_redis_key_is_named_in_the_key_map() -> None:
    """server/store/keys.py is the one map of the server's Redis keys: a module that builds a key
    from the prefix itself (an f-string starting with it) adds a key the map does not show."""
    built_here = re.compile(r"""f["']\{(self\.)?(records\.)?prefix\}""")
    offenders = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sorted((ROOT / "server").rglob("*.py"))
        if p.name != "keys.py"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if built_here.search(line)
    ]
    assert not offenders, f"keys built outside server/store/keys.py: {offenders}"
