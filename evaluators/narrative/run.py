"""The narrative run function: inputs + one config -> one :class:`NarrativeReport`.

The Narrative page and ``python -m evaluators narrative`` both call :func:`run_narrative`
and only render or write what it returns, so a page's download equals the CLI's output for
the same files and settings.

>>> from evaluators.narrative.run import NarrativeInputs, run_narrative
>>> from evaluators.narrative.settings import build_config
>>> report = run_narrative(NarrativeInputs.from_paths("gt/", "pred/"), build_config(weights={"text_span": 0}))
... # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from evaluators.io.gt_patch import GTPatchSet
from evaluators.io.sources import InputFile, collect_paths, story_id
from evaluators.narrative.base import DEFAULT_CONFIG, NarrativeConfig
from evaluators.narrative.batch import DocumentOutcome, NarrativeReport, evaluate_batch, score_pairs
from evaluators.narrative.settings import NarrativeSettings


@dataclass(frozen=True)
class NarrativeInputs:
    """The files of one narrative run.

    Attributes
    ----------
    gt, pred : tuple of InputFile
        Ground-truth and prediction files (archives already expanded).
    single_pair : bool
        Pair the one GT file with the one prediction file whatever their names (two single
        JSON files given on the command line); otherwise files are paired by story id.
    gt_patch : GTPatchSet or None
        Review corrections of the GT files (:mod:`evaluators.narrative.patch`): the run is scored
        without and with them.
    """

    gt: tuple[InputFile, ...]
    pred: tuple[InputFile, ...]
    single_pair: bool = False
    gt_patch: GTPatchSet | None = None

    @classmethod
    def from_files(cls, gt: Sequence[InputFile], pred: Sequence[InputFile]) -> NarrativeInputs:
        """Uploaded or collected files, paired by story id.

        Parameters
        ----------
        gt, pred : sequence of InputFile
            The GT and prediction files (zips expanded or not).

        Returns
        -------
        NarrativeInputs
        """
        return cls(tuple(gt), tuple(pred))

    @classmethod
    def from_paths(cls, gt_path: str | Path, pred_path: str | Path) -> NarrativeInputs:
        """Files, folders or zips; two single ``.json`` files are paired with each other.

        Parameters
        ----------
        gt_path, pred_path : str or Path
            A file, a folder or a zip of each side.

        Returns
        -------
        NarrativeInputs

        Raises
        ------
        FileNotFoundError
            If a path does not exist.
        """
        gt, pred = collect_paths(gt_path), collect_paths(pred_path)
        single = all(Path(x).is_file() and Path(x).suffix.lower() == ".json" for x in (gt_path, pred_path))
        return cls(tuple(gt), tuple(pred), single_pair=single and bool(gt) and bool(pred))


def run_narrative(inputs: NarrativeInputs, config: NarrativeSettings | NarrativeConfig | None = None, *,
                  progress: Callable[[int, int, str], None] | None = None, workers: int = 1,
                  render: Callable[[DocumentOutcome], str] | None = None,
                  on_document: Callable[[DocumentOutcome], None] | None = None) -> NarrativeReport:
    """Score every readable pair of ``inputs`` with ``config``.

    Parameters
    ----------
    inputs : NarrativeInputs
    config : NarrativeSettings or NarrativeConfig, optional
        From :func:`evaluators.narrative.settings.build_config` (its issues, e.g. all weights 0,
        are carried into the report's ``issues``); default settings when omitted.
    progress : callable, optional
        ``progress(done, total, story_id)`` after each pair.
    workers : int
        Worker processes (:func:`evaluators.narrative.batch.score_pairs`); the report is the same.
    render : callable, optional
        ``render(outcome) -> str`` run where each document is scored (a worker), kept in
        ``outcome.rendered``: a report writer's per-document part, written in parallel.
    on_document : callable, optional
        Called with each document's outcome in input order as soon as it is scored (streamed writes).

    Returns
    -------
    NarrativeReport
        With ``inputs.gt_patch``: the run with the corrections, its ``before`` (without them) and
        ``corrections`` (what each patch line did; overall and component scores before and after,
        document by document: bootstrap intervals and the paired test).

    Raises
    ------
    GTPatchMismatch
        With ``inputs.gt_patch``, when none of its lines was made for a GT file of the run.
    """
    if inputs.gt_patch:
        return _run_with_patch(inputs, config, progress=progress, workers=workers, render=render,
                               on_document=on_document)
    if isinstance(config, NarrativeSettings):
        cfg, settings_issues = config.config, list(config.issues)
    else:
        cfg, settings_issues = config or DEFAULT_CONFIG, []
    if inputs.single_pair:
        g, p = inputs.gt[0], inputs.pred[0]
        report = score_pairs([(story_id(g.name), g, p)], cfg, progress, workers=workers, render=render,
                             on_document=on_document)
    else:
        report = evaluate_batch(list(inputs.gt), list(inputs.pred), cfg, progress, workers=workers, render=render,
                                on_document=on_document)
    if settings_issues:
        report = replace(report, issues=settings_issues + list(report.issues))
    return report


def _run_with_patch(inputs: NarrativeInputs, config, **kwargs) -> NarrativeReport:
    """The run before and after ``inputs.gt_patch`` (:mod:`evaluators.narrative.patch`) through
    :func:`evaluators.metrics.before_after.run_before_after`; ``render`` and ``on_document`` see the run
    after the corrections only."""
    from evaluators.metrics.before_after import run_before_after
    from evaluators.narrative.patch import adapter

    quiet = {"workers": kwargs.get("workers", 1)}
    before, after, corrections, issues = run_before_after(
        inputs, inputs.gt_patch, adapter(lambda x: run_narrative(x, config, **quiet),
                                         lambda x: run_narrative(x, config, **kwargs)))
    # lines for no GT file of the run join the report's issues; what each line did is in corrections
    return replace(after, issues=list(after.issues) + list(issues), before=before, corrections=corrections)
