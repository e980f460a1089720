"""Every download button leaves the app alone when clicked (issue 20, point 8).

A click that reruns the script gives every deferred download a new file id; the browser still holds
the old ones, so the next click on another button fetched nothing (seen on the QA page after two
downloads and on Review's Export tab).  With ``on_click="ignore"`` a click only downloads; the
browser test ``tests/e2e/test_real_data_walk.py`` clicks them in several orders.
"""

from __future__ import annotations

import pytest

from tests.pages.helpers import DIALOGUE_PAGE, MEMORY_PAGE, NARRATIVE_PAGE, QA_PAGE, TESTSETS_PAGE, run_page

pytestmark = pytest.mark.usefixtures("isolated")


@pytest.mark.parametrize("path, state, at_least", [
    (QA_PAGE, {}, 4), (NARRATIVE_PAGE, {"nar_view": "Downloads"}, 7), (TESTSETS_PAGE, {}, 2),
    (DIALOGUE_PAGE, {}, 3), (MEMORY_PAGE, {}, 5)], ids=["qa", "narrative", "testsets", "dialogue", "memory"])
def test_every_download_button_downloads_without_a_rerun(path, state, at_least):
    at = run_page(path, source="demo", **state)
    buttons = at.get("download_button")
    assert len(buttons) >= at_least
    assert [b.proto.label for b in buttons if not b.proto.ignore_rerun] == []
