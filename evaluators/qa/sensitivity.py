"""Rank sensitivity of QA runs, and which records move under script conversion (issue 31).

:func:`rank_sensitivity` is the shared engine (:mod:`evaluators.metrics.sensitivity`, one for
QA, persona and long memory), re-exported here with QA's metrics (token F1, exact match,
ROUGE-L) as the default.

:func:`script_effect` lists the records whose official QA score (CMRC 2018 / SQuAD EM and F1)
changes when prediction and gold answers are converted between Traditional and Simplified
Chinese with an OpenCC configuration, each with the texts before and after conversion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.metrics import cmrc, squad
from evaluators.metrics.sensitivity import (  # noqa: F401  (re-exported: the QA names of the shared engine)
    METRICS as ALL_METRICS,
    QA_METRICS as METRICS,
    SIGNATURE,
    RankFlip,
    SensitivityReport,
    SystemScore,
    Tokenization,
    _records_of,
    rank_sensitivity,
    tokenizations,
)
from evaluators.results import DictMixin
from evaluators.text.script import convert


# ---------------------------------------------------------------------------------------------------------------
# script conversion: which records move


@dataclass(frozen=True)
class ScriptChange(DictMixin):
    """A record whose official QA score changes under script conversion, with the texts both ways."""

    system: str
    id: str
    prediction: str
    prediction_converted: str
    gold: tuple[str, ...]
    gold_converted: tuple[str, ...]
    exact_match_before: float
    exact_match_after: float
    token_f1_before: float
    token_f1_after: float

    @property
    def explanation(self) -> str:
        """One line: which characters conversion changed (``著->着``) in the prediction and the gold answers."""
        diffs: list[str] = []
        for before, after in [(self.prediction, self.prediction_converted), *zip(self.gold, self.gold_converted)]:
            for x, y in zip(before, after):
                if x != y and f"{x}->{y}" not in diffs:
                    diffs.append(f"{x}->{y}")
            if len(before) != len(after):
                diffs.append(f"{before}->{after}")
        return ", ".join(diffs) or "no character changed"


def _official(prediction: str, golds: tuple[str, ...]) -> tuple[float, float]:
    if any(cmrc_has_cjk(x) for x in (prediction, *golds)):
        return cmrc.cmrc_scores(prediction, golds)
    return squad.squad_scores(prediction, golds)


def cmrc_has_cjk(text: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" for ch in text)


def script_effect(runs: Mapping[str, Sequence[Any]], script: str) -> list[ScriptChange]:
    """Records whose official EM or F1 changes when texts are converted with OpenCC ``script``.

    ``runs`` are scored *without* conversion (the records hold the original texts); each
    record is scored both ways with the QA task's official rules (CMRC 2018 for Chinese,
    SQuAD otherwise).
    """
    out = []
    for system, items in _records_of(runs).items():
        for rid, (pred, golds) in items.items():
            pc, gc = convert(pred, script), tuple(convert(g, script) for g in golds)
            if pc == pred and gc == golds:
                continue
            before, after = _official(pred, golds), _official(pc, gc)
            if before != after:
                out.append(ScriptChange(system, rid, pred, pc, golds, gc, before[0], after[0], before[1], after[1]))
    return out
