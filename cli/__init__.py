"""solrace: multiplayer solitaire races on the same deal."""

__version__ = "0.1.0"
