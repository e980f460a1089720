"""The run registry: runs that are kept, their datasets and GT versions, comparisons and trends.

One database holds review sessions and runs (SQLite by default in the data directory, PostgreSQL through
``EVALBOARD_DATABASE_URL``: :func:`evaluators.review.store.default_url`); the registry's tables come with the
review schema's migration ``0005`` (:mod:`evaluators.runs.tables`).

API (what the CLI's ``runs`` command, ``qa --log``, the Runs page and ``bench/runs.py`` call)
-------------------------------------------------------------------------------------------
:class:`~evaluators.runs.store.RunStore` ``(url=None)``:

- ``log_run(result, *, name, who, tags=None, gt_name, gt_digest, patch_digests=(), created_at=None,
  patches=None, inputs=None) -> RunRecord``: keep a :class:`~evaluators.run_result.RunResult` (its per-item table
  as column blobs, :mod:`evaluators.runs.columns`; ``patches``: the GT patch files' bytes by digest, for
  re-scoring; ``inputs``: the input files' bytes by digest, each named in ``result.digests`` as ``input:ROLE``,
  :func:`~evaluators.runs.store.kept_inputs`; ``input_bytes(digest)`` reads one back);
- ``runs(task=None, dataset=None, system=None, tag=None, since=None, accepted=None) -> tuple[RunRecord]``
  in time order; ``get(name) -> RunRecord``; ``datasets() -> tuple[dict]``;
- ``load(name, columns=None) -> RunResult`` (values bit for bit; refuses bytes or values that do not match
  their digest; ``columns``: only those metric/slice/field columns, what a trend or a chart reads);
- ``accept(name)`` (the baseline of its task and dataset), ``delete(name)``;
- ``export(fp)`` / ``import_(fp)``: a portable JSON-lines file, lossless (export -> import into an empty
  database -> export gives the same bytes); an import checks every run's values against its digest;
- ``blob_bytes(name) -> {column: bytes}``: what a run's table costs.

:func:`~evaluators.runs.store.split_systems` ``(result) -> {system: RunResult}``: a multi-system run as one
run per system (what ``qa --log`` logs).

:class:`~evaluators.runs.store.RunRecord`: name, task, unit, dataset, dataset_digest, dataset_version,
patch_digests, predictions_digest, config, signature, who, created_at, tags, accepted, items_digest,
n_items, systems, metrics, summary (the logged :meth:`RunResult.summary` rows as dicts: a chart of means
with intervals needs no load).

:func:`~evaluators.runs.compare.compare_runs` ``(a, b, name_a, name_b, *, min_overlap=0.8, n_resamples=10_000,
seed=0, metrics=None, system_a=None, system_b=None) -> RunsComparison``: two run results on the items both
scored, with the paired tests of ``compare`` (per metric: paired bootstrap, approximate randomization,
McNemar for 0/1 metrics); refused (:class:`~evaluators.runs.compare.TooFewCommon`, "n common = k of a and b")
below ``min_overlap``.

:func:`~evaluators.runs.trend.trend` ``(runs, metrics, *, slices=(), correction="holm", alpha=0.05,
test="randomization", n_resamples=10_000, point_resamples=None, seed=0, min_overlap=0.8, system=None,
intervals=True, noise_bands=None) -> Trend`` (``points``: TrendPoint run/index/metric/slice/slice_value/n/
mean/ci_low/ci_high; ``steps``: TrendStep run_a/run_b/n_common/joined/reason/flagged/tests, each StepTest
with delta, paired bootstrap interval, p_value, p_adjusted, flagged): ``runs`` a sequence of ``(name,
RunResult)`` in time order; each point with its bootstrap interval, each step between consecutive runs
tested on their common items, the p-values of a step's metrics x slices adjusted together (Holm or
Benjamini-Hochberg) and the step flagged only when one survives.  For "as scored" and "on the current GT"
lines, call it on ``store.load`` results and on ``on_current_gt`` results.

:func:`~evaluators.runs.rescore.on_current_gt` ``(store, name, *, tasks=None) -> (RunResult, version)``: a run
re-scored on its dataset's current GT version from its stored predictions and the patches logged since (QA: the
two steps of ``qa --gt-patch``; testsets, memory, dialogue, narrative: the kept input files scored again by the
Task object, ``tasks=evaluators.tasks``; :data:`~evaluators.runs.rescore.RESCORERS` lists the tasks that can
be re-scored);
``RunStore.current_version(dataset) -> (version, patch digests)``, ``RunStore.patch_bytes(digest)``.
:func:`~evaluators.runs.rescore.qa_records` ``(result) -> [QARecordResult]``: a stored QA run in the shape the
QA comparison views read (``evaluators.qa.compare.side_by_side({name: qa_records(r), ...})``: two runs side by
side with compare's numbers).

:mod:`evaluators.runs.noise`: ``noise_floor(repeats, metric) -> NoiseFloor`` (flip rate, flaky items, pass@k,
pass^k, noise band), ``beyond_noise(repeats, candidate, metric) -> NoiseVerdict``, ``flaky_changes(floor, a,
b)``, ``repeat_groups(records)`` (runs sharing task, system, dataset version and config); a trend takes the
bands (``trend(..., noise_bands={metric: band})``).

:mod:`evaluators.runs.leaderboard`: ``latest_by_system(records)`` (each system's latest run) and
``leaderboard(latest, metric) -> Leaderboard`` (ranked rows with bootstrap intervals and tiers of systems the
data cannot tell apart: randomization tests against each tier's leader, Holm).

Writers of these objects (JSON and terminal text) are in :mod:`evaluators.reports.runs`.
"""

from evaluators.runs.columns import CorruptBlob
from evaluators.runs.store import RunExists, RunRecord, RunStore, split_systems

__all__ = ["CorruptBlob", "RunExists", "RunRecord", "RunStore", "split_systems"]
