"""Demo data written for EvalBoard (not copied from anywhere), one folder per task family.

``demo_path("narrative", "EN_001_fox_v3.json")`` gives the path of a shipped demo file.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def demo_path(*parts: str) -> Path:
    """Path of a file or folder under ``evaluators/demo``.

    Parameters
    ----------
    *parts : str
        Path parts below ``evaluators/demo`` (a task folder, then a file name).

    Returns
    -------
    Path
        Not checked to exist.
    """
    return Path(str(resources.files("evaluators.demo").joinpath(*parts)))
