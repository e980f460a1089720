"""Logged runs re-scored on the current GT version, from their stored predictions.

A run keeps the GT it was scored against (the ``ground_truth`` column, after the patches of its version) and
its predictions.  The dataset's current version is its newest: the run's patch chain plus the patches logged
since.  Re-scoring applies those later patches to the run's records with the task's own correction rules:
for QA, :func:`evaluators.io.gt_patch.apply_gt_patch` on the records' answers and
:func:`evaluators.qa.patch.rescore` on each changed record, the two steps of ``qa --gt-patch``
(:func:`evaluators.qa.patch.patch_report`), so a re-scored run's values equal those of ``qa FILE --gt-patch
...`` on the same file.

The other built-in tasks' runs, and those of a task plugged in (its command logs the config's simple fields),
keep their input files in the registry (``--log`` of ``testsets``, ``memory``, ``dialogue``, ``narrative`` and
a plugged-in task's command: :func:`evaluators.cli.runlog.log_files`, content-addressed,
:func:`evaluators.runs.store.kept_inputs`); such a run is re-scored by its Task object (a built-in task:
:meth:`~evaluators.tasks.Task.read` of the kept files, then ``run_with_patch``; a plugged-in one:
:func:`evaluators.tasks.run_task` with the patches) with the whole patch chain of the current version, the path
of the command's ``--gt-patch``, so its values equal those of the command run with ``--gt-patch ...`` on the
same files (:class:`TaskRescorer`; the task protocol is passed in, ``tasks=evaluators.tasks``, as the registry
sits below it).  Not kept, so not re-scorable: inputs over
:data:`evaluators.cli.runlog.KEEP_INPUTS_MAX_BYTES`, a narrative folder or zip or one scored with taxonomy files,
dialogue read with ``--model`` or ``--user-dict``, memory judged with ``--judge`` or ``--cache`` (stored judge
labels in the files are re-read).

:data:`RESCORERS` maps a task to its function ``(result, patches, gt_digest) -> RunResult`` (a
:class:`TaskRescorer` takes ``files=`` and ``tasks=`` too, and every patch of the chain); a plugged-in task with
kept inputs gets a :class:`TaskRescorer`; any other task cannot be re-scored (a ``ValueError`` says so).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from evaluators.run_result import ItemTable, RunResult

#: Fields a QA run keeps beside the standard ones so that it can be re-scored exactly (``qa --log`` adds them).
QA_RESCORE_FIELDS = ("prediction_raw",)
#: The config key holding the task a QA file was scored as (``qa`` or ``factcheck``, after detection).
QA_TASK_KEY = "task_detected"


def qa_records(result: RunResult) -> list:
    """A logged QA run's rows as :class:`~evaluators.qa.evaluate.QARecordResult` (id, question, GT answers, raw and
    scored prediction, status, language, EM, F1, the system as its group), in row order: what the QA comparison
    views read (:func:`evaluators.qa.compare.side_by_side`, :func:`~evaluators.qa.compare.compare_records`).

    Raises
    ------
    ValueError
        A run without the QA columns (``question``, ``ground_truth``, ``prediction``, ``status``, the metrics).
    """
    from evaluators.qa.evaluate import QARecordResult

    table = result.items
    f = table.fields
    missing = [c for c in ("question", "ground_truth", "prediction", "status") if c not in f]
    missing += [c for c in ("exact_match", "token_f1") if c not in table.values]
    if missing:
        raise ValueError(f"not a QA run: it lacks {', '.join(missing)}")
    raw = f.get("prediction_raw", f["prediction"])
    lang = table.slices.get("lang", (None,) * len(table))
    return [QARecordResult(n, None, item_id, table.system[n], f["question"][n], tuple(f["ground_truth"][n] or ()),
                           None, raw[n], None, f["prediction"][n], f["status"][n], lang[n], None,
                           table.values["exact_match"][n], table.values["token_f1"][n])
            for n, item_id in enumerate(table.item_id)]


def rescore_qa(result: RunResult, patches: Sequence[tuple[str, bytes]], gt_digest: str) -> RunResult:
    """A logged QA run with GT patches applied and the changed records scored again.

    Parameters
    ----------
    result : RunResult
        As :meth:`evaluators.runs.store.RunStore.load` gives it, logged by ``qa --log`` (with the
        ``prediction_raw`` field and ``config["task_detected"]``).
    patches : sequence of (str, bytes)
        Patch file name and bytes, in order.
    gt_digest : str
        SHA-256 of the GT file the run was scored from (entries bound to a file must name it).

    Returns
    -------
    RunResult
        The same rows; ``exact_match``, ``token_f1``, ``ground_truth``, ``prediction``, ``status`` and the ``lang``
        slice of the patched records changed.

    Raises
    ------
    ValueError
        A run without the fields re-scoring needs, or a patch that cannot be read or is for another GT
        (``GTPatchMismatch``, ``InputError``).
    """
    from evaluators.io.gt_patch import GTPatchSet, apply_gt_patch, check_digest, check_matched
    from evaluators.qa.evaluate import QAConfig
    from evaluators.qa.patch import gold_answers, rescore

    table = result.items
    missing = [f for f in (*QA_RESCORE_FIELDS, "ground_truth", "question", "status") if f not in table.fields]
    if missing or QA_TASK_KEY not in result.config:
        raise ValueError(f"this run cannot be re-scored: it lacks {', '.join(missing) or QA_TASK_KEY} (log it again "
                         "with qa --log)")
    names = {f.name for f in dataclasses.fields(QAConfig)}
    config = QAConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in result.config.items() if k in names})
    task = result.config[QA_TASK_KEY]
    patch_set = GTPatchSet.read(patches)
    check_digest(patch_set.entries, {"the run's GT": gt_digest})
    records = [dataclasses.replace(r, group=None) for r in qa_records(result)]
    entries = [e for e in patch_set.entries if e.keyed or e.gt_digest == gt_digest]
    application = apply_gt_patch(gold_answers(records), entries, gt_digest, refuse_unmatched=False)
    check_matched(patch_set.entries, [application])
    values = {k: list(v) for k, v in table.values.items()}
    fields = {k: list(v) for k, v in table.fields.items()}
    slices = {k: list(v) for k, v in table.slices.items()}
    for n, r in enumerate(records):
        if r.id not in application.answers:
            continue
        new = rescore(r, application.answers[r.id], task, config)
        values["exact_match"][n], values["token_f1"][n] = new.exact_match, new.token_f1
        fields["ground_truth"][n], fields["prediction"][n] = tuple(new.gold_answers), new.prediction
        fields["status"][n] = new.status
        if "lang" in slices:
            slices["lang"][n] = new.lang
    return dataclasses.replace(result, items=ItemTable(table.item_id, table.system, values, slices, fields))


def _testsets_config(config: dict):
    from evaluators.testsets.run import TestSetsConfig

    return TestSetsConfig(kind=config.get("kind"))


def _memory_config(config: dict):
    from evaluators.memory.run import MemoryConfig

    return MemoryConfig(metrics=list(config["metrics"]) if config.get("metrics") else None, ci_resamples=0)


def _dialogue_config(config: dict):
    from evaluators.dialogue.scoring import DialogueConfig

    return DialogueConfig(metrics=tuple(config["metrics"]), weights=dict(config["weights"]), mode=config["mode"],
                          user_dict=config.get("user_dict"))


def _narrative_config(config: dict):
    from evaluators.narrative.base import NarrativeConfig

    return NarrativeConfig(min_iou=config["min_iou"], n_t=config["n_t"], correct_iou=config["correct_iou"],
                           weights=dict(config["weights"]), script=config.get("script"))


def _fields_of(config_type) -> Callable[[dict], object]:
    """A plugged-in task's config from a logged run's config: the values of its fields there (the task command
    logs every simple field, :mod:`evaluators.cli.task`), the defaults for the rest."""
    names = {f.name for f in dataclasses.fields(config_type)}

    def config_of(config: dict) -> object:
        return config_type(**{k: v for k, v in config.items() if k in names})

    return config_of


class TaskRescorer:
    """A logged run scored again by its Task object from the input files it keeps, with a GT patch chain.

    Parameters
    ----------
    task : str
        The registered task's name (:func:`evaluators.tasks.get`).
    config_of : callable
        The run's logged ``config`` (a dict) -> the task's config.
    """

    #: :func:`on_current_gt` gives it the kept files and the whole patch chain, not the later patches only.
    from_inputs = True

    def __init__(self, task: str, config_of: Callable[[dict], object]) -> None:
        self.task, self.config_of = task, config_of

    def __call__(self, result: RunResult, patches: Sequence[tuple[str, bytes]], gt_digest: str, *,
                 files: dict, tasks) -> RunResult:
        """``result`` with the values of its system scored from ``files`` after ``patches``.

        Parameters
        ----------
        result : RunResult
            As :meth:`~evaluators.runs.store.RunStore.load` gives it (one system).
        patches : sequence of (str, bytes)
            Every GT patch of the version, from the raw GT, in order.
        gt_digest : str
            Unused (the patches are checked against the kept GT file's own digest).
        files : mapping of str to InputFile
            The kept input files by role.
        tasks : module
            The task protocol, :mod:`evaluators.tasks` (its ``get`` and ``run_task``; the registry sits below it
            and does not import it).

        Returns
        -------
        RunResult
            The logged run's metadata with the re-scored rows (and the corrections of the patches).

        Raises
        ------
        ValueError
            A patch that cannot be read or is for another GT file, or a system the files no longer give.
        """
        from evaluators.io.gt_patch import GTPatchSet
        from evaluators.runs.store import split_systems

        task = tasks.get(self.task)
        config = self.config_of(result.config)
        patch_set = GTPatchSet.read(patches) if patches else None
        if hasattr(task, "run_with_patch"):  # the built-in tasks (their roles as the command read them)
            inputs = task.read(files)
            scored = task.run_with_patch(inputs, config, patch_set) if patches else task.run(inputs, config)
        else:  # a task plugged in: gold answers -> with_gold, as its command applies --gt-patch
            scored = tasks.run_task(task, files, config, gt_patch=patch_set)
        parts = split_systems(scored)
        system = result.systems[0] if result.systems else None
        if system not in parts and len(parts) == 1:  # one system, named by the task's own default (narrative)
            t = next(iter(parts.values())).items
            items = ItemTable(t.item_id, (system,) * len(t), t.values, t.slices, t.fields)
        elif system in parts:
            items = parts[system].items
        else:
            raise ValueError(f"re-scoring gave the systems {', '.join(parts) or 'none'}, not {system!r}")
        return dataclasses.replace(result, items=items, corrections=scored.corrections)


#: Task -> its re-scoring function.
RESCORERS: dict[str, Callable[..., RunResult]] = {
    "qa": rescore_qa, "testsets": TaskRescorer("testsets", _testsets_config),
    "memory": TaskRescorer("memory", _memory_config), "dialogue": TaskRescorer("dialogue", _dialogue_config),
    "narrative": TaskRescorer("narrative", _narrative_config)}


def on_current_gt(store, name: str, *, tasks=None) -> tuple[RunResult, int]:
    """Run ``name`` re-scored on its dataset's current GT version (as logged when it is on it already).

    Parameters
    ----------
    store : RunStore
    name : str
    tasks : module, optional
        The task protocol, :mod:`evaluators.tasks`, for the runs a :class:`TaskRescorer` re-scores from their
        kept input files (the registry does not import it: it sits above the registry).

    Returns
    -------
    (RunResult, int)
        The run's result on the current GT and that version's number.

    Raises
    ------
    KeyError
        No such run, or a patch whose bytes were not kept.
    ValueError
        The run's GT version is not on the current version's chain, its task has no re-scoring, it was
        logged without its input files, or ``tasks`` is missing where they are needed.
    """
    from evaluators.runs.store import kept_inputs

    record = store.get(name)
    version, chain = store.current_version(record.dataset_digest)
    result = store.load(name)
    if version == record.dataset_version:
        return result, version
    if tuple(chain[:len(record.patch_digests)]) != record.patch_digests:
        raise ValueError(f"run {name}'s GT (v{record.dataset_version}) is not an earlier version of the current "
                         f"GT (v{version})")
    rescorer = RESCORERS.get(record.task)
    if rescorer is None and tasks is not None and kept_inputs(result.digests):  # a task plugged in: its config's
        rescorer = TaskRescorer(record.task, _fields_of(tasks.get(record.task).config_type))  # simple fields logged
    if rescorer is None:
        raise ValueError(f"runs of task {record.task!r} cannot be re-scored yet (re-scoring: {', '.join(RESCORERS)})")
    if getattr(rescorer, "from_inputs", False):  # scored again from the kept files, with the whole chain
        from evaluators.io.sources import InputFile

        kept = kept_inputs(result.digests)
        if tasks is None:
            raise ValueError(f"re-scoring a {record.task} run needs the task: on_current_gt(store, name, "
                             "tasks=evaluators.tasks)")
        if not kept:
            raise ValueError(f"run {name} cannot be re-scored: it was logged without its input files (over the "
                             "size cap, or before they were kept)")
        files = {role: InputFile(file_name, store.input_bytes(d)) for role, (file_name, d) in kept.items()}
        patches = [(f"patch {d[:12]}", store.patch_bytes(d)) for d in chain]
        return rescorer(result, patches, result.digests.get("gt", ""), files=files, tasks=tasks), version
    later = chain[len(record.patch_digests):]
    patches = [(f"patch {d[:12]}", store.patch_bytes(d)) for d in later]
    return rescorer(result, patches, result.digests.get("gt", "")), version


__all__ = ["QA_RESCORE_FIELDS", "QA_TASK_KEY", "RESCORERS", "TaskRescorer", "on_current_gt", "qa_records", "rescore_qa"]
