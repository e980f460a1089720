"""What a Chinese-aware number depends on, written down: tokenizer, dictionary digests, normalisation.

Chinese overlap scores move with choices nobody sees: jieba's dictionary (the shipped
``dict.txt`` or the big one), a user dictionary, jieba's HMM new-word discovery, the
stop-word list, and Traditional/Simplified conversion.  :class:`TextProvenance` names each,
with SHA-256 digests of the files involved, so that a score's signature says exactly how
its text was cut, and two runs can be checked for being cut the same way
(:func:`provenance_differences`, used by ``compare`` and ``review gate``).

jieba setups other than the default (shipped dictionary, no user dictionary, HMM off) are
tokenizers of their own, registered by :func:`jieba_tokenizer` (in
:data:`~evaluators.text.tokenize.JIEBA_SETUPS`, beside the built-in ``TOKENIZERS``) under a name that carries the
setup (``jieba[hmm]``, ``jieba[dict=1a2b3c4d,user=5e6f7a8b]``), so a
:class:`~evaluators.text.tokenize.TextView` can tokenize with them like with ``char``.

Digests are computed once per file (cached on path, size and modification time).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources
from typing import Any

from evaluators.results import DictMixin
from evaluators.text.tokenize import (
    JIEBA_SETUPS,
    NORMALIZATION,
    TOKENIZERS,
    Tokenizer,
    is_punct_or_space,
    jieba_version,
    normalize,
)

#: What the ``char`` and ``jieba`` tokenizers drop: tokens without a letter, digit or CJK character
#: (Unicode punctuation, symbols and separators, full-width forms included after NFKC).
PUNCTUATION_RULE = "dropped: tokens without a letter/digit/CJK character (Unicode P*, S*, Z*)"

#: Environment variable naming a big jieba dictionary (jieba's ``dict.txt.big``) when none is installed.
BIG_DICT_ENV = "EVALBOARD_JIEBA_BIG_DICT"

_lock = threading.RLock()


@lru_cache(maxsize=64)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of a file's bytes, computed once per path, size and modification time.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    str
        64 lower-case hex digits.

    Raises
    ------
    OSError
        The file cannot be read.
    """
    path = os.fspath(path)
    st = os.stat(path)
    return _sha256_cached(os.path.abspath(path), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=1)
def _jieba_folder() -> str:
    """jieba's package folder, found without importing jieba (its import builds the HMM tables: 70 ms)."""
    import importlib.util

    spec = importlib.util.find_spec("jieba")
    if spec is None or not spec.origin:
        raise ModuleNotFoundError("jieba is not installed (pip install -r requirements.lock)")
    return os.path.dirname(spec.origin)


def jieba_dictionary_path() -> str:
    """Path of the dictionary jieba ships (``jieba/dict.txt``)."""
    return os.path.join(_jieba_folder(), "dict.txt")


def big_dictionary_path() -> str | None:
    """A big jieba dictionary here: ``$EVALBOARD_JIEBA_BIG_DICT``, or ``dict.txt.big`` beside jieba; else None."""
    named = os.environ.get(BIG_DICT_ENV)
    if named and os.path.isfile(named):
        return named
    beside = os.path.join(_jieba_folder(), "dict.txt.big")
    return beside if os.path.isfile(beside) else None


@lru_cache(maxsize=1)
def stopwords_sha256() -> str:
    """SHA-256 of the shipped stop-word lists (``stopwords_zh.txt`` then ``stopwords_en.txt``, bytes joined)."""
    h = hashlib.sha256()
    for name in ("stopwords_zh.txt", "stopwords_en.txt"):
        h.update(resources.files("evaluators.text").joinpath("data", name).read_bytes())
    return h.hexdigest()


def script_label(script: str | None) -> str:
    """``"none"`` or ``"<config> (opencc <version>)"`` for the signature.

    Parameters
    ----------
    script : str or None
        An OpenCC configuration (``"t2s"`` ...), or none.

    Returns
    -------
    str
    """
    if not script:
        return "none"
    from evaluators.text.script import opencc_version

    return f"{script} (opencc {opencc_version()})"


