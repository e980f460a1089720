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


def _contract() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]


def test_the_layer_contract_holds_with_no_exceptions():
    """DESIGN.md's layers as an import-linter contract: any upward import fails this test."""
    config = _contract()
    for contract in config["contracts"]:
        assert "ignore_imports" not in contract and "unmatched_ignore_imports_alerting" not in contract
    out = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                          "sys.exit(lint_imports(config_filename='pyproject.toml'))"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "1 kept, 0 broken" in out.stdout


def test_every_module_of_the_engine_sits_in_a_layer():
    """A new top-level package or module of ``evaluators`` must be placed in the contract, or it escapes it."""
    layered = set()
    for contract in _contract()["contracts"]:
        for layer in contract["layers"]:
            layered.update(name.strip() for name in layer.replace(":", "|").split("|"))
    engine = ROOT / "evaluators"
    top = {f"evaluators.{p.stem}" for p in engine.glob("*.py") if p.stem != "__init__"}
    top |= {f"evaluators.{p.name}" for p in engine.iterdir() if (p / "__init__.py").exists()}
    assert top - layered == set()
    assert "components" in layered
