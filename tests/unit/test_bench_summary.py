"""bench/run_all.py's summary: the BENCH_JSON lines the bench scripts print, parsed and judged (no timing here)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.benchjson import emit, emit_check, met, parse  # noqa: E402
from bench.run_all import print_summary  # noqa: E402


def _lines(capsys) -> list[dict]:
    return [parse(line) for line in capsys.readouterr().out.splitlines()]


def test_emit_and_parse_round_trip(capsys):
    emit("narrative / json.loads", [3.0, 4.0, 2.5], unit="x", target="<= 3x", bound=3.0, cpu_rounds=[3.1])
    emit_check("identical bytes", True, target="True", met=True)
    figure, check = _lines(capsys)
    assert figure["rounds"] == [3.0, 4.0, 2.5] and figure["cpu_rounds"] == [3.1]
    assert met(figure) is True  # median 3.0 <= 3.0
    assert check == {"row": "identical bytes", "value": "True", "target": "True", "met": True, "note": ""}
    assert parse("speed-up: 1.2x") is None and parse("BENCH_JSON not json") is None


def test_met_reads_the_direction_and_the_p95(capsys):
    emit("speed-up", [1.6, 1.8, 1.9], unit="x", target=">= 1.7x", bound=1.7, better="higher")
    # 20 clicks: median 100 ms, p95 = the 19th of 20 quantiles = 0.95 * 21 = 19.95th value -> above 500
    emit("clicks", [100.0] * 18 + [900.0, 1000.0], unit="ms", target="p95 <= 500 ms", bound=500, judge="p95")
    speed, clicks = _lines(capsys)
    assert met(speed) is True  # median 1.8 >= 1.7
    assert met(clicks) is False
    with pytest.raises(ValueError):
        emit("x", [1.0], unit="x", target="", bound=1, better="up")


def test_summary_prints_min_median_max_target_and_load(capsys):
    records = [json.loads(json.dumps({"row": "qa / official", "unit": "x", "rounds": [0.5, 0.7, 0.6],
                                      "target": "<= 0.33x", "bound": 0.33, "better": "lower", "note": "n"})),
               {"row": "identical", "value": "True", "target": "True", "met": True, "note": ""}]
    print_summary([("qa", records, (1.25, 2.5), 0), ("pages", [], (2.5, 3.0), 1)], quick=False)
    out = capsys.readouterr().out.splitlines()
    qa = next(line for line in out if "qa / official" in line)
    assert qa.split()[4:8] == ["3", "0.5", "0.6", "0.7"] and "NO" in qa and qa.endswith("1.2-2.5")
    assert any("identical" in line and "yes" in line for line in out)
    assert any("(no figures: exit 1)" in line for line in out)