@dataclass(frozen=True)
class TextProvenance(DictMixin):
    """How a text was cut before it was scored.

    Attributes
    ----------
    tokenizer : str
        Tokenizer name (``char``, ``jieba``, ``jieba[hmm]`` ..., ``cmrc2018`` for the QA scores).
    package, version : str
        The package that tokenizes and its installed version (``jieba 0.42.1``; ``evalboard`` for
        the character tokenizer).
    dictionary_sha256 : str or None
        SHA-256 of the main dictionary file (jieba only).
    user_dict_sha256 : str or None
        SHA-256 of a user dictionary loaded on top of it, if any.
    hmm : bool or None
        jieba's HMM new-word discovery (None for other tokenizers).
    nfkc : bool
        Unicode NFKC before tokenizing (full-width forms folded).
    case : str
        ``"lower"`` (or ``"none"``).
    punctuation : str
        What happens to punctuation (:data:`PUNCTUATION_RULE`).
    script : str
        Traditional/Simplified conversion: ``"none"`` or ``"tw2s (opencc 1.4.2)"``.
    stopwords_sha256 : str or None
        SHA-256 of the stop-word list used by keyword metrics.
    """

    tokenizer: str
    package: str
    version: str
    dictionary_sha256: str | None = None
    user_dict_sha256: str | None = None
    hmm: bool | None = None
    nfkc: bool = True
    case: str = "lower"
    punctuation: str = PUNCTUATION_RULE
    script: str = "none"
    stopwords_sha256: str | None = None

    def signature(self) -> str:
        """One line: ``tok=jieba-0.42.1(hmm=off,dict=sha256:1a2b3c4d5e6f,user=none)|norm=nfkc+lower|...``."""
        parts = [f"{self.package}-{self.version}"]
        if self.hmm is not None:
            parts.append(f"hmm={'on' if self.hmm else 'off'}")
        if self.dictionary_sha256:
            parts.append(f"dict=sha256:{self.dictionary_sha256[:12]}")
            parts.append(f"user={'sha256:' + self.user_dict_sha256[:12] if self.user_dict_sha256 else 'none'}")
        norm = "+".join(x for x in ("nfkc" if self.nfkc else "", self.case if self.case != "none" else "") if x)
        text = f"tok={self.tokenizer}({','.join(parts)})|norm={norm or 'none'}|punct=dropped|script={self.script}"
        if self.stopwords_sha256:
            text += f"|stopwords=sha256:{self.stopwords_sha256[:12]}"
        return text


def provenance_differences(baseline: TextProvenance | dict | None, current: TextProvenance | dict | None
                           ) -> list[str]:
    """What differs between two provenances, one line per field: ``dictionary_sha256: 1a2b... -> 9f8e...``.

    Either side may be a :class:`TextProvenance`, its ``to_dict()`` or a mapping of such by name
    (a report's ``provenance``: ``{"qa": {...}, "jieba": {...}}``); a side that records nothing
    (``None`` or ``{}``, a report written before provenance was recorded) gives one line saying so.

    Parameters
    ----------
    baseline, current : TextProvenance, dict or None

    Returns
    -------
    list of str
        Empty when they agree (or neither records anything).
    """
    a, b = _as_mapping(baseline), _as_mapping(current)
    if not a or not b:
        if not a and not b:
            return []
        return ["the baseline records no tokenizer provenance" if not a else "this run records no tokenizer provenance"]
    out: list[str] = []
    shared = sorted(set(a) & set(b))
    if not shared:
        return [f"no tokenizer in common: baseline {', '.join(sorted(a))}; this run {', '.join(sorted(b))}"]
    for key in shared:
        x, y = a.get(key), b.get(key)
        if x == y:
            continue
        if not isinstance(x, dict) or not isinstance(y, dict):
            out.append(f"{key}: {_short(x)} -> {_short(y)}")
            continue
        for name in [f.name for f in fields(TextProvenance)] + sorted(set(x) | set(y) - {f.name for f in
                                                                                        fields(TextProvenance)}):
            if x.get(name) != y.get(name):
                out.append(f"{key} {name}: {_short(x.get(name))} -> {_short(y.get(name))}")
    return out


