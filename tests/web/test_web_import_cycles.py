"""No ES-module import cycle in the web client (client/web/js).

A cycle between two modules works until one of them uses an import at its top level while
the other is still being evaluated: then the page dies with a ReferenceError in one browser
and not another, depending on which module loaded first. Shared pieces go to their own module
(as text.js holds the words daily.js and render.js both write). Only static imports count:
`import("./x.js")` loads later, when every static module has been evaluated.
"""

from __future__ import annotations

import re
from pathlib import Path

JS = Path(__file__).resolve().parents[2] / "client" / "web" / "js"

#: `import ... from "./x.js"`, `export ... from "./x.js"` and bare `import "./x.js"`, over lines
_STATIC = re.compile(
    r"""^\s*(?:import|export)\b(?:[^"';()]*?\bfrom)?\s*["'](\.{1,2}/[^"']+)["']""", re.M
)


def imports_of(path: Path) -> set[str]:
    """The local modules `path` imports statically (file names within its folder)."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
    return {
        (path.parent / target).resolve().name
        for target in _STATIC.findall(text)
        if (path.parent / target).resolve().parent == path.parent.resolve()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def module_graph(folder: Path) -> dict[str, set[str]]:
    return {p.name: imports_of(p) for p in sorted(folder.glob("*.js"))}


def test_web_client_modules_import_no_cycle() -> None:
    graph = module_graph(JS)
    assert len(graph) > 10 and graph["render.js"], "the import parser found no imports"
    cycle = find_cycle(graph)
    assert cycle is None, "ES-module import cycle: " + " -> ".join(cycle or [])


def test_the_check_finds_a_cycle_across_multiline_imports(tmp_path: Path) -> None:
    (tmp_path / "a.js").write_text('import {\n  x,\n  y,\n} from "./b.js";\nexport const a = 1;\n')
    (tmp_path / "b.js").write_text("// import nothing from './a.js'\nimport './c.js';\n")
    (tmp_path / "c.js").write_text('export { a } from "./a.js";\nconst m = import("./b.js");\n')
    graph = module_graph(tmp_path)
    assert graph == {"a.js": {"b.js"}, "b.js": {"c.js"}, "c.js": {"a.js"}}
    assert find_cycle(graph) == ["a.js", "b.js", "c.js", "a.js"]
    (tmp_path / "c.js").write_text('const m = import("./a.js");\n')
    assert find_cycle(module_graph(tmp_path)) is None
