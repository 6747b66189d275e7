"""The solver's answers in words, for the terminal client: a practice hint and the
post-race verdicts (`solved` event). The server decides both; this only says them."""

from __future__ import annotations

from typing import Any

VERDICT_WORDS = {
    "won": "winnable",
    "lost": "not winnable",
    "unknown": "unknown (the solver ran out of budget)",
}


def hint_line(hint: dict[str, Any]) -> str:
    """One line for a `hint` reply."""
    verdict = hint.get("verdict")
    if verdict == "won" and hint.get("move"):
        return f"hint: {hint['move']} (move {hint.get('n', '?')}) keeps the game winnable"
    if verdict == "lost":
        return "hint: no sequence of moves wins from here (the position is lost)"
    return "hint: the solver could not tell within its budget"


def solved_line(
    event: dict[str, Any], names: dict[int, str] | None = None, again: bool = False
) -> str:
    """One line for a `solved` event: the deal, then every unfinished seat's final position.
    `again`: a later `solved` of the same race (verdicts left unknown, searched further)."""
    deal = VERDICT_WORDS.get(event.get("deal", ""), str(event.get("deal")))
    moves = event.get("deal_moves")
    text = ("searched further: " if again else "") + f"the deal was {deal}"
    text += f" (a {moves}-move win)" if moves else ""
    seats = event.get("seats") or {}
    parts = []
    for seat, verdict in sorted(seats.items(), key=lambda kv: int(kv[0])):
        who = (names or {}).get(int(seat), f"seat {seat}")
        parts.append(f"{who}: {VERDICT_WORDS.get(verdict, verdict)}")
    if parts:
        text += "; final positions: " + ", ".join(parts)
    return text
