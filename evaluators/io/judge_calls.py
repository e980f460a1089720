"""The one cache of LLM-judge calls: content-addressed, shared by the workers of a run and by runs, resumable.

Every judge call (the long-memory judge, :func:`evaluators.memory.judge.batch_judge`; the judge lab's
``judge run``, :func:`evaluators.judgelab.run.run_judge`) goes through :meth:`JudgeCallCache.call`.

Key
    :func:`call_key`: SHA-256 of ``[model, prompt_hash, input_hash, params]``, where ``prompt_hash`` is the
    SHA-256 of the prompt *template*, ``input_hash`` the SHA-256 of the fields filled into it (canonical JSON,
    sorted keys) and ``params`` the request's parameters (``max_tokens``, ``temperature``).  A reply is
    reused exactly when the same model was asked the same template about the same input, whichever task,
    item id, dataset or judge version asked it.  The reply text is stored, not a parsed verdict: each
    caller parses it (parsing is deterministic), so one cache serves every parser.
Storage
    One SQLite file in WAL mode (readers never wait for the writer; a write is one short transaction), so
    the threads of a run and several processes *on one machine* share it; WAL needs shared memory, so not a
    network file system (workers on several machines: one cache each, or the review database's server).
    ``path=None`` keeps it in memory (one process).
Exactly once
    A worker looks the key up (a hit: no call); else it *claims* the key in the same transaction.  A key
    claimed by another live worker (another thread, or a process of this machine whose pid is alive, or
    any claim younger than ``lease_s``) is waited for, not sent again; a dead worker's claim (a killed run)
    is taken over at once.  The claimant waits for the rate limiter (:class:`evaluators.net.RateLimiter`),
    sends the request with ``Idempotency-Key: <key>`` (the client retries transient failures with
    exponential backoff, :func:`evaluators.net.retrying`, every attempt with the same key), then stores the
    reply and drops its claim in one transaction.  A failed call is not stored (its claim is dropped): the
    next run asks again.
A run killed halfway
    Every reply stored before the kill is reused; the calls in flight at the kill (at most one per worker)
    are sent again with their idempotency key: an endpoint that honours the header (the test stub does)
    answers them from its record without running the model again; one that does not runs them again, so
    at most ``workers`` calls are repeated there.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.io import InputError, InputIssue
from evaluators.net import RateLimiter

FORMAT = "evalboard-judge-calls"
VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS judge_calls (
    key TEXT PRIMARY KEY, model TEXT NOT NULL, prompt_hash TEXT NOT NULL, input_hash TEXT NOT NULL,
    params TEXT NOT NULL, reply TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS judge_claims (
    key TEXT PRIMARY KEY, owner TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, since REAL NOT NULL);
"""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CallKey:
    """The content address of one judge call (:func:`call_key`)."""

    key: str
    model: str
    prompt_hash: str
    input_hash: str
    params: str


def call_key(model: str, template: str, inputs: Mapping[str, Any], params: Mapping[str, Any]) -> CallKey:
    """The cache key of a judge call.

    Parameters
    ----------
    model : str
        The judge model's name.
    template : str
        The prompt template (before its fields are filled in).
    inputs : mapping
        The fields filled into the template (JSON-ready values).
    params : mapping
        The request's parameters (``max_tokens``, ``temperature``).

    Returns
    -------
    CallKey
        ``key`` = SHA-256 (hex) of ``[model, prompt_hash, input_hash, params]`` as JSON.
    """
    prompt_hash = _sha(template)
    input_hash = _sha(json.dumps(dict(inputs), ensure_ascii=False, sort_keys=True))
    ptext = json.dumps(dict(params), ensure_ascii=False, sort_keys=True)
    key = _sha(json.dumps([model, prompt_hash, input_hash, ptext], ensure_ascii=False))
    return CallKey(key, model, prompt_hash, input_hash, ptext)


def request_params(llm: Any, max_tokens: int | None) -> dict[str, Any]:
    """The parameters of a request to ``llm`` that are part of the key: ``max_tokens`` and the temperature."""
    return {"max_tokens": max_tokens, "temperature": getattr(getattr(llm, "config", None), "temperature", 0.0)}