#: A tokenizer in a signature: ``tok=jieba-0.42.1(accurate,hmm=off,dict=sha256:…,user=none)``,
#: ``tok=jieba[user=1a2b3c4d](jieba-0.42.1,hmm=off,…)`` (a setup's own name), ``tok=char(cjk-chars+words)``.
_SIG_TOKENIZER = re.compile(r"tok=([A-Za-z][\w.+-]*?)(\[[^\]]*\])?(?:-(\d[\w.]*))?\(([^()]*)\)")
#: A Traditional/Simplified conversion in a signature: ``script=none``, ``script=tw2s (opencc 1.4.2)``.
_SIG_SCRIPT = re.compile(r"script=([a-z0-9]+(?: \(opencc [^)]*\))?)")
#: The stop-word list's digest in a signature: ``stopwords=… sha256:ff0cab7667c3``.
_SIG_STOPWORDS = re.compile(r"stopwords=[^|;]*?sha256:([0-9a-f]+)")
#: A pinned package in a signature (the QA scores' tokenizer package): ``nltk==3.10.4``.
_SIG_PACKAGE = re.compile(r"\b([A-Za-z][\w-]*)==(\d[\w.]*)")


def signature_tokenizer_facts(signature: str) -> dict[str, str]:
    """What a score signature says about how its text was cut, as ``fact -> value``.

    Facts: each tokenizer's version and options (``jieba version``, ``jieba dict``, ``jieba user``,
    ``jieba hmm``, ``char mode`` …; a jieba setup's own name such as ``jieba[hmm]`` counts as ``jieba``),
    ``script`` (``none`` when the signature names no conversion), ``stopwords sha256`` and pinned packages
    (``nltk version``).  A fact that several metrics of one signature state with different values keeps
    them all, sorted and joined with `` / ``.

    Parameters
    ----------
    signature : str
        A run's signature (:attr:`evaluators.run_result.RunResult.signature`, a report's ``signature``).

    Returns
    -------
    dict of str to str

    Examples
    --------
    >>> f = signature_tokenizer_facts("tok=jieba-0.42.1(accurate,hmm=off,dict=sha256:7197c3211ddd,user=none)"
    ...                               "|norm=nfkc+lower|punct=dropped|script=none")
    >>> f["jieba version"], f["jieba dict"], f["jieba hmm"], f["script"]
    ('0.42.1', 'sha256:7197c3211ddd', 'off', 'none')
    """
    facts: dict[str, set[str]] = {}

    def add(key: str, value: str) -> None:
        facts.setdefault(key, set()).add(value)

    text = str(signature or "")
    for m in _SIG_TOKENIZER.finditer(text):
        name, version, options = m.group(1), m.group(3), m.group(4)
        if version:
            add(f"{name} version", version)
        for opt in (o.strip() for o in options.split(",")):
            if not opt:
                continue
            if "=" in opt:
                k, v = opt.split("=", 1)
                add(f"{name} {k}", v)
            elif opt.startswith(f"{name}-") and opt[len(name) + 1:][:1].isdigit():
                add(f"{name} version", opt[len(name) + 1:])  # tok=jieba[hmm](jieba-0.42.1,...)
            else:
                add(f"{name} mode", opt)
    for m in _SIG_PACKAGE.finditer(text):
        add(f"{m.group(1)} version", m.group(2))
    for m in _SIG_STOPWORDS.finditer(text):
        add("stopwords sha256", m.group(1))
    for m in _SIG_SCRIPT.finditer(text):
        add("script", m.group(1))
    out = {k: " / ".join(sorted(v)) for k, v in facts.items()}
    out.setdefault("script", "none")
    return out


