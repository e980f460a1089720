"""The pages beside the running ``app.py`` are the available ones, wherever that folder is.

Installed, ``app.py`` and ``pages/`` live in ``<prefix>/share/evalboard`` while ``components`` is in
site-packages: every Home card said "Not available in this version yet." (issue 26) because the pages
were looked for beside the package.  Here the dashboard's files are copied to a folder outside the
checkout and run with AppTest (the packages still come from the checkout, with no pages beside
``components`` as in site-packages).
"""

from __future__ import annotations

import shutil

from components.layout import PAGES
from tests.conftest import ROOT
from tests.pages.helpers import run_page

NOT_YET = "Not available in this version yet."


def _share(tmp_path, monkeypatch, pages: list[str]):
    """The dashboard's files (``app.py`` and ``pages``) in ``<prefix>/share/evalboard``; the ``components``
    package is taken to live in ``site-packages`` (no pages beside it), as when installed."""
    site_packages = tmp_path / "prefix" / "lib" / "site-packages"
    site_packages.mkdir(parents=True)
    monkeypatch.setattr("components.layout.ROOT", site_packages)
    share = tmp_path / "prefix" / "share" / "evalboard"
    (share / "pages").mkdir(parents=True)
    shutil.copy(ROOT / "app.py", share / "app.py")
    for name in pages:
        shutil.copy(ROOT / "pages" / name, share / "pages" / name)
    return share


def _links(block) -> list[str]:
    return [link.proto.label for link in block.get("page_link")]


def _home_cards(at) -> dict[str, bool]:
    """Home card label -> whether it links to its page (``False``: "Not available"); ``_not_yet``: how many
    cards say "Not available"."""
    links = _links(at.main)
    return {label: f"Open {label}" in links for _, label, _, _ in PAGES[1:]} | \
        {"_not_yet": [c.value for c in at.caption].count(NOT_YET)}


def test_home_in_an_installed_layout_finds_every_page(tmp_path, monkeypatch):
    share = _share(tmp_path, monkeypatch, [p.name for p in (ROOT / "pages").glob("*.py")])
    at = run_page(str(share / "app.py"), timeout=180, source="demo")
    cards = _home_cards(at)
    assert cards.pop("_not_yet") == 0
    assert all(cards.values()), cards
    # the sidebar lists Home and every page
    assert _links(at.sidebar) == [label for _, label, _, _ in PAGES]


def test_a_page_missing_beside_app_py_is_not_offered(tmp_path, monkeypatch):
    share = _share(tmp_path, monkeypatch, ["2_QA_Factcheck.py"])
    at = run_page(str(share / "app.py"), timeout=180, source="demo")
    cards = _home_cards(at)
    assert cards.pop("_not_yet") == len(PAGES) - 2
    assert cards == {label: path == "pages/2_QA_Factcheck.py" for path, label, _, _ in PAGES[1:]}
    assert _links(at.sidebar) == ["Home", "QA & fact-check"]
