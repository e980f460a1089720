"""Registry of the metrics shared by every task family (QA, test sets, dialogue, memory ...).

Every metric is a :class:`Metric`: a name, a description, its range, a signature
string (tokenizer + normalization + library version), the optional packages it needs
and how to install them.  ``score(prediction, reference)`` returns a float (``None`` only
for a keywords metric given no keyword); a metric
whose optional dependency, model or data is missing raises :class:`MetricUnavailable`
(whose message names the install command) instead of returning 0.

One name, one definition, in every task: a report's metric key is the registered name.

Registered text-pair metrics (a prediction against a reference text; :func:`list_metrics`):
``exact_match_normalized``, ``token_f1_char``, ``exact_match_squad``, ``token_f1_squad``
(SQuAD v1.1), ``exact_match_cmrc``, ``token_f1_cmrc`` (CMRC 2018), ``fuzzy_ratio``,
``edit_similarity``, ``keyword_jaccard``, ``rouge1``, ``rouge2``, ``rougeL``, ``bleu1``,
``bleu2``, ``bleu4``, ``meteor``, ``semantic_similarity``, ``bert_f1``.  Some have modes (for
example ``get_metric("fuzzy_ratio", mode="difflib")``, the earlier persona script's definition).
Metrics whose reference is not a text say so in :attr:`Metric.reference`:
``keyword_recall`` (a list of keywords: the test sets' keyword score).

Scoring many metrics of one pair: :func:`score_pair` / :class:`PairScorer` build one
:class:`~evaluators.text.tokenize.TextView` per side, so each tokenizer runs once per
text whatever the number of metrics.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from evaluators.text.tokenize import TextView

#: Install command named by every "unavailable" message of an optional metric.
OPTIONAL_INSTALL = "pip install -r requirements-optional.txt"

#: Display order of the built-in metrics (metrics registered by others follow, in registration order).
CANONICAL_ORDER = ("exact_match_normalized", "token_f1_char", "exact_match_squad", "token_f1_squad",
                   "exact_match_cmrc", "token_f1_cmrc", "fuzzy_ratio", "edit_similarity", "keyword_jaccard", "rouge1",
                   "rouge2", "rougeL", "bleu1", "bleu2", "bleu4", "meteor", "semantic_similarity", "bert_f1",
                   "keyword_recall")

#: Modules defining metrics; imported on first use of the registry.
_METRIC_MODULES = ("evaluators.metrics.overlap", "evaluators.metrics.similarity", "evaluators.metrics.embeddings",
                   "evaluators.metrics.answers", "evaluators.metrics.keywords")

#: The earlier evaluation script whose definitions the ``difflib`` mode keeps (named in those metrics' ``source``).
PERSONA_SCRIPT = "the persona-dialogue evaluation script EvalBoard replaced"

#: What a metric's reference is: a text (the default; scored on :class:`TextView` pairs, also many at once by
#: :class:`PairScorer`) or a list of keywords (``fn(prediction: str, keywords: Sequence[str])``).
REFERENCES = ("text", "keywords")


class MetricUnavailable(ImportError):
    """A metric cannot be computed here: an optional package, model or data set is missing.

    The message says what is missing and names the install command.  Callers show it
    (``unavailable: ...``); they never turn it into a score of 0.
    """


@dataclass(frozen=True)
class Metric:
    """One registered metric (a text-pair metric unless ``reference`` says otherwise).

    Attributes
    ----------
    name : str
        Registered name (``"rouge1"`` ...).
    description : str
        One line: what is compared and how, with its source (paper or official script).
    range : tuple of float
        ``(low, high)`` of the score, e.g. ``(0.0, 1.0)`` or ``(-1.0, 1.0)`` for a cosine.
    signature : str
        Tokenizer, normalization, matching rule and library version behind the number.
    requires : tuple of str
        Optional Python packages (import names) the metric needs; empty for core metrics.
    install_hint : str
        How to enable the metric when it is unavailable.
    mode : str
        ``"default"``, or the mode in which this metric replaces ``variant_of`` (``"difflib"``:
        the earlier persona script's definitions).
    variant_of : str or None
        For a mode variant: the default metric it replaces in that mode.  A variant has its
        own name (the rule is in the name: ``exact_match_strip``), so a score's key always
        names its definition.
    reference : {"text", "keywords"}
        What the metric compares the prediction with: a reference text (default), or a list of
        keywords (:data:`REFERENCES`).  Only ``"text"`` metrics are listed by :func:`list_metrics`
        and scored by :class:`PairScorer`.
    source : str
        Where the definition comes from: the paper, the official script or the earlier script it
        reproduces, and the library it is computed with (:meth:`info`'s ``source``; every built-in
        metric has one, tested).
    fn : callable
        ``(prediction: TextView, reference: TextView) -> float`` for a ``"text"`` reference;
        ``(prediction: str, keywords: Sequence[str]) -> float | None`` for ``"keywords"``.  Not
        part of equality.
    check : callable or None
        ``() -> str | None``: the reason the metric is unavailable beyond missing
        packages (missing model or data), or ``None`` when it can run.
    from_counts : callable or None
        ``(counts) -> float``: the same value from the counts ``counter`` makes of a pair (one
        tokenization and one n-gram count per pair for every such metric, see :class:`PairScorer`);
        ``None`` for other metrics.
    counter : callable or None
        ``(prediction: str, reference: str, max_n: int, lcs: bool) -> counts``: what counts a pair
        for ``from_counts`` (:func:`evaluators.metrics.overlap.overlap_counts`, which returns an
        ``OverlapCounts``); given by the module defining the metric, so the registry imports no metric
        module; ``None`` when ``from_counts`` is.
    counts_order : int
        Highest n-gram order ``from_counts`` reads (0: none).
    counts_lcs : bool
        ``from_counts`` reads the LCS length.
    with_tokenizer : callable or None
        ``(tokenizer) -> Metric``: the same metric scored with another jieba setup (a
        :class:`~evaluators.text.tokenize.Tokenizer` from :func:`evaluators.text.provenance.jieba_tokenizer`,
        e.g. with a user dictionary), its signature naming that setup; ``None`` for metrics that do
        not use jieba.
    """

    name: str
    description: str
    range: tuple[float, float]
    signature: str
    requires: tuple[str, ...] = ()
    install_hint: str = ""
    mode: str = "default"
    variant_of: str | None = None
    reference: str = "text"
    source: str = ""
    fn: Callable[[TextView, TextView], float] | None = field(default=None, repr=False, compare=False)
    check: Callable[[], str | None] | None = field(default=None, repr=False, compare=False)
    from_counts: Callable[[Any], float] | None = field(default=None, repr=False, compare=False)
    counts_order: int = field(default=0, repr=False, compare=False)
    counts_lcs: bool = field(default=False, repr=False, compare=False)
    counter: Callable[[str, str, int, bool], Any] | None = field(default=None, repr=False, compare=False)
    with_tokenizer: Callable[[Any], "Metric"] | None = field(default=None, repr=False, compare=False)

    def unavailable_reason(self) -> str | None:
        """Why the metric cannot run here (with the install hint), or ``None`` if it can."""
        missing = [pkg for pkg in self.requires if importlib.util.find_spec(pkg) is None]
        if missing:
            hint = self.install_hint or OPTIONAL_INSTALL
            return f"unavailable: missing package(s) {', '.join(missing)}; install: {hint}"
        if self.check is not None:
            reason = self.check()
            if reason:
                hint = self.install_hint or OPTIONAL_INSTALL
                # a reason that already names the install command is not followed by it a second time
                return f"unavailable: {reason}" + ("" if hint in reason else f"; install: {hint}")
        return None

    def is_available(self) -> bool:
        """True when the metric's packages, models and data are present."""
        return self.unavailable_reason() is None

    def score_views(self, prediction: TextView, reference: TextView) -> float:
        """Score two already-built views (tokenizations are reused).

        Parameters
        ----------
        prediction, reference : TextView
            The two texts, each tokenized at most once per tokenizer whatever the metrics.

        Returns
        -------
        float
            A value within ``self.range``.

        Raises
        ------
        MetricUnavailable
            A package, model or data set the metric needs is missing.
        ValueError
            The metric's reference is not a text (``self.reference``).
        """
        if self.reference != "text":
            raise ValueError(f"{self.name}: its reference is {self.reference}, not a text; use score()")
        reason = self.unavailable_reason()
        if reason:
            raise MetricUnavailable(f"{self.name}: {reason}")
        assert self.fn is not None
        return float(self.fn(prediction, reference))

    def score(self, prediction: str, reference: str | Sequence[str]) -> float | None:
        """Score a prediction against its reference.

        Parameters
        ----------
        prediction : str
            Raw text (Chinese, English or mixed); ``None`` counts as ``""``.
        reference : str, or sequence of str
            A raw text for a ``"text"`` metric; the keywords, shape (n_keywords,), for a
            ``"keywords"`` one (:attr:`reference`).

        Returns
        -------
        float or None
            A value within ``self.range``; ``None`` only from a ``"keywords"`` metric given no
            keyword (nothing to score is not a 0).

        Raises
        ------
        MetricUnavailable
            A package, model or data set the metric needs is missing.
        """
        if self.reference == "text":
            return self.score_views(TextView(prediction), TextView(reference))
        reason = self.unavailable_reason()
        if reason:
            raise MetricUnavailable(f"{self.name}: {reason}")
        assert self.fn is not None
        value = self.fn(prediction or "", reference)
        return None if value is None else float(value)

    def info(self) -> dict:
        """JSON-ready description (name, range, signature, source, availability) for reports and pages.

        ``reference`` is what the prediction is compared with (``"text"`` or ``"keywords"``), ``source``
        the paper or official script behind the definition.
        """
        reason = self.unavailable_reason()
        return {
            "name": self.name, "mode": self.mode, "description": self.description, "range": list(self.range),
            "reference": self.reference, "source": self.source, "signature": self.signature, "requires": list(self.requires), "install_hint": self.install_hint,
            "available": reason is None, "unavailable_reason": reason,
        }


_REGISTRY: dict[str, Metric] = {}
_VARIANTS: dict[tuple[str, str], Metric] = {}  # (default metric's name, mode) -> variant
_VARIANT_NAMES: dict[str, Metric] = {}  # a variant by its own name
_loaded = False
_load_lock = threading.RLock()  # re-entrant: the imported modules call register()


def _ensure_loaded() -> None:
    """Import the modules that register the built-in metrics, once (thread-safe).

    ``_loaded`` is set only after every import succeeded, so a thread arriving meanwhile
    waits on the lock instead of seeing a half-filled registry.
    """
    global _loaded
    if _loaded:
        return
    with _load_lock:
        if _loaded:
            return
        for module in _METRIC_MODULES:
            importlib.import_module(module)
        _loaded = True


def register(metric: Metric, *, replace_existing: bool = False) -> Metric:
    """Add a metric (its ``mode`` decides whether it is the default or a variant).

    Parameters
    ----------
    metric : Metric
        The metric; ``mode="default"`` registers the name itself, any other mode a variant
        reachable with ``get_metric(name, mode=...)``.
    replace_existing : bool
        Allow replacing a metric already registered under the same name and mode.

    Returns
    -------
    Metric
        The metric, for use as a decorator-free one-liner.

    Raises
    ------
    ValueError
        The name (and mode) is already registered and ``replace_existing`` is false, or the
        metric's ``reference`` is not one of :data:`REFERENCES`.
    """
    if metric.reference not in REFERENCES:
        raise ValueError(f"metric {metric.name!r}: reference must be one of {REFERENCES}, got {metric.reference!r}")
    if metric.mode == "default":
        if metric.name in _REGISTRY and not replace_existing and _REGISTRY[metric.name] is not metric:
            raise ValueError(f"metric {metric.name!r} is already registered")
        _REGISTRY[metric.name] = metric
    else:
        if not metric.variant_of:
            raise ValueError(f"variant {metric.name!r} (mode {metric.mode!r}) must name the metric it replaces")
        key = (metric.variant_of, metric.mode)
        if key in _VARIANTS and not replace_existing and _VARIANTS[key] is not metric:
            raise ValueError(f"metric {metric.variant_of!r} mode {metric.mode!r} is already registered")
        _VARIANTS[key] = metric
        _VARIANT_NAMES[metric.name] = metric
    return metric


def get_metric(name: str, mode: str | None = None) -> Metric:
    """The metric registered as ``name`` (and ``mode``; ``None``/"default" for the default).

    ``name`` may also be a variant's own name (``exact_match_strip``).  In a mode, the
    returned metric's ``name`` is the variant's: score keys always name the definition.

    A mode that a metric does not define falls back to its default definition only when
    the mode is ``"difflib"`` and the metric has no difflib variant (for example
    ``edit_similarity``, which the earlier script never computed correctly).

    Parameters
    ----------
    name : str
        A registered name (:func:`metric_names`) or a variant's own name.
    mode : str, optional
        ``None`` or ``"default"`` for the default definition, else a mode of :func:`metric_modes`.

    Returns
    -------
    Metric
        The definition asked for (the first import of the registry loads the built-in metrics).

    Raises
    ------
    KeyError
        Unknown name or mode; the message lists the known names (or modes).

    Examples
    --------
    >>> get_metric("exact_match_normalized", mode="difflib").name
    'exact_match_strip'
    """
    _ensure_loaded()
    if name in _VARIANT_NAMES:  # a variant asked for by its own name
        return _VARIANT_NAMES[name]
    if name not in _REGISTRY:
        raise KeyError(f"unknown metric {name!r}; known metrics: {', '.join(metric_names())}")
    if mode in (None, "default"):
        return _REGISTRY[name]
    if (name, mode) in _VARIANTS:
        return _VARIANTS[(name, mode)]
    if mode == "difflib":
        return _REGISTRY[name]
    raise KeyError(f"metric {name!r} has no mode {mode!r}; modes: {', '.join(metric_modes(name))}")


def metric_modes(name: str) -> list[str]:
    """Modes available for ``name`` (``"default"`` first).

    Parameters
    ----------
    name : str
        A registered metric name (not checked: an unknown name has ``["default"]``).

    Returns
    -------
    list of str
        ``"default"`` then the modes of its variants, in registration order.

    Examples
    --------
    >>> metric_modes("fuzzy_ratio")
    ['default', 'difflib']
    """
    _ensure_loaded()
    return ["default"] + [m for (n, m) in _VARIANTS if n == name]


def list_metrics(reference: str | None = "text") -> list[Metric]:
    """The default metrics: the built-in ones in ``CANONICAL_ORDER``, then others as registered.

    Parameters
    ----------
    reference : {"text", "keywords"} or None
        Only the metrics with this kind of reference (:attr:`Metric.reference`); the default lists
        the text-pair metrics (what a page or :class:`PairScorer` can score on two texts); ``None``
        lists every metric.
    """
    _ensure_loaded()
    rank = {n: i for i, n in enumerate(CANONICAL_ORDER)}
    # sorted() is stable: names outside CANONICAL_ORDER keep their registration order.
    names = sorted(_REGISTRY, key=lambda n: rank.get(n, len(rank)))
    return [_REGISTRY[n] for n in names if reference is None or _REGISTRY[n].reference == reference]


def metric_names(reference: str | None = "text") -> list[str]:
    """Names of the default metrics in :func:`list_metrics` order (``CANONICAL_ORDER``, then as registered).

    ``reference`` as :func:`list_metrics` (``None``: every registered name).
    """
    return [m.name for m in list_metrics(reference)]


class PairScorer:
    """Scores a fixed set of metrics on many pairs, tokenizing each text once.

    Parameters
    ----------
    names : iterable of str, optional
        Metric names (default: every registered metric).
    modes : dict, optional
        ``{name: mode}``; names not listed use their default definition.  ``mode="difflib"``
        given as a string applies to every metric that has a difflib variant.
    user_dict : str, optional
        Path of a jieba user dictionary: the jieba metrics (those with ``with_tokenizer``:
        ``keyword_jaccard``) are scored with it loaded, their signatures naming it.

    Raises
    ------
    KeyError
        An unknown metric name or mode (:func:`get_metric`).

    Attributes
    ----------
    metrics : dict
        ``{name: Metric}`` in the order given, keyed by the metric's own name (a mode's
        variant replaces the name asked for: ``exact_match_normalized`` in difflib mode is
        scored as ``exact_match_strip``).
    resolved : dict
        ``{name asked for: name scored}``.
    unavailable : dict
        ``{name: reason}`` of metrics that cannot run here; their scores are ``None``.
    """

    #: Distinct counts whose values are kept (:meth:`score`).
    COUNTS_MEMO = 1 << 16

    def __init__(self, names: Iterable[str] | None = None, modes: dict[str, str] | str | None = None,
                 user_dict: str | None = None):
        _ensure_loaded()
        names = list(names) if names is not None else metric_names()
        if isinstance(modes, str):
            modes = {n: modes for n in names}
        modes = modes or {}
        self.metrics: dict[str, Metric] = {}
        self.resolved: dict[str, str] = {}
        for n in names:
            m = get_metric(n, modes.get(n))
            if m.reference != "text":
                raise ValueError(f"metric {n!r} compares with {m.reference}, not a reference text: score it with "
                                 "Metric.score")
            if user_dict and m.with_tokenizer is not None:  # the jieba metrics with the user dictionary loaded
                from evaluators.text.provenance import jieba_tokenizer

                m = m.with_tokenizer(jieba_tokenizer(user_dict=user_dict))
            self.metrics[m.name] = m
            self.resolved[n] = m.name
        self.unavailable: dict[str, str] = {}
        for n, m in self.metrics.items():
            reason = m.unavailable_reason()
            if reason:
                self.unavailable[n] = reason
        self._runnable = [(n, m.fn) for n, m in self.metrics.items() if n not in self.unavailable]
        # Every metric computable from the counts of one counter: :meth:`score` counts once per pair for all of them.
        by_counts = [m for n, m in self.metrics.items() if n not in self.unavailable]
        self._from_counts = None
        self._by_counts: dict = {}
        counters = {m.counter for m in by_counts}
        if by_counts and all(m.from_counts is not None for m in by_counts) and len(counters) == 1 and None not in counters:
            self._counter = counters.pop()
            self._from_counts = [(m.name, m.from_counts) for m in by_counts]
            self._counts_order = max(1, max(m.counts_order for m in by_counts))
            self._counts_lcs = any(m.counts_lcs for m in by_counts)

    @property
    def signatures(self) -> dict[str, str]:
        """``{name: signature}`` of the chosen metrics."""
        return {n: m.signature for n, m in self.metrics.items()}

    def score_views(self, prediction: TextView, reference: TextView) -> dict[str, float | None]:
        """Scores of one pair of views; ``None`` for unavailable metrics.

        Parameters
        ----------
        prediction, reference : TextView
            The two texts (each tokenizer runs once per view).

        Returns
        -------
        dict of str to (float or None)
            ``{name: score}`` for every chosen metric, in :attr:`metrics` order.
        """
        out: dict[str, float | None] = dict.fromkeys(self.metrics)
        for name, fn in self._runnable:
            out[name] = float(fn(prediction, reference))
        return out

    def score(self, prediction: str, reference: str) -> dict[str, float | None]:
        """Scores of one pair of raw texts; ``None`` for unavailable metrics (see ``unavailable``).

        When every metric has a ``from_counts`` (the ``char``-token overlap metrics), the pair is
        normalized, tokenized and counted once by the metrics' one ``counter``
        (:func:`evaluators.metrics.overlap.overlap_counts`; a long text in pieces) and each value is
        read from the counts: the same values as :meth:`score_views`.

        Parameters
        ----------
        prediction, reference : str
            Raw texts (Chinese, English or mixed); ``None`` counts as ``""``.

        Returns
        -------
        dict of str to (float or None)
            ``{name: score}`` for every chosen metric (a new dict each call).
        """
        if self._from_counts is None:
            return self.score_views(TextView(prediction), TextView(reference))
        counts = self._counter(prediction, reference, self._counts_order, self._counts_lcs)
        values = self._by_counts.get(counts)
        if values is None:  # the values depend on the counts only; short answers share few distinct counts
            if len(self._by_counts) >= self.COUNTS_MEMO:
                self._by_counts.clear()
            values = dict.fromkeys(self.metrics)
            values.update((name, float(fn(counts))) for name, fn in self._from_counts)
            self._by_counts[counts] = values
        return values.copy()


def score_pair(prediction: str, reference: str, names: Iterable[str] | None = None,
               modes: dict[str, str] | str | None = None) -> dict[str, float | None]:
    """Compute many metrics of one pair, tokenizing each text once.

    Parameters
    ----------
    prediction, reference : str
        Raw texts.
    names : iterable of str, optional
        Metric names (default: all registered).
    modes : dict or str, optional
        See :class:`PairScorer`.

    Returns
    -------
    dict
        ``{name: score or None}``; ``None`` marks a metric unavailable here (use
        :class:`PairScorer` to read the reasons).
    """
    return PairScorer(names, modes).score(prediction, reference)
