"""The Task protocol's types (see :mod:`evaluators.tasks` for what a task provides and what it gets)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from evaluators.io.sources import InputFile
from evaluators.run_result import RunResult


@dataclass(frozen=True)
class InputRole:
    """One input file of a task's run.

    Attributes
    ----------
    name : str
        Its key in :meth:`Task.read`'s mapping and its CLI flag (``--NAME``).
    metavar : str
        Its name in usage lines (``GT``, ``PRED``).
    help : str
        What the file holds.
    is_gt : bool
        The ground truth (GT patches are bound to its bytes).
    required : bool
        A run needs it (an optional input, e.g. stored judge labels, may be left out).
    """

    name: str
    metavar: str
    help: str = ""
    is_gt: bool = False
    required: bool = True


@runtime_checkable
class Task(Protocol):
    """What a task provides (see the module docstring).

    Attributes
    ----------
    name : str
        Lower-case identifier: CLI command, review item ``kind``, registry key.
    title : str
        Shown on pages and in reports.
    unit : str
        What one scored row is (``record``, ``item`` ...).
    roles : tuple of InputRole
        The input files, the ground truth among them.
    config_type : type
        A frozen dataclass with defaults for every field.
    """

    name: str
    title: str
    unit: str
    roles: tuple[InputRole, ...]
    config_type: type

    def read(self, files: Mapping[str, InputFile]) -> Any:
        """Typed inputs from one :class:`~evaluators.io.sources.InputFile` per role; bad lines are located
        problems kept in the inputs (never raised), the good part is kept."""

    def run(self, inputs: Any, config: Any) -> RunResult:
        """Score the inputs: a :class:`~evaluators.run_result.RunResult` whose ``issues`` hold the inputs'
        problems."""
