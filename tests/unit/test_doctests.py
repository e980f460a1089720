"""The examples in the docstrings of ``evaluators`` run and give what they show (``doctest.testmod`` of every
module: pytest's own doctest collection would take ``testset_items`` and the like for tests)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import evaluators

MODULES = sorted(m.name for m in pkgutil.walk_packages(evaluators.__path__, "evaluators.")
                 if ".migrations" not in m.name and not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} docstring examples failed"


def test_the_examples_are_many():
    """The count a module-by-module run finds (not a fixed number: at least the ones written so far)."""
    attempted = sum(doctest.testmod(importlib.import_module(n), verbose=False).attempted for n in MODULES)
    assert attempted >= 100
