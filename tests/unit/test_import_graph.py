"""No import circle among the modules of one package (DESIGN.md, "Layers"; issue 27, "No hidden circles").

The layer contract (tests/unit/test_layering.py) forbids imports up a layer; inside one package (one
folder) nothing forbade ``a`` importing ``b`` while ``b`` imports ``a`` from inside a function, which
hides the circle from the module's first lines.  grimp's graph holds every import statement, those in
function bodies too, so the check below sees them.  A subpackage counts as one module of its parent
(whatever its modules import), and a package's ``__init__`` as one more module of it.

``pages/`` is not a package (Streamlit runs its files by path; ``1_Narrative.py`` is no module name):
its files import ``components`` and ``evaluators`` only, which are checked here.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import grimp

#: The importable packages of the project.
PACKAGES = ("evaluators", "components")


def _member(package: str, module: str) -> str | None:
    """The module of ``package`` that ``module`` is or is inside (``package.__init__`` for the package itself)."""
    if module == package:
        return f"{package}.__init__"
    if not module.startswith(package + "."):
        return None
    return f"{package}.{module[len(package) + 1:].split('.')[0]}"


def _strongly_connected(edges: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The groups of two or more nodes that reach each other (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[tuple[str, ...]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(tuple(sorted(group)))

    for node in sorted(set(edges) | {n for targets in edges.values() for n in targets}):
        if node not in index:
            visit(node)
    return groups


def package_circles(graph: grimp.ImportGraph, roots: Iterable[str]) -> list[tuple[str, ...]]:
    """Every import circle among the modules of one package, for each package under ``roots``.

    Returns
    -------
    list of tuple of str
        Each circle as the sorted names of the package's modules in it, packages in sorted order.
    """
    modules = set(graph.modules)
    packages = sorted(m for m in modules if any(m == r or m.startswith(r + ".") for r in roots)
                      and graph.find_children(m))
    circles = []
    for package in packages:
        edges: dict[str, set[str]] = {}
        for module in graph.find_descendants(package) | {package}:
            source = _member(package, module)
            for imported in graph.find_modules_directly_imported_by(module):
                target = _member(package, imported)
                if target is not None and target != source:
                    edges.setdefault(source, set()).add(target)
        circles += _strongly_connected(edges)
    return circles


def test_no_import_circle_inside_a_package():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert len(graph.modules) > 100  # the whole tree was read
    circles = package_circles(graph, PACKAGES)
    assert circles == [], "import circles inside a package:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_a_circle_hidden_in_a_function_body_is_found(tmp_path, monkeypatch):
    """``b`` imports ``a`` inside a function only, ``a`` imports ``b`` at the top: one circle, in ``circ``;
    the subpackage ``circ.sub`` counts as one module of ``circ`` (its ``deep`` imports ``a``, ``a`` imports it:
    a second member of the same circle); ``c`` imports ``a`` and is imported by nothing: no circle."""
    package = tmp_path / "circ"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from circ import b\nfrom circ.sub import deep\n",
        "b.py": "def later():\n    from circ import a\n    return a\n",
        "c.py": "import circ.a\n",
        "sub/__init__.py": "",
        "sub/deep.py": "def f():\n    import circ.a\n",
    }
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("circ", cache_dir=None)
    assert package_circles(graph, ["circ"]) == [("circ.a", "circ.b", "circ.sub")]
    (package / "b.py").write_text("def later():\n    return None\n", encoding="utf-8")
    (package / "sub" / "deep.py").write_text("", encoding="utf-8")
    sys.modules.pop("circ", None)
    assert package_circles(grimp.build_graph("circ", cache_dir=None), ["circ"]) == []
