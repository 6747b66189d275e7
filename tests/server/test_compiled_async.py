"""No await while an exception is handled, in the compiled move path (docs/ARCHITECTURE.md,
"Compiled modules").

mypyc (2.4.1) keeps the exception being handled in the thread's state, not in the coroutine:
a compiled coroutine that awaits inside an `except` or `finally` block leaves that exception
as the "current" one of whichever coroutine runs next. Measured here: another coroutine saw it
in `sys.exc_info()`, a bare `raise` re-raised another coroutine's exception, and after a
`finally` that awaited, the exception stayed in the thread's state for every later coroutine.
On the server this made a lost connection's release task fail with a Redis error from an
earlier move (logged "Task exception was never retrieved", the tracebacks chained without
end), and it is the likely cause of the compiled build's one crash (2026-12-05). The move
path's modules therefore handle an error after its `try`, never in its handlers.
"""

from __future__ import annotations

import ast
import asyncio
import gc
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.race import current_view, start_race, until
from helpers.servers import in_loop
from helpers.views import putt_move
from solrace.server.store.redis_process import RedisProcess

ROOT = Path(__file__).resolve().parents[2]

#: `async with` over these leaves without suspending when its body raised (their exits only
#: release a lock or a semaphore, or cancel a timer): no other coroutine runs meanwhile
NON_SUSPENDING_EXITS = ("self.lock(", "conn.binding", "self.guard.turn(", "asyncio.timeout(")


def move_path_modules() -> list[Path]:
    """setup.py's MOVE_PATH, as source files (the package's folders are mapped by
    `package-dir`: solrace.server.net.transport is server/net/transport.py)."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    names: list[str] = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "MOVE_PATH" for t in node.targets)
    )
    return [ROOT.joinpath(*name.split(".")[1:]).with_suffix(".py") for name in names]


def awaits_while_handling(source: str) -> list[str]:
    """Each place a coroutine may suspend while an exception is handled: an await in an
    `except` or `finally` block, an `async for` there, an `async with` whose exit might
    suspend, a generator's `yield` there. "line: what" for each."""
    found: list[str] = []

    class Visitor(ast.NodeVisitor):
        def __init__(self) -> None:
            self.handling: list[str] = []  # the blocks around the node: except / finally / def

        def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
            saved, self.handling = self.handling, []
            self.generic_visit(node)
            self.handling = saved

        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            saved, self.handling = self.handling, ["def"]  # its awaits are not this one's
            self.generic_visit(node)
            self.handling = saved

        def visit_Lambda(self, node: ast.Lambda) -> None:
            saved, self.handling = self.handling, ["def"]
            self.generic_visit(node)
            self.handling = saved

        def visit_Try(self, node: ast.Try) -> None:
            for child in [*node.body, *node.orelse]:
                self.visit(child)
            for handler in node.handlers:
                self.handling.append("except")
                for child in handler.body:
                    self.visit(child)
                self.handling.pop()
            self.handling.append("finally")
            for child in node.finalbody:
                self.visit(child)
            self.handling.pop()

        def _inside(self) -> str | None:
            """The innermost handler block around an await of this async function."""
            if "def" in self.handling or not self.handling:
                return None
            return self.handling[-1]

        def visit_Await(self, node: ast.Await) -> None:
            where = self._inside()
            if where is not None:
                found.append(f"{node.lineno}: await in {where}")
            self.generic_visit(node)

        def visit_Yield(self, node: ast.Yield) -> None:  # a generator suspends there too
            where = self._inside_any()
            if where is not None:
                found.append(f"{node.lineno}: yield in {where}")
            self.generic_visit(node)

        def _inside_any(self) -> str | None:
            """The innermost handler block, in any function (a generator's too)."""
            blocks = [b for b in self.handling if b != "def"]
            return blocks[-1] if blocks and self.handling[-1] != "def" else None

        def visit_AsyncFor(self, node: ast.AsyncFor) -> None:
            where = self._inside()
            if where is not None:
                found.append(f"{node.lineno}: async for in {where}")
            self.generic_visit(node)

        def visit_AsyncWith(self, node: ast.AsyncWith) -> None:
            for item in node.items:
                text = ast.unparse(item.context_expr)
                if not text.startswith(NON_SUSPENDING_EXITS):
                    found.append(f"{node.lineno}: async with {text} (its exit may suspend)")
            where = self._inside()
            if where is not None:
                found.append(f"{node.lineno}: async with in {where}")
            self.generic_visit(node)

    Visitor().visit(ast.parse(source))
    return found


def test_the_scan_finds_each_form() -> None:
    """The scan below is only as good as this: each form it must refuse, refused."""
    bad = """
async def a():
    try:
        pass
    except ValueError:
        await b()
async def c():
    try:
        pass
    finally:
        await b()
async def d():
    try:
        pass
    except ValueError:
        with x:
            async for i in y():
                pass
async def e():
    async with other():
        pass
def f():
    try:
        pass
    finally:
        yield 1
"""
    assert awaits_while_handling(bad) == [
        "6: await in except",
        "11: await in finally",
        "17: async for in except",
        "20: async with other() (its exit may suspend)",
        "26: yield in finally",
    ]
    good = """
async def a():
    failed = None
    try:
        await b()
    except ValueError as exc:
        failed = exc
    def later():
        try:
            pass
        except ValueError:
            return lambda: None
    async with self.lock(code):
        await b()
    if failed is not None:
        await b()
        raise failed
"""
    assert awaits_while_handling(good) == []


def test_the_compiled_modules_never_await_while_an_exception_is_handled() -> None:
    modules = move_path_modules()
    assert len(modules) > 10 and all(p.exists() for p in modules), modules
    found = [
        f"{path.relative_to(ROOT)}:{where}"
        for path in modules
        for where in awaits_while_handling(path.read_text())
    ]
    assert not found, found


async def test_a_lost_connection_released_while_redis_is_away_leaves_no_exception_behind(
    tmp_path: Path, wire: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The server's move meets a Redis that is away (answered `busy`), then its connection
    goes: its release fails nowhere, and no other coroutine is left with an exception to
    handle. With the handlers of the compiled move path awaiting (before this), the release
    task failed with the move's Redis error and `sys.exc_info()` of a later coroutine was not
    clear."""
    caplog.set_level(logging.ERROR, logger="asyncio")
    with RedisProcess(data_dir=str(tmp_path)) as proc:
        async with in_loop(proc.url, "away:") as (transport, url):
            (ann,), _, _, _ = await start_race(url, wire, 1)
            view = current_view(ann)
            proc.stop()  # Redis goes away under the race
            move = {"type": "move", "move": putt_move(view), "n": view["moves"] + 1}
            refused = await ann.request(move)  # its outcome asked until Redis is given up on
            assert refused["type"] == "error" and refused["code"] == "busy", refused
            await ann.close()  # released while Redis is still away
            await until(lambda: not transport.conns, "the connection released")
            await transport.idle()
            gc.collect()
            await asyncio.sleep(0)

            async def current() -> object:
                await asyncio.sleep(0)
                return sys.exc_info()[1]

            assert await asyncio.create_task(current()) is None
    gc.collect()
    leaked = [r.getMessage().splitlines()[0] for r in caplog.records if r.name == "asyncio"]
    assert not leaked, leaked
