"""The engine never imports streamlit (DESIGN.md, "Layers")."""

import subprocess
import sys

from tests.conftest import ROOT


def test_import_evaluators_does_not_import_streamlit():
    code = (
        "import sys, importlib, pkgutil, evaluators\n"
        "mods = [m.name for m in pkgutil.walk_packages(evaluators.__path__, 'evaluators.')]\n"
        "skip = ('evaluators.__main__',)\n"
        "for m in mods:\n"
        "    if m not in skip: importlib.import_module(m)\n"
        "print('streamlit' in sys.modules, len(mods))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    imported, n_modules = out.stdout.split()
    assert imported == "False"
    assert int(n_modules) > 5  # the walk really imported the package's modules


def test_cli_help_runs():
    out = subprocess.run([sys.executable, "-m", "evaluators", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0
    assert "python -m evaluators" in out.stdout
