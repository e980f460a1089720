"""pages/3_Test_Sets.py: the JSON report is written when its button is clicked, not on every rerun."""

from __future__ import annotations

import json

from evaluators.testsets import evaluate as evaluate_mod
from tests.pages.helpers import TESTSETS_PAGE, metric_values, run_page


def test_json_report_is_made_on_click(monkeypatch, deferred_downloads):
    made = deferred_downloads
    to_dict_calls = []
    for cls in (evaluate_mod.SingleTurnReport, evaluate_mod.MultiTurnReport):
        def counted(self, _original=cls.to_dict):
            to_dict_calls.append(type(self).__name__)
            return _original(self)
        monkeypatch.setattr(cls, "to_dict", counted)

    at = run_page(TESTSETS_PAGE)
    at.radio(key="ts_demo").set_value("multi").run()
    assert not at.exception
    buttons = at.get("download_button")  # the JSON report and the per-turn CSV
    assert len(buttons) == 2
    assert all(b.proto.deferred_file_id and not b.proto.url for b in buttons)
    assert to_dict_calls == []  # two runs, no report serialized
    report = json.loads(made["multi_turn_demo_report.json"]().decode("utf-8"))
    assert to_dict_calls == ["MultiTurnReport"]
    assert metric_values(at)["Points covered"] == f"{report['overall']['coverage_micro']:.3f}" == "0.750"