class JudgeCallCache:
    """Judge replies by content in one SQLite file shared by threads and processes (module docstring).

    Parameters
    ----------
    path : str or Path, optional
        The SQLite file (created when absent); ``None``: in memory.
    lease_s : float
        A claim older than this is taken over even when its owner looks alive (a worker on another
        machine, a hung one).
    poll_s : float
        Seconds between looks at a key another worker is calling.
    limiter : RateLimiter, optional
        Waited on before every request this cache sends (default: no limit).

    Attributes
    ----------
    calls_sent : int
        Requests sent through this object (cache misses), for the caller's report.
    hits : int
        Replies reused.

    Raises
    ------
    InputError
        ``path`` is not a SQLite database, or one that is not a judge call cache.
    """

    def __init__(self, path: str | Path | None = None, *, lease_s: float = 600.0, poll_s: float = 0.02,
                 limiter: RateLimiter | None = None):
        self.path = Path(path) if path is not None else None
        self.lease_s, self.poll_s = lease_s, poll_s
        self.limiter = limiter or RateLimiter(None)
        self.calls_sent = 0
        self.hits = 0
        self._host = socket.gethostname()
        self._lock = threading.Lock()
        name = str(self.path) if self.path is not None else ":memory:"
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(name, timeout=60.0, isolation_level=None, check_same_thread=False)
            if self.path is not None:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: a commit survives a killed process
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE name='format'").fetchone()
            if row is None:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?), ('version', ?)",
                                 (FORMAT, str(VERSION)))
            elif row[0] != FORMAT:
                raise InputError(InputIssue(name, f"not a judge call cache (format {row[0]!r})", kind="format"))
        except sqlite3.OperationalError as exc:  # a folder, no permission, a locked file
            raise InputError(InputIssue(name, f"cannot open the judge call cache: {exc}", kind="io")) from exc
        except sqlite3.DatabaseError as exc:  # e.g. a JSON file
            raise InputError(InputIssue(name, f"not a judge call cache (a SQLite file): {exc}", kind="format")) from exc

    # ------------------------------------------------------------------ reading
    def get(self, key: str) -> str | None:
        """The stored reply of ``key``, or ``None``."""
        with self._lock:
            row = self._db.execute("SELECT reply FROM judge_calls WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM judge_calls").fetchone()[0]

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def replies(self) -> dict[str, str]:
        """Every stored reply by key."""
        with self._lock:
            return dict(self._db.execute("SELECT key, reply FROM judge_calls").fetchall())

    # ------------------------------------------------------------------ claims
    def _owner(self) -> str:
        return f"{self._host}:{os.getpid()}:{threading.get_ident()}:{id(self)}"

    def _alive(self, host: str, pid: int, since: float) -> bool:
        if time.time() - since > self.lease_s:
            return False
        if host != self._host:
            return True
        if pid == os.getpid():
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def _claim(self, key: str, owner: str) -> tuple[str, str | None]:
        """``("hit", reply)``, ``("mine", None)`` (this worker sends) or ``("busy", None)`` (another one is)."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT reply FROM judge_calls WHERE key=?", (key,)).fetchone()
                if row is not None:
                    return "hit", row[0]
                claim = db.execute("SELECT owner, host, pid, since FROM judge_claims WHERE key=?", (key,)).fetchone()
                if claim is not None and claim[0] != owner and self._alive(claim[1], claim[2], claim[3]):
                    return "busy", None
                db.execute("INSERT OR REPLACE INTO judge_claims VALUES (?, ?, ?, ?, ?)",
                           (key, owner, self._host, os.getpid(), time.time()))
                return "mine", None
            finally:
                db.execute("COMMIT")

    def _release(self, key: str, owner: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM judge_claims WHERE key=? AND owner=?", (key, owner))

    def put(self, ck: CallKey, reply: str) -> str:
        """Store ``reply`` under ``ck`` and drop its claim; returns the stored reply (the first stored reply of a
        key stays, so every worker reads the same one even after a claim was taken over)."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("INSERT OR IGNORE INTO judge_calls VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (ck.key, ck.model, ck.prompt_hash, ck.input_hash, ck.params, reply, time.time()))
                db.execute("DELETE FROM judge_claims WHERE key=?", (ck.key,))
                return db.execute("SELECT reply FROM judge_calls WHERE key=?", (ck.key,)).fetchone()[0]
            finally:
                db.execute("COMMIT")

    # ------------------------------------------------------------------ calling
    def call(self, llm: Any, prompt: str, ck: CallKey, *, max_tokens: int | None = None) -> tuple[str, bool]:
        """The reply to ``prompt`` from the cache, or from ``llm`` once (module docstring).

        Parameters
        ----------
        llm : ChatLLM
            ``llm.complete(prompt, max_tokens=...)`` (with ``idempotency_key=`` when the client has
            ``accepts_idempotency_key``).
        prompt : str
            The filled-in template.
        ck : CallKey
            Its :func:`call_key`.
        max_tokens : int, optional

        Returns
        -------
        (reply, cached)
            ``cached`` is True when no request was sent by this worker.

        Raises
        ------
        Exception
            What ``llm.complete`` raised (nothing is stored; the claim is dropped).
        """
        owner = self._owner()
        while True:
            state, reply = self._claim(ck.key, owner)
            if state == "hit":
                with self._lock:
                    self.hits += 1
                return reply, True
            if state == "mine":
                break
            time.sleep(self.poll_s)
        try:
            self.limiter.acquire()
            with self._lock:
                self.calls_sent += 1
            if getattr(llm, "accepts_idempotency_key", False):
                reply = llm.complete(prompt, max_tokens=max_tokens, idempotency_key=ck.key)
            else:
                reply = llm.complete(prompt, max_tokens=max_tokens)
        except BaseException:
            self._release(ck.key, owner)
            raise
        return self.put(ck, reply), False

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()


