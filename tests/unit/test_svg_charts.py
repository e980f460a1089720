"""Static SVG charts of the HTML reports (evaluators/reports/svg.py): bars, gaps, colours, escaping."""

from __future__ import annotations

import re

from evaluators.reports.svg import PALETTE, grouped_bars, heatmap


def test_grouped_bars_one_colour_per_series_gaps_for_missing_and_error_bars():
    svg = grouped_bars(["故事一", "story two"], {"f1": [0.5, None], "exact_match": [0.25, 1.0]},
                       {"f1": [0.4, None], "exact_match": [0.1, 0.9]}, {"f1": [0.6, None], "exact_match": [0.3, 1.0]},
                       title="Scores")
    bars = re.findall(r'<rect class="bar" data-series="([^"]+)"[^>]* fill="([^"]+)"', svg)
    # 2 categories x 2 series, one value missing: 3 bars, 1 gap marked "—"
    assert bars == [("f1", PALETTE[0]), ("exact_match", PALETTE[1]), ("exact_match", PALETTE[1])]
    assert svg.count('class="gap"') == 1 and svg.count('class="errorbar"') == 3
    assert "故事一 · f1: 0.500 (95% CI 0.400 – 0.600)" in svg  # the tooltip holds the exact value
    assert svg.count('class="legend-swatch"') == 2 and "<figcaption>Scores</figcaption>" in svg


def test_chart_labels_are_escaped():
    svg = grouped_bars(['<img src=x onerror="alert(1)">'], {"<b>s</b>": [0.5]})
    assert "<img" not in svg and "<b>" not in svg
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in svg and "&lt;b&gt;s&lt;/b&gt;" in svg
    grid = heatmap(["真", "<i>F</i>"], ["T", "F"], [[3, 1], [0, 4]], normalize_rows=True)
    assert "<i>" not in grid and grid.count('class="cell"') == 4
    assert "75% (3)" in grid and "100% (4)" in grid  # 3 of 4 in the first row, 4 of 4 in the second


def test_the_legend_sits_under_the_longest_rotated_label():
    import re

    from evaluators.reports.svg import grouped_bars

    # 3 groups x 2 series: bars 40 wide, groups 40 * 2 + 40 = 120 wide, so a label over 120 / 7 = 17
    # characters is rotated by 40 degrees.  "03. Meeting a new friend" has 24 narrow characters (about
    # 7 units each): 168 units long, dropping 0.65 * 168 + 20 = 129.2 under the axis (it was 90, and the
    # label ran into the legend).  The axis is at 14 + 240 = 254: the legend row at 254 + 129.2 = 383.2.
    svg = grouped_bars(["01. 竹林野餐", "02. 下雨天", "03. Meeting a new friend"],
                       {"panda-chat-large": [0.48, 0.63, 0.6], "panda-chat-small": [0.18, 0.35, 0.1]})
    assert re.findall(r'<rect class="legend-swatch" x="[\d.]+" y="([\d.]+)"', svg) == ["383.2", "383.2"]
    # one series: groups 40 + 40 = 80 wide, labels over 80 / 7 = 11 characters rotated; the longest,
    # 14 narrow characters (98 units) drop 0.65 * 98 + 20 = 83.7 and six wide ones (72 units) 66.8,
    # both under 90: the legend stays at 254 + 90 = 344
    short = grouped_bars(["竹林野餐野餐", "下雨天", "x" * 14], {"a": [0.1, 0.2, 0.3]})
    assert re.findall(r'<rect class="legend-swatch" x="[\d.]+" y="([\d.]+)"', short) == ["344"]
