"""Plotly figures for the pages: the builders live in :mod:`evaluators.reports.figures`, shared with the HTML report."""

from evaluators.reports.figures import FONT, confusion_heatmap, metric_by_system, scores_by_document

__all__ = ["FONT", "confusion_heatmap", "metric_by_system", "scores_by_document"]
