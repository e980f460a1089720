"""Every number and every missing value is written by evaluators/reports/format.py (issue 27; DESIGN.md).

A missing value reads :data:`evaluators.reports.format.MISSING` ("—") everywhere, never "n/a" / "N/A";
a score is written with :func:`~evaluators.reports.format.number` (``digits=``), a rate with ``percent``, a
difference with ``points``.  This test reads the code of ``evaluators/``, ``components/``, ``pages/`` and
``app.py`` (its syntax tree: docstrings and comments are prose, not output) and fails on

- a string that writes "n/a" as a value (any case),
- an inline number format: an f-string precision spec (``{x:.3f}``, ``{x:+.2f}``, ``{x:.1%}``,
  ``{x:.{n}f}``), a ``%`` format (``"%.3f" % x``), a ``str.format`` template (``"{:.2f}".format(x)``),
  ``format(x, ".3f")``, and ``round(...)`` written into text (inside an f-string or ``str(...)``),

outside ``evaluators/reports/format.py``, except the few places of :data:`ALLOWED`, each with its reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT

#: Where the rule does not apply: ``(file, what the flagged text contains, why)``.
ALLOWED = (
    # Words a model writes to decline a question, recognised in its reply (input, not output).
    ("evaluators/memory/unanswerable.py", "n/a", "a reply word the unanswerable rule recognises"),
    # Below the reports layer (the import contract forbids importing evaluators.reports there): problem texts.
    ("evaluators/io/sources.py", ":,.0f", "a zip's compression ratio in an input problem, layer io"),
    ("evaluators/narrative/text_span.py", ":.3f", "the IoU in a span mismatch's detail, layer narrative"),
    ("evaluators/review/service.py", ".0f", "a review item's EM / F1 label, layer review"),
    ("evaluators/review/service.py", "format(x, '.2f')", "the same label's F1"),
    ("evaluators/judgelab/calibration.py", ":.3f", "the kappas in the overfit warning, layer judgelab"),
    ("evaluators/judgelab/corrected.py", ":.3f", "sensitivity + specificity in a corrected score's note, layer judgelab"),
)

#: Keyword arguments whose strings are formats the browser applies to a number it holds: plotly's d3 / template
#: formats, and Streamlit's ``column_config`` ``format`` (printf-style; the table keeps the number, sorts by it).
BROWSER_FORMAT_ARGUMENTS = frozenset({"tickformat", "texttemplate", "hovertemplate", "valueformat", "yhoverformat",
                                      "xhoverformat", "hoverformat", "format"})

NA = re.compile(r"(?i)(?<![\w/])n/a(?![\w/])")
PRECISION_SPEC = re.compile(r"\.(\d+|\{[^}]*\})[eEfFgG%]|^[^{]*%$")
TEMPLATE = re.compile(r"\{[^{}]*:[^{}]*\.\d+[eEfFgG%]\}")
PERCENT_FORMAT = re.compile(r"%[-+ 0#]*\d*\.\d+[eEfFgG]")
PLOTLY_TEMPLATE = re.compile(r"%\{[^}]*\}")


def _files() -> list[Path]:
    files = [ROOT / "app.py"]
    for folder in ("evaluators", "components", "pages"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return [f for f in files if f != ROOT / "evaluators" / "reports" / "format.py"]


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _spec_text(spec: ast.JoinedStr) -> str:
    """A format spec as text, a nested field as ``{}``: ``.{digits}f`` -> ``.{}f``."""
    return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in spec.values)


def findings(path: Path) -> list[tuple[int, str]]:
    """``(line, what)`` of every missing-value word and inline number format in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    plotly = {id(kw.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
              for kw in node.keywords if kw.arg in BROWSER_FORMAT_ARGUMENTS}
    in_text: set[int] = set()  # nodes written into text: f-string fields and str(...) arguments
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue):
            in_text.update(id(n) for n in ast.walk(node.value))
            if node.format_spec is not None and PRECISION_SPEC.search(_spec_text(node.format_spec)):
                out.append((node.lineno, f"f-string format {{...:{_spec_text(node.format_spec)}}}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str":
            in_text.update(id(n) for arg in node.args for n in ast.walk(arg))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
            if NA.search(text):
                out.append((node.lineno, f"missing value written {NA.search(text).group(0)!r}"))
            if id(node) in plotly:
                continue
            bare = PLOTLY_TEMPLATE.sub("", text)
            if TEMPLATE.search(bare):
                out.append((node.lineno, f"str.format template {TEMPLATE.search(bare).group(0)!r}"))
            if PERCENT_FORMAT.search(bare):
                out.append((node.lineno, f"% format {PERCENT_FORMAT.search(bare).group(0)!r}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "round" and id(node) in in_text:
                out.append((node.lineno, "round(...) written into text"))
            if node.func.id == "format" and len(node.args) == 2 and isinstance(node.args[1], ast.Constant) \
                    and PRECISION_SPEC.search(str(node.args[1].value)):
                out.append((node.lineno, f"format(x, {node.args[1].value!r})"))
    return sorted(set(out))


def _allowed(rel: str, what: str) -> bool:
    return any(rel == file and needle in what for file, needle, _ in ALLOWED)


def test_numbers_and_missing_values_are_written_by_reports_format_only():
    found = [f"{f.relative_to(ROOT)}:{line}: {what}" for f in _files() for line, what in findings(f)
             if not _allowed(str(f.relative_to(ROOT)), what)]
    assert found == [], ("write numbers and missing values with evaluators.reports.format (number, percent, points, "
                         "MISSING):\n" + "\n".join(found))


def test_every_allowed_place_is_still_there():
    """An exception nobody needs any more is removed from ALLOWED, not kept."""
    for file, needle, reason in ALLOWED:
        assert reason and any(needle in what for _, what in findings(ROOT / file)), (file, needle)


def test_the_check_finds_each_kind(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""A docstring saying n/a is prose."""\n'
        'a = f"{x:.3f} {y:+.2f} {z:.1%} {w:.{n}f} {k:,} {s:>8}"\n'
        'b = "n/a" if x is None else "N/A"\n'
        'c = "%.2f" % x\n'
        'd = "{:.4f}".format(x)\n'
        'e = format(x, ".1f")\n'
        'f = f"{round(x, 2)}" + str(round(y))\n'
        'g = round(x, 2)\n'
        'h = dict(tickformat=".0%", hovertemplate="%{y:.3f}", format="%.3f")\n'
        'i = "%{y:.2f}" + "snap/a" + "n/ab"\n',
        encoding="utf-8")
    assert findings(sample) == [
        (2, "f-string format {...:+.2f}"), (2, "f-string format {...:.1%}"), (2, "f-string format {...:.3f}"),
        (2, "f-string format {...:.{}f}"),
        (3, "missing value written 'N/A'"), (3, "missing value written 'n/a'"),
        (4, "% format '%.2f'"),
        (5, "str.format template '{:.4f}'"),
        (6, "format(x, '.1f')"),
        (7, "round(...) written into text"),
    ]
