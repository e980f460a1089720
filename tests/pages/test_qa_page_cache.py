"""The QA page's record tables are cached on the file, settings and filters: a rerun re-derives no record."""

from __future__ import annotations

from evaluators.qa.store import RecordStore
from tests.pages.helpers import QA_PAGE, run_page


def test_a_rerun_re_derives_no_record_and_a_new_filter_does(monkeypatch, empty_result_store):
    calls = []
    original = RecordStore._get

    def counting(self, i):
        calls.append(i)
        return original(self, i)

    monkeypatch.setattr(RecordStore, "_get", counting)
    at = run_page(QA_PAGE)  # the fact-check demo: the records table and the unparsed-predictions table
    assert calls, "the first run builds the tables from the store"
    calls.clear()
    at.run()
    assert not at.exception and calls == []
    next(c for c in at.checkbox if "Errors only" in c.label).check().run()
    assert not at.exception and calls  # a new filter: its rows are derived once
