"""Does a ranking of systems survive another reasonable tokenization? (issue 31)

One engine for every task whose scores count shared tokens (QA answers, persona replies,
long-memory answers).  :func:`rank_sensitivity` recomputes the word-overlap scores of every
system under several tokenizations of the same texts: characters (``char``), jieba with its
shipped dictionary (``jieba``), jieba with a big dictionary (a file given, or jieba's
``dict.txt.big`` where installed), jieba with HMM new-word discovery on, and jieba with a user
dictionary.  For each it gives each system's mean with its bootstrap interval, and flags every
pair of systems whose order under an alternative differs from the order under the reference
tokenization (the first, ``char``), with the paired bootstrap interval of the difference under both.

Metrics (per record, maximum over the references), all on the tokens of the tokenization:

``token_f1``
    SQuAD v1.1's F1 of the multiset of tokens (Rajpurkar et al., 2016, ``f1_score``); the same
    number as ROUGE-1 F (Lin, 2004) and, under ``char``, as the registry's ``token_f1_char``.
``exact_match``
    1 when the token sequences are equal.
``rougeL``, ``rouge2``
    ROUGE-L and ROUGE-2 F (Lin, 2004; :func:`evaluators.metrics.overlap.rouge_l`, ``rouge_n``).
``bleu1``, ``bleu2``, ``bleu4``
    Sentence BLEU with nltk's smoothing method 1 (Papineni et al., 2002;
    :func:`evaluators.metrics.overlap.bleu_from_matches`).

Under ``char`` every metric but ``exact_match`` equals the registry metric of the same name
(``token_f1_char`` for ``token_f1``), so the reference column is the number a report shows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from evaluators.metrics.overlap import (bleu_from_matches, f1_from_common, lcs_length, rouge_l_from_counts,
                                        rouge_n_from_counts)
from evaluators.metrics.statistics import bootstrap_ci, paired_bootstrap
from evaluators.results import DictMixin
from evaluators.text.provenance import (
    TextProvenance,
    big_dictionary_path,
    char_provenance,
    jieba_tokenizer,
    JiebaSetup,
)
from evaluators.text.script import convert
from evaluators.text.tokenize import TextView

#: Every metric the engine recomputes (see the module docstring).
METRICS = ("token_f1", "exact_match", "rougeL", "rouge2", "bleu1", "bleu2", "bleu4")
#: The metrics of QA and persona sensitivity (the default).
QA_METRICS = ("token_f1", "exact_match", "rougeL")
SIGNATURE = ("rank sensitivity: per-record max over golds; systems paired by record id; percentile bootstrap "
             "of means and paired bootstrap of differences")


@dataclass(frozen=True)
class Tokenization(DictMixin):
    """One tokenization compared: its key, a label, the registered tokenizer name and its provenance."""

    key: str
    label: str
    tokenizer: str
    provenance: TextProvenance


def tokenizations(*, big_dictionary: str | os.PathLike | None = None, user_dict: str | os.PathLike | None = None,
                  script: str | None = None, hmm: bool = True) -> tuple[list[Tokenization], list[str]]:
    """The tokenizations of a sensitivity analysis, and notes on those left out.

    ``char`` (reference), ``jieba`` (shipped dictionary, HMM off), ``jieba_big`` (``big_dictionary``
    or jieba's ``dict.txt.big`` where installed; left out with a note otherwise), ``jieba_hmm``
    (HMM on), ``jieba_user`` (``user_dict``, when given).

    Parameters
    ----------
    big_dictionary : str or os.PathLike, optional
        A jieba main dictionary (``dict.txt.big``); default :func:`big_dictionary_path`.
    user_dict : str or os.PathLike, optional
        A jieba user dictionary, added as ``jieba_user``.
    script : str, optional
        OpenCC configuration of the script conversion applied before tokenizing (``"t2s"`` ...),
        recorded in each provenance; ``None``: no conversion.
    hmm : bool
        Include ``jieba_hmm``.

    Returns
    -------
    (tokenizations, notes) : (list of Tokenization, list of str)
        In the order above; one note per tokenization left out.
    """
    out = [Tokenization("char", "characters", "char", char_provenance(script)),
           Tokenization("jieba", "jieba (shipped dictionary)", "jieba", JiebaSetup().provenance(script))]
    notes = []
    big = os.fspath(big_dictionary) if big_dictionary else big_dictionary_path()
    if big:
        tok = jieba_tokenizer(dictionary=big)
        out.append(Tokenization("jieba_big", f"jieba (big dictionary {os.path.basename(big)})", tok.name,
                                JiebaSetup(dictionary=big).provenance(script)))
    else:
        notes.append("jieba_big left out: no big dictionary (give one, or set EVALBOARD_JIEBA_BIG_DICT, or install "
                     "jieba's dict.txt.big beside jieba)")
    if hmm:
        tok = jieba_tokenizer(hmm=True)
        out.append(Tokenization("jieba_hmm", "jieba (HMM on)", tok.name, JiebaSetup(hmm=True).provenance(script)))
    if user_dict:
        tok = jieba_tokenizer(user_dict=user_dict)
        out.append(Tokenization("jieba_user", f"jieba (+ user dictionary {os.path.basename(os.fspath(user_dict))})",
                                tok.name, JiebaSetup(user_dict=os.fspath(user_dict)).provenance(script)))
    return out, notes


def _metric_values(p: list[str], r: list[str], pred: TextView, gold: TextView, tokenizer: str,
                   metrics: Sequence[str]) -> tuple[float, ...]:
    """The ``metrics`` of one prediction against one reference, in order (see the module docstring)."""
    if not p and not r:
        return (1.0,) * len(metrics)
    if not p or not r:
        return (0.0,) * len(metrics)
    out = []
    for m in metrics:
        if m == "token_f1":
            out.append(f1_from_common(pred.matches(gold, tokenizer, 1), len(p), len(r)))
        elif m == "exact_match":
            out.append(float(p == r))
        elif m == "rougeL":
            out.append(rouge_l_from_counts(lcs_length(p, r), len(p), len(r)))
        elif m == "rouge2":
            out.append(rouge_n_from_counts(pred.matches(gold, tokenizer, 2), len(p), len(r), 2))
        else:  # bleu1, bleu2, bleu4
            n = int(m[4:])
            out.append(bleu_from_matches([pred.matches(gold, tokenizer, k) for k in range(1, n + 1)], len(p), len(r)))
    return tuple(out)


def _scores(pred: TextView, golds: Sequence[TextView], tokenizer: str,
            metrics: Sequence[str] = QA_METRICS) -> tuple[float, ...]:
    """The ``metrics`` of a prediction against its references (each the maximum over the references)."""
    best = (0.0,) * len(metrics)
    p = pred.tokens(tokenizer)
    for g in golds:
        vals = _metric_values(p, g.tokens(tokenizer), pred, g, tokenizer, metrics)
        best = tuple(max(x, y) for x, y in zip(best, vals))
    return best


@dataclass(frozen=True)
class SystemScore(DictMixin):
    """One system's mean under one tokenization, with its bootstrap interval and its rank (1 = best)."""

    system: str
    tokenization: str
    metric: str
    mean: float
    ci_low: float | None
    ci_high: float | None
    n: int
    rank: int


@dataclass(frozen=True)
class RankFlip(DictMixin):
    """Two systems whose order under ``tokenization`` differs from their order under the reference.

    ``delta`` is ``mean(b) - mean(a)`` over the records both systems scored; ``*_ci`` the paired
    bootstrap interval of that difference.
    """

    a: str
    b: str
    metric: str
    tokenization: str
    reference: str
    delta_reference: float
    ci_reference: tuple[float | None, float | None]
    delta: float
    ci: tuple[float | None, float | None]
    n_paired: int


@dataclass(frozen=True)
class SensitivityReport(DictMixin):
    """Result of :func:`rank_sensitivity`.

    Attributes
    ----------
    systems : tuple of str
    tokenizations : tuple of Tokenization
        The first is the reference.
    scores : tuple of SystemScore
        One per system, tokenization and metric.
    flips : tuple of RankFlip
        Every pair of systems whose order changes under an alternative (a tie on one side counts).
    notes : tuple of str
        Tokenizations left out and why.
    provenance : dict
        Tokenization key -> :class:`TextProvenance` as a dict (dictionary SHA-256 and all).
    signature : str
    metrics : tuple of str
        The metrics recomputed.
    """

    systems: tuple[str, ...]
    tokenizations: tuple[Tokenization, ...]
    scores: tuple[SystemScore, ...]
    flips: tuple[RankFlip, ...]
    notes: tuple[str, ...] = ()
    provenance: dict[str, Any] = field(default_factory=dict)
    signature: str = SIGNATURE
    metrics: tuple[str, ...] = QA_METRICS

    def score(self, system: str, tokenization: str, metric: str = "token_f1") -> SystemScore:
        """The score of one system under one tokenization and metric.

        Parameters
        ----------
        system : str
            One of :attr:`systems`.
        tokenization : str
            A :class:`Tokenization` key (``"char"``, ``"jieba"`` ...).
        metric : str
            One of :attr:`metrics`.

        Returns
        -------
        SystemScore
            Mean with its bootstrap interval and the system's rank under that tokenization.

        Raises
        ------
        KeyError
            No such (system, tokenization, metric).
        """
        for s in self.scores:
            if s.system == system and s.tokenization == tokenization and s.metric == metric:
                return s
        raise KeyError((system, tokenization, metric))

    def table(self, metric: str = "token_f1") -> list[dict[str, Any]]:
        """Rows ``{"system", <tokenization key>: (mean, low, high, rank)}`` for one metric, systems in input order.

        Parameters
        ----------
        metric : str
            One of :attr:`metrics`.

        Returns
        -------
        list of dict
            One row per system; each tokenization's cell a tuple (mean, interval low, interval
            high, rank), the means in [0, 1].

        Raises
        ------
        KeyError
            ``metric`` was not computed.
        """
        rows = []
        for system in self.systems:
            row: dict[str, Any] = {"system": system}
            for t in self.tokenizations:
                s = self.score(system, t.key, metric)
                row[t.key] = (s.mean, s.ci_low, s.ci_high, s.rank)
            rows.append(row)
        return rows


def _records_of(runs: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, tuple[str, tuple[str, ...]]]]:
    """System -> {record id: (prediction, gold answers)} of the records that are scored (or lack a prediction).

    A record is a :class:`~evaluators.qa.evaluate.QARecordResult` or a plain ``(id, prediction,
    references)`` tuple (any task: persona replies, memory answers); records without a reference are left out.
    """
    out: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {}
    for system, records in runs.items():
        rows: dict[str, tuple[str, tuple[str, ...]]] = {}
        for r in records:
            if isinstance(r, tuple):
                rid, pred, golds = r
                golds = (golds,) if isinstance(golds, str) else tuple(g for g in golds if g)
                if golds:
                    rows.setdefault(str(rid), (pred or "", golds))
                continue
            if r.status not in ("scored", "missing_prediction") or not r.gold_answers:
                continue
            rows.setdefault(r.id, (r.prediction or "", tuple(r.gold_answers)))
        out[system] = rows
    return out


