"""README's "Run the tests" counts the suite it describes (issue 26: it said "about 1,170 tests" where there
were 1,637, and later "about 1,930" where there were 2,467).

The counts are those of the tests collected in the session (``tests/conftest.py``, before ``-k`` or ``-m``
deselect any), so the check runs where the whole suite is collected: ``python -m pytest`` (CI), or
``python -m pytest -k readme_counts`` to run it alone. A number stated "about" may be off by 10%.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import COLLECTED, ROOT

#: The test folders of the whole suite.
SUITE = {"unit", "pages", "e2e", "real", "hostile"}
#: (what, the README's wording with the number as a group, which count it states)
STATED = (
    ("tests in the whole suite", r"The whole suite is about ([\d,]+) tests", "total"),
    ("browser tests (marker e2e)", r"\(marker `e2e`, about ([\d,]+)", "e2e"),
    ("page tests", r"the ([\d,]+) page tests \(`tests/pages`", "pages"),
)
TOLERANCE = 0.10


def count_problems(readme: str, counts: dict) -> list[str]:
    """What the README states that the collected ``counts`` (:data:`tests.conftest.COLLECTED`) do not bear out."""
    problems = []
    for what, pattern, key in STATED:
        match = re.search(pattern, readme)
        if match is None:
            problems.append(f"README no longer states the number of {what} ({pattern!r})")
            continue
        stated = int(match.group(1).replace(",", ""))
        actual = counts["folders"].get(key, 0) if key == "pages" else counts[key]
        if abs(stated - actual) > TOLERANCE * actual:
            problems.append(f"README says {stated:,} {what}, the suite has {actual:,}")
    return problems


def test_a_stale_count_is_named_with_the_actual_one():
    # the README of this walk and of its closing commit, against the counts of 2026-11-27
    counts = {"total": 2467, "e2e": 51, "folders": {"pages": 306}}
    readme = ("The whole suite is about 1,930 tests and takes a while ... (marker `e2e`, about 45, each ...) "
              "... the 166 page tests (`tests/pages`, Streamlit's AppTest)")
    assert count_problems(readme, counts) == ["README says 1,930 tests in the whole suite, the suite has 2,467",
                                              "README says 45 browser tests (marker e2e), the suite has 51",
                                              "README says 166 page tests, the suite has 306"]
    # within 10%: 2,250 of 2,467 is 8.8% low, 47 of 51 is 7.8%, 300 of 306 2.0%
    readme = readme.replace("1,930", "2,250").replace("about 45", "about 47").replace("166", "300")
    assert count_problems(readme, counts) == []
    first = count_problems("no numbers", counts)[0]
    assert first.startswith("README no longer states the number of tests in the whole suite")


def test_the_readme_counts_the_suite_it_describes(request):
    counts = request.config.stash.get(COLLECTED, None)
    if counts is None or not SUITE <= set(counts["folders"]):
        pytest.skip("counts the whole suite: runs where it is collected (python -m pytest [-k readme_counts])")
    assert count_problems((ROOT / "README.md").read_text(encoding="utf-8"), counts) == []
