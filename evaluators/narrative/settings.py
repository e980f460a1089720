"""One narrative configuration, built by one function from command-line options or page widgets.

The CLI (``--min-iou``, ``--n-t``, ``--weights``, ``--relationship-taxonomy``,
``--sentiment-taxonomy``) and the Narrative page's settings widgets both call
:func:`build_config`, so the same choices give the same :class:`NarrativeConfig` (and the
same signature) whichever way they were made.

Rules applied here, once:

- weights name components of :data:`COMPONENTS`; an unnamed component keeps weight 1;
- all weights 0 cannot make an overall score: equal weights are used instead and a
  ``settings`` warning says so (the CLI prints it, the page shows it);
- a user taxonomy file that cannot be read is an ``error`` issue (kind ``taxonomy``) and
  the shipped vocabulary stays in use for that field (the page shows it and scores with
  the shipped one; the CLI stops with exit 2, because the user asked for that file).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from evaluators.io.errors import InputIssue
from evaluators.narrative.base import COMPONENTS, NarrativeConfig
from evaluators.taxonomy import Vocabulary, default_taxonomy, load_relationship_csv, load_sentiment_csv

#: The warning given when every weight is 0.
ALL_ZERO_WEIGHTS = "all component weights are 0; using equal weights"


@dataclass(frozen=True)
class TaxonomyFile:
    """A user vocabulary file: its name (quoted in issues and the signature) and its bytes."""

    name: str
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class NarrativeSettings:
    """A config and the problems met while building it (see :func:`build_config`)."""

    config: NarrativeConfig
    issues: tuple[InputIssue, ...] = ()

    @property
    def has_errors(self) -> bool:
        return any(i.severity == "error" for i in self.issues)


def parse_weights(text: str | None) -> dict[str, float]:
    """``"characters=2,text_span=0"`` -> ``{"characters": 2.0, "text_span": 0.0}`` (others not named).

    Parameters
    ----------
    text : str or None
        Comma-separated ``component=number`` parts (``None`` or ``""``: none).

    Returns
    -------
    dict of str to float

    Raises
    ------
    ValueError
        An unknown component or a part that is not ``component=number``.
    """
    out: dict[str, float] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, _, value = part.partition("=")
        name = name.strip()
        if name not in COMPONENTS:
            raise ValueError(f"unknown component {name!r}; known: {', '.join(COMPONENTS)}")
        try:
            out[name] = float(value)
        except ValueError:
            raise ValueError(f"{part!r} is not component=number") from None
    return out


@lru_cache(maxsize=16)
def _relationship_vocab(name: str, data: bytes) -> tuple[Vocabulary, Vocabulary]:
    return load_relationship_csv(data, name)


@lru_cache(maxsize=16)
def _sentiment_vocab(name: str, data: bytes) -> Vocabulary:
    return load_sentiment_csv(data, name)


def build_config(*, min_iou: float = 0.5, n_t: int = 2, weights: Mapping[str, float] | None = None,
                 relationship_taxonomy: TaxonomyFile | None = None,
                 sentiment_taxonomy: TaxonomyFile | None = None, script: str | None = None) -> NarrativeSettings:
    """The narrative config of these choices, with located problems (see the module docstring).

    Parameters
    ----------
    min_iou : float
        Minimum span IoU to align events, in (0, 1].
    n_t : int
        Near-miss tolerance of boundary similarity, >= 1.
    weights : mapping, optional
        Component -> weight >= 0; components not named keep 1.
    relationship_taxonomy, sentiment_taxonomy : TaxonomyFile, optional
        User vocabularies in the annotation guide's layout (each file read once per content).
    script : str, optional
        OpenCC configuration converting both documents before comparison (off by default; named in
        the signature).

    Returns
    -------
    NarrativeSettings

    Raises
    ------
    ValueError
        An unknown component, a negative weight, ``min_iou`` or ``n_t`` out of range, an unknown
        script configuration.
    """
    issues: list[InputIssue] = []
    w = dict.fromkeys(COMPONENTS, 1.0)
    for name, value in (weights or {}).items():
        if name not in w:
            raise ValueError(f"unknown component {name!r}; known: {', '.join(COMPONENTS)}")
        w[name] = float(value)
    if any(v < 0 for v in w.values()):
        raise ValueError("weights must be >= 0")
    if sum(w.values()) == 0:
        issues.append(InputIssue("settings", ALL_ZERO_WEIGHTS, severity="warning", kind="settings"))
        w = dict.fromkeys(COMPONENTS, 1.0)
    replace = {}
    if relationship_taxonomy is not None:
        try:
            l1, l2 = _relationship_vocab(relationship_taxonomy.name, relationship_taxonomy.data)
            replace.update(relationship_level1=l1, relationship_level2=l2)
        except ValueError as exc:
            issues.append(InputIssue(relationship_taxonomy.name, str(exc), kind="taxonomy"))
    if sentiment_taxonomy is not None:
        try:
            replace["sentiment"] = _sentiment_vocab(sentiment_taxonomy.name, sentiment_taxonomy.data)
        except ValueError as exc:
            issues.append(InputIssue(sentiment_taxonomy.name, str(exc), kind="taxonomy"))
    tax = default_taxonomy()
    if replace:
        tax = tax.with_vocabularies(**replace)
    return NarrativeSettings(NarrativeConfig(min_iou=min_iou, n_t=n_t, weights=w, taxonomy=tax, script=script or None),
                             tuple(issues))
