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


def script_effect(runs: Mapping[str, Sequence[Any]], script: str, lang: str = "auto") -> list[ScriptChange]:
    """Records whose official EM or F1 changes when texts are converted with OpenCC ``script``.

    ``runs`` are scored *without* conversion (the records hold the original texts); each
    record is scored both ways with the QA report's own rule
    (:func:`evaluators.qa.evaluate.official_scores`: CMRC 2018 for Chinese, SQuAD otherwise,
    the language chosen as the run's ``lang`` setting chooses it).

    Parameters
    ----------
    runs : mapping of str to sequence of QARecordResult or of (id, prediction, references) tuples
        System -> its records, scored without conversion.
    script : str
        OpenCC configuration (``"t2s"``, ``"tw2s"`` ...).
    lang : {"auto", "en", "zh"}
        The run's language setting.

    Returns
    -------
    list of ScriptChange
        One per record whose EM or F1 differs after conversion, by system then record.

    References
    ----------
    OpenCC (https://github.com/BYVoid/OpenCC) for the conversion; SQuAD v1.1 and CMRC 2018 official
    scripts for the scores.
    """
    from evaluators.qa.evaluate import official_scores

    out = []
    for system, items in _records_of(runs).items():
        for rid, (pred, golds) in items.items():
            pc, gc = convert(pred, script), tuple(convert(g, script) for g in golds)
            if pc == pred and gc == golds:
                continue
            before = official_scores(pred, golds, lang)[1:]
            after = official_scores(pred, golds, lang, script)[1:]
            if before != after:
                out.append(ScriptChange(system, rid, pred, pc, golds, gc, before[0], after[0], before[1], after[1]))
    return out
