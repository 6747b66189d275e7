"""solrace: multiplayer solitaire races on the same deal."""

from solrace import compiled as _compiled

__version__ = "0.1.0"

_compiled.install()  # SOLRACE_INTERPRETED=1: every module from its .py (solrace/compiled.py)