def signature_differences(baseline: str, current: str) -> list[str]:
    """What differs in how two signatures' text was cut, one line per fact: ``jieba dict: sha256:… -> sha256:…``.

    Facts of :func:`signature_tokenizer_facts` that both signatures state (and ``script``, ``none`` when
    unnamed) are compared; a tokenizer only one of them uses is a different metric set, not a change.

    Parameters
    ----------
    baseline, current : str
        Two signatures (an earlier run's first).

    Returns
    -------
    list of str
        Empty when they agree on every shared fact.

    Examples
    --------
    >>> signature_differences("tok=jieba-0.39(accurate,hmm=off)|script=none",
    ...                       "tok=jieba-0.42.1(accurate,hmm=off)|script=t2s (opencc 1.4.2)")
    ['jieba version: 0.39 -> 0.42.1', 'script: none -> t2s (opencc 1.4.2)']
    """
    a, b = signature_tokenizer_facts(baseline), signature_tokenizer_facts(current)
    return [f"{k}: {a[k]} -> {b[k]}" for k in sorted(set(a) & set(b)) if a[k] != b[k]]


def _as_mapping(value: Any) -> dict:
    if value is None:
        return {}
    if isinstance(value, TextProvenance):
        return {"text": value.to_dict()}
    if isinstance(value, dict):
        if "tokenizer" in value and "package" in value:
            return {"text": value}
        return {k: (v.to_dict() if isinstance(v, TextProvenance) else v) for k, v in value.items()}
    return {}


def _short(v: Any) -> str:
    if isinstance(v, str) and len(v) == 64 and all(c in "0123456789abcdef" for c in v):
        return v[:12]
    return "none" if v is None else str(v)


# ---------------------------------------------------------------------------------------------------------------
# jieba setups as tokenizers


@dataclass(frozen=True)
class JiebaSetup:
    """A jieba configuration: main dictionary (None: the shipped one), user dictionary, HMM."""

    dictionary: str | None = None
    user_dict: str | None = None
    hmm: bool = False

    @property
    def is_default(self) -> bool:
        return self.dictionary is None and self.user_dict is None and not self.hmm

    def provenance(self, script: str | None = None) -> TextProvenance:
        """The :class:`TextProvenance` of this setup (digests from the files, cached).

        Parameters
        ----------
        script : str, optional
            OpenCC configuration applied before tokenizing, recorded.

        Returns
        -------
        TextProvenance

        Raises
        ------
        OSError
            A dictionary file cannot be read.
        """
        return TextProvenance(
            tokenizer=self.name, package="jieba", version=jieba_version(),
            dictionary_sha256=file_sha256(self.dictionary or jieba_dictionary_path()),
            user_dict_sha256=file_sha256(self.user_dict) if self.user_dict else None,
            hmm=self.hmm, nfkc=True, case="lower", script=script_label(script), stopwords_sha256=stopwords_sha256(),
        )

    @property
    def name(self) -> str:
        """The registered tokenizer name: ``jieba`` for the default, else ``jieba[...]`` naming the setup."""
        if self.is_default:
            return "jieba"
        parts = []
        if self.hmm:
            parts.append("hmm")
        if self.dictionary:
            parts.append(f"dict={file_sha256(self.dictionary)[:8]}")
        if self.user_dict:
            parts.append(f"user={file_sha256(self.user_dict)[:8]}")
        return f"jieba[{','.join(parts)}]"


_JIEBA_INSTANCES: dict[tuple, Any] = {}