@dataclass(frozen=True)
class CallOutcome:
    """One call of :func:`run_calls`: the reply (``None`` when it failed, ``error`` says why) and whether it
    came from the cache."""

    reply: str | None
    error: Exception | None
    cached: bool


def run_calls(prompts: Sequence[tuple[str, CallKey]], llm: Any, cache: JudgeCallCache, *, max_tokens: int | None,
              workers: int = 4, errors: tuple[type[BaseException], ...] = (Exception,),
              progress: Callable[[int, int], None] | None = None) -> list[CallOutcome]:
    """Send many judge calls through ``cache`` on ``workers`` threads; outcomes in input order.

    Threads, not processes: a judge call waits on the network (the GIL is released while it waits), so
    ``workers`` threads keep ``workers`` requests in flight in one process; processes add start-up and
    pickling and no speed.  Several *processes* (shards, a resumed run) share the work through the cache.

    Parameters
    ----------
    prompts : sequence of (prompt, CallKey)
    llm : ChatLLM
    cache : JudgeCallCache
    max_tokens : int or None
    workers : int
        Calls in flight at once (>= 1).
    errors : tuple of exception types
        Failures recorded in the outcome (others propagate).
    progress : callable, optional
        ``progress(done, total)`` from the calling thread.

    Returns
    -------
    list of CallOutcome
    """
    def one(item: tuple[str, CallKey]) -> CallOutcome:
        prompt, ck = item
        try:
            reply, cached = cache.call(llm, prompt, ck, max_tokens=max_tokens)
        except errors as exc:
            return CallOutcome(None, exc, False)
        return CallOutcome(reply, None, cached)

    out: list[CallOutcome] = []
    with ThreadPoolExecutor(max(1, workers)) as pool:
        try:
            for outcome in pool.map(one, prompts):
                out.append(outcome)
                if progress:
                    progress(len(out), len(prompts))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return out


__all__ = ["FORMAT", "CallKey", "call_key", "request_params", "JudgeCallCache", "CallOutcome", "run_calls"]
