"""The QA page's record tables are cached on the file, settings and filters: a rerun re-derives no record,
and the first screen (the overview) derives none."""

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
    run_page(QA_PAGE)  # the overview (first screen) shows counts and charts of the report, no record
    assert calls == []
    # the fact-check demo's Records view: the records table and the unparsed-predictions table
    at = run_page(QA_PAGE, qa_view="records")
    assert calls, "the records view builds the tables from the store"
    calls.clear()
    at.run()
    assert not at.exception and calls == []
    next(c for c in at.checkbox if "Errors only" in c.label).check().run()
    assert not at.exception and calls  # a new filter: its rows are derived once