def _jieba_instance(dictionary: str | None, user_dict: str | None):
    """A ``jieba.Tokenizer`` for the dictionary and user dictionary, built once per pair of digests."""
    key = (file_sha256(dictionary) if dictionary else None, file_sha256(user_dict) if user_dict else None)
    with _lock:
        tk = _JIEBA_INSTANCES.get(key)
        if tk is None:
            import logging

            import jieba

            jieba.setLogLevel(logging.WARNING)
            if dictionary is None and user_dict is None:
                tk = jieba.dt
            else:
                tk = jieba.Tokenizer(dictionary or jieba_dictionary_path())
                tk.initialize()
                if user_dict:
                    tk.load_userdict(user_dict)
            tk.initialize()
            _JIEBA_INSTANCES[key] = tk
    return tk


def jieba_tokenizer(dictionary: str | os.PathLike | None = None, user_dict: str | os.PathLike | None = None,
                    hmm: bool = False) -> Tokenizer:
    """The tokenizer of a jieba setup, registered (``JIEBA_SETUPS``) under :attr:`JiebaSetup.name`.

    Tokens: jieba's accurate mode on the normalized text (``NORMALIZATION``), punctuation and
    whitespace tokens dropped, as the ``jieba`` tokenizer.

    Parameters
    ----------
    dictionary : path, optional
        Main dictionary (jieba's ``dict.txt`` format: ``word freq [tag]`` per line); default: shipped.
    user_dict : path, optional
        Words added on top (``jieba.load_userdict`` format).
    hmm : bool
        jieba's HMM new-word discovery.

    Raises
    ------
    OSError
        A dictionary file cannot be read.
    """
    setup = JiebaSetup(os.fspath(dictionary) if dictionary else None, os.fspath(user_dict) if user_dict else None,
                       bool(hmm))
    name = setup.name
    with _lock:
        if name == "jieba":
            return TOKENIZERS["jieba"]
        found = JIEBA_SETUPS.get(name)
        if found is not None:
            return found
        tk = _jieba_instance(setup.dictionary, setup.user_dict)

        def cut(text: str, _tk=tk, _hmm=setup.hmm) -> list[str]:
            return [t for t in _tk.lcut(normalize(text), HMM=_hmm) if not is_punct_or_space(t)]

        tok = Tokenizer(name, setup.provenance().signature(), cut)
        JIEBA_SETUPS[name] = tok
    return tok


def char_provenance(script: str | None = None) -> TextProvenance:
    """The ``char`` tokenizer's provenance (CJK characters and words; no dictionary).

    Parameters
    ----------
    script : str, optional
        OpenCC configuration applied before tokenizing, recorded.

    Returns
    -------
    TextProvenance
    """
    from evaluators import __version__

    return TextProvenance(tokenizer="char", package="evalboard", version=__version__, script=script_label(script))


assert NORMALIZATION == "nfkc+lower"  # what TextProvenance's nfkc/case fields say


def stored_dictionary(data: bytes) -> str:
    """A dictionary given as bytes (an upload) as a file jieba can load:
    ``$EVALBOARD_DATA_DIR/jieba_dicts/<sha256>.txt`` (default data folder ``.evalboard``).

    The file is named by its digest and written once; the same bytes give the same path (and the same
    tokenizer name), so a page's cache keys stay stable.  The folder is private to this user (mode 0700),
    the file is written under a name nobody can predict and moved into place, and a file already there is
    used only when its bytes are these bytes (else it is written again): nothing another local user
    placed is loaded as a dictionary.

    Parameters
    ----------
    data : bytes
        The dictionary's contents (jieba's ``word [freq] [tag]`` lines).

    Returns
    -------
    str
        The file's path.

    Raises
    ------
    OSError
        The data folder cannot be written.
    """
    import tempfile

    digest = hashlib.sha256(data).hexdigest()
    folder = os.path.join(os.environ.get("EVALBOARD_DATA_DIR", ".evalboard"), "jieba_dicts")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, f"{digest}.txt")
    try:
        with open(path, "rb") as fh:
            if fh.read(len(data) + 1) == data:
                return path
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=folder)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)
    return path