def _ranks(means: dict[str, float]) -> dict[str, int]:
    order = sorted(means, key=lambda s: -means[s])
    return {s: 1 + sum(1 for t in means if means[t] > means[s]) for s in order}


def rank_sensitivity(runs: Mapping[str, Sequence[Any]], *, big_dictionary: str | os.PathLike | None = None,
                     user_dict: str | os.PathLike | None = None, script: str | None = None,
                     metrics: Sequence[str] = QA_METRICS, n_resamples: int = 1000, confidence_level: float = 0.95,
                     seed: int = 0, include: Sequence[str] | None = None) -> SensitivityReport:
    """Each system's overlap scores under each tokenization, and the pairs whose order changes.

    Parameters
    ----------
    runs : mapping of str to sequence of QARecordResult or of (id, prediction, references) tuples
        System -> its records (``QARun.runs()``, or any task's replies as tuples); records are paired
        across systems by id.
    big_dictionary, user_dict : path, optional
        jieba dictionaries for ``jieba_big`` and ``jieba_user``.
    script : str, optional
        OpenCC configuration applied to predictions and gold answers first (recorded).
    metrics : sequence of str
        Of :data:`METRICS` (default :data:`QA_METRICS`).
    n_resamples : int
        Bootstrap resamples for the intervals (0: none).
    confidence_level : float
        In (0, 1).
    seed : int
    include : sequence of str, optional
        Only these tokenization keys (the first given becomes the reference).

    Returns
    -------
    SensitivityReport

    Raises
    ------
    ValueError
        Fewer than one system, an unknown metric, or no records.
    """
    metrics = tuple(dict.fromkeys(metrics))
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(METRICS)}")
    if not runs:
        raise ValueError("no systems to compare")
    toks, notes = tokenizations(big_dictionary=big_dictionary, user_dict=user_dict, script=script)
    if include:
        by_key = {t.key: t for t in toks}
        missing = [k for k in include if k not in by_key]
        notes += [f"{k} not available here" for k in missing]
        toks = [by_key[k] for k in include if k in by_key]
    rows = _records_of(runs)
    systems = tuple(rows)
    views: dict[str, TextView] = {}

    def view(text: str) -> TextView:
        v = views.get(text)
        if v is None:
            v = views[text] = TextView(convert(text, script) if script else text)
        return v

    # per system, tokenization: {id: (f1, em, rl)}
    values: dict[tuple[str, str], dict[str, tuple[float, ...]]] = {}
    for system, items in rows.items():
        for t in toks:
            values[(system, t.key)] = {rid: _scores(view(p), [view(g) for g in golds], t.tokenizer, metrics)
                                       for rid, (p, golds) in items.items()}
    index = {m: i for i, m in enumerate(metrics)}
    scores: list[SystemScore] = []
    means: dict[tuple[str, str], dict[str, float]] = {}
    for t in toks:
        for m in metrics:
            mm = {s: _mean([v[index[m]] for v in values[(s, t.key)].values()]) for s in systems}
            means[(t.key, m)] = mm
            ranks = _ranks(mm)
            for s in systems:
                xs = [v[index[m]] for v in values[(s, t.key)].values()]
                lo = hi = None
                if xs and n_resamples > 0:
                    ci = bootstrap_ci(xs, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed,
                                      unit="record")
                    lo, hi = ci.ci_low, ci.ci_high
                scores.append(SystemScore(s, t.key, m, mm[s], lo, hi, len(xs), ranks[s]))
    flips: list[RankFlip] = []
    ref = toks[0] if toks else None
    for a, b in combinations(systems, 2):
        common = sorted(set(rows[a]) & set(rows[b]))
        if not common or ref is None:
            continue
        for m in metrics:
            k = index[m]

            def paired(tkey: str) -> tuple[float, float | None, float | None]:
                xa = [values[(a, tkey)][i][k] for i in common]
                xb = [values[(b, tkey)][i][k] for i in common]
                pb = paired_bootstrap(xa, xb, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
                return pb.delta, pb.ci_low, pb.ci_high

            d_ref = None
            for t in toks[1:]:
                da = means[(ref.key, m)][b] - means[(ref.key, m)][a]
                dt = means[(t.key, m)][b] - means[(t.key, m)][a]
                if _sign(da) == _sign(dt):
                    continue
                if d_ref is None:
                    d_ref = paired(ref.key)
                d_alt = paired(t.key)
                flips.append(RankFlip(a, b, m, t.key, ref.key, d_ref[0], (d_ref[1], d_ref[2]), d_alt[0],
                                      (d_alt[1], d_alt[2]), len(common)))
    return SensitivityReport(systems, tuple(toks), tuple(scores), tuple(flips), tuple(notes),
                             {t.key: t.provenance.to_dict() for t in toks}, metrics=metrics)


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _sign(x: float, eps: float = 1e-12) -> int:
    return 0 if abs(x) <= eps else (1 if x > 0 else -1)




def token_examples(text: str, report: SensitivityReport) -> list[dict[str, str]]:
    """How ``text`` is cut under each tokenization of ``report``: ``{"tokenization", "tokens"}`` rows,
    the tokens joined with `` / `` (what a reader checks before trusting a column).

    Parameters
    ----------
    text : str
        Any text (a question, an answer).
    report : SensitivityReport
        Its :attr:`~SensitivityReport.tokenizations` are applied, in order.

    Returns
    -------
    list of dict of str to str
        One row per tokenization.
    """
    view = TextView(text)
    return [{"tokenization": t.key, "tokens": " / ".join(view.tokens(t.tokenizer))} for t in report.tokenizations]
