"""Process pools for batch scoring: the same per-record functions over chunks, merged in input order.

Batch commands take ``--workers N``: records (or document pairs) are cut into chunks, each
chunk is scored by the very function the single-process path calls, in one of ``N`` worker
processes (forked from this one on Linux, so they start with its imported modules; the QA
reader, busy reading, scores chunks in this process too beside ``N - 1`` workers), and the
results come back in input order, so every aggregate is computed once, in
this process, from the same per-record values: the report is identical to the one of
``--workers 1`` (tests compare them field by field).

Only the command line uses pools; pages score in the server process.  The function sent
to the workers must be picklable (a module-level function or a :func:`functools.partial`
of one).  See ``docs/scaling.md`` for the same functions on Dask or Ray.

Batch engines call :func:`map_ordered` with one *chunk function* (items -> their results, in
order): in one process it gets every item at once and its results stream one by one (a
progress bar per item, state such as a scorer built once); with workers it gets chunks.
:func:`imap_chunks` is the lower-level piece (chunks in, ``(chunk, result)`` out) for
callers that merge per chunk themselves.

``--scheduler URL`` / ``--scheduler local[:N]`` (:func:`open_scheduler`) hands the same chunks to a
Dask cluster (dask.distributed, an optional install) instead of a process pool: while a
:class:`DaskScheduler` is open, every ``workers > 1`` call of :func:`imap_chunks` submits its chunks
there, so every batch engine gains it in this one place, with the same chunk functions and the
same in-order merge (the report equals the in-process one).
"""

from __future__ import annotations

import gc
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from itertools import islice
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a batch of short-lived, acyclic objects (records, scores).

    Without the pause the collector runs its passes over every object alive (the records read,
    the rows scored) again and again for nothing; reference counting still frees everything.
    It is switched back on (if it was on) when the block ends.
    """
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: Chunks submitted ahead of the one being collected, per worker (bounds memory on a stream).
AHEAD_PER_WORKER = 2


def add_workers_argument(parser) -> None:
    """Add ``--workers N`` to an argparse parser (1 default, 0 one per CPU); see :func:`worker_count`.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="processes scoring chunks of records (default 1: this one alone; 0 = one "
                             "per CPU); the results are the same for any N")
    parser.add_argument("--scheduler", metavar="URL|local[:N]",
                        help="score the chunks on a Dask cluster instead (needs dask[distributed]): the scheduler's "
                             "address (tcp://HOST:8786), or local[:N] for a cluster of N processes on this machine "
                             "(default one per CPU); replaces --workers; the results are the same")


def worker_count(requested: int | None) -> int:
    """``requested`` workers, with 0 (or ``None``) meaning one per CPU; at least 1.

    Parameters
    ----------
    requested : int or None

    Returns
    -------
    int

    Raises
    ------
    ValueError
        For a negative count.
    """
    if requested is None or requested == 0:
        return max(1, os.cpu_count() or 1)
    if requested < 0:
        raise ValueError(f"workers must be 0 (one per CPU) or a positive count, not {requested}")
    return requested


def forks_workers() -> bool:
    """Whether worker processes are forked from this one (Linux): they then start with its imported modules
    and its state, its string hash seed included, instead of importing everything again.  Never while a
    Dask scheduler is open (:func:`open_scheduler`): its workers are processes of their own."""
    return _DASK is None and sys.platform.startswith("linux")


def local_pool() -> bool:
    """Whether ``workers > 1`` means this machine's process pool (not a Dask cluster): the workers can then
    read the input's files by path, and write files of their own that this process reads, each running one
    chunk at a time.  A Dask worker may be on another machine (or run chunks on several threads): the data
    travels with the chunks and the results come back with them."""
    return _DASK is None


class Inherited:
    """A value for the chunk function that forked workers take from this process's memory, not from a pickle.

    ``partial(fn, Inherited(state))`` is pickled with every chunk; with workers forked from this
    process (:func:`forks_workers`), only a key travels and each worker uses its own copy of the
    value as it was when the workers were forked, for every chunk it scores (a scorer's caches
    then carry over from chunk to chunk); elsewhere the value itself is pickled.  Call the object
    for the value; :meth:`close` forgets it here (after the pool is shut down).  An object that
    was unpickled with its value always pickles its value again: a Dask scheduler in a process of
    its own unpickles the chunks it is sent and pickles them again for its workers.
    """

    def __init__(self, value: Any):
        self.value = value
        self.key = id(self)
        self.carried = False  # True: unpickled with its value (not from this process's registry)
        _INHERITED[self.key] = value

    def __call__(self) -> Any:
        return self.value

    def close(self) -> None:
        """Drop this process's reference in the registry."""
        _INHERITED.pop(self.key, None)

    def __reduce__(self):
        return _inherited, (self.key, None if forks_workers() and not self.carried else self.value)


#: Values of live :class:`Inherited` objects by key (copied into workers when they are forked).
_INHERITED: dict[int, Any] = {}


def _inherited(key: int, value: Any) -> Inherited:
    """Unpickle an :class:`Inherited` in a worker: its value from the registry the worker was forked with."""
    obj = Inherited.__new__(Inherited)
    obj.key, obj.value, obj.carried = key, (_INHERITED[key] if value is None else value), value is not None
    return obj


#: Allocations below this size come from the heap, and freed heap memory is kept (see :func:`keep_freed_memory`).
KEEP_BELOW, KEEP_FREED = 32 << 20, 1 << 30


def keep_freed_memory() -> bool:
    """Have the C allocator (glibc) keep freed memory for the next allocations instead of giving it back.

    A process that allocates and frees the same few MiB for every chunk (a block of lines read, its
    records, the rows rendered) otherwise returns them to the system after each chunk (glibc maps
    buffers over its mmap threshold afresh, and trims the heap's free top) and takes a page fault
    per 4 KiB to get them back for the next one: measured 1,900 faults a 1 MiB block in a QA
    worker, a quarter of its time.  Sets ``M_MMAP_THRESHOLD`` to :data:`KEEP_BELOW` and
    ``M_TRIM_THRESHOLD`` to :data:`KEEP_FREED` (``mallopt(3)``); memory is still reused, and
    given back when the process ends.  For worker processes and command-line runs, not for a
    long-lived server.

    Returns
    -------
    bool
        Whether the settings were made (``False`` where the C library is not glibc).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
    return bool(mallopt(m_mmap_threshold, KEEP_BELOW)) and bool(mallopt(m_trim_threshold, KEEP_FREED))


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of ``size`` items (the last may be shorter); ``size`` >= 1.

    Parameters
    ----------
    items : iterable
        Read once, lazily.
    size : int
        Items per chunk (a size below 1 counts as 1).

    Yields
    ------
    list

    Examples
    --------
    >>> list(chunked(range(5), 2))
    [[0, 1], [2, 3], [4]]
    """
    it = iter(items)
    while chunk := list(islice(it, max(1, size))):
        yield chunk


def imap_chunks(fn: Callable[[Any], R], chunks: Iterable[list[T]], workers: int = 1, *,
                payload: Callable[[list[T]], Any] | None = None, here: bool = True) -> Iterator[tuple[list[T], R]]:
    """``(chunk, fn(payload(chunk)))`` for each chunk, in input order.

    Parameters
    ----------
    fn : callable
        Applied to each chunk's payload.  With ``workers > 1`` this process and ``workers - 1``
        worker processes (forked from it where the system allows: they start with its imported
        modules) share the chunks: a chunk goes to a worker while fewer than
        :data:`AHEAD_PER_WORKER` of its chunks are waiting there, else this process scores it
        itself.  ``fn`` and the payload must then be picklable; the results are the same.
    chunks : iterable of list
        Consumed lazily: at most ``AHEAD_PER_WORKER * workers`` chunks are in flight.
    workers : int
        1 runs everything in this process (no pool).
    payload : callable, optional
        What to send of a chunk (e.g. only the fields the worker needs); default the chunk.
    here : bool
        True (default): this process scores chunks too, beside ``workers - 1`` workers (for a
        caller that reads its input while the workers score, such as the QA reader: this process
        is busy anyway).  False: ``workers`` worker processes score every chunk and this process
        only hands them out and collects them (for chunks already in memory: a process that
        scores holds the GIL, so the pool's threads here hand work to the workers and take their
        results late, and the workers wait; measured on narrative documents, 1.1x on 2 cores
        with this process scoring, 1.7x without).  Ignored while a Dask scheduler is open
        (:func:`open_scheduler`): every chunk then goes to the cluster, at most
        ``AHEAD_PER_WORKER`` per worker thread in flight.

    Raises
    ------
    Whatever ``fn`` raises, when its chunk is collected (the pool is shut down).
    """
    payload = payload or (lambda chunk: chunk)
    if workers <= 1:
        for chunk in chunks:
            yield chunk, fn(payload(chunk))
        return
    if _DASK is not None:  # --scheduler: every chunk to the cluster (the data travels with it)
        yield from _dask_chunks(fn, chunks, payload, AHEAD_PER_WORKER * max(workers, _DASK.workers))
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor  # not imported for --help or one worker

    context = multiprocessing.get_context("fork") if forks_workers() else None
    pool_size = workers - 1 if here else workers
    ahead, limit = AHEAD_PER_WORKER * pool_size, AHEAD_PER_WORKER * workers
    with ProcessPoolExecutor(max_workers=pool_size, mp_context=context, initializer=keep_freed_memory) as pool:
        pending: deque = deque()  # (chunk, future, None) sent to a worker, (chunk, None, result) scored here
        for chunk in chunks:
            if not here or sum(1 for _, future, _ in pending if future is not None and not future.done()) < ahead:
                pending.append((chunk, pool.submit(fn, payload(chunk)), None))
            else:  # the workers have enough waiting: this process scores the chunk
                pending.append((chunk, None, fn(payload(chunk))))
            while pending and (len(pending) >= limit or pending[0][1] is None or pending[0][1].done()):
                done, future, result = pending.popleft()
                yield done, (future.result() if future is not None else result)
        while pending:
            done, future, result = pending.popleft()
            yield done, (future.result() if future is not None else result)


def _as_list(fn: Callable[[list[T]], Iterable[R]], chunk: list[T]) -> list[R]:
    """``list(fn(chunk))``: a chunk's results materialised in the worker (a generator cannot be pickled)."""
    return list(fn(chunk))


def map_ordered(fn: Callable[[list[T]], Iterable[R]], items: Iterable[T], workers: int = 1, *,
                chunk_size: int) -> Iterator[R]:
    """Results of ``fn`` over ``items``, one per item, in input order: the chunk -> pool -> merge of batch engines.

    Parameters
    ----------
    fn : callable
        A chunk function: a list of items -> an iterable of their results, one per item, in
        order.  Must be picklable when ``workers > 1`` (a module-level function or a
        :func:`functools.partial` of one).
    items : iterable
        With one worker, passed to ``fn`` as one list and its results yielded as ``fn``
        produces them (a generator streams item by item).  With several, consumed lazily in
        chunks of ``chunk_size`` (at most ``AHEAD_PER_WORKER * workers`` chunks in flight).
    workers : int
        1 (or less): everything in this process, no pool.  More: that many worker processes score
        the chunks and this process collects them (:func:`imap_chunks` with ``here=False``).
    chunk_size : int
        Items per chunk sent to a worker: large enough that scoring a chunk costs much more
        than pickling it there and back.

    Raises
    ------
    Whatever ``fn`` raises (with workers: when its chunk is collected; the pool is shut down).
    """
    if workers <= 1:
        yield from fn(items if isinstance(items, list) else list(items))
        return
    for _, results in imap_chunks(partial(_as_list, fn), chunked(items, chunk_size), workers, here=False):
        yield from results


# --- Dask (``--scheduler``) -------------------------------------------------------------------------------------

#: The open :class:`DaskScheduler` that :func:`imap_chunks` submits chunks to, or None (a process pool).
_DASK: DaskScheduler | None = None

#: What ``--scheduler`` without dask installed says (exit 2).
DASK_MISSING = ('--scheduler needs Dask: pip install "dask[distributed]" '
                "(or pip install -r requirements-optional.txt)")


class SchedulerError(ValueError):
    """``--scheduler`` cannot be used: Dask not installed, a malformed value, no scheduler at the address, or (while
    chunks are scored) a cluster left without any worker (:func:`await_result`)."""


#: Seconds a chunk's result is waited for between two looks at the cluster's workers (:func:`await_result`).
POLL_S = 1.0


def connect_timeout() -> float:
    """Seconds of Dask's ``distributed.comm.timeouts.connect`` (30 by default): how long the client waits for the
    scheduler, for a first worker, and for a worker again when every one is gone while chunks are scored."""
    import dask.config
    from dask.utils import parse_timedelta

    return float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="s"))


def await_result(client: Any, future: Any, spec: str, grace: float, poll: float = POLL_S) -> Any:
    """``future.result()``, waited for ``poll`` seconds at a time; between two waits the cluster's workers are
    counted, and once it has had none for ``grace`` seconds (every worker died or left, or the scheduler no longer
    answers) the wait ends instead of lasting for ever (a Dask future waits for a worker to come).

    Parameters
    ----------
    client : distributed.Client
        Any object with ``nthreads() -> {worker: threads}`` (a test's fake too).
    future : distributed.Future
        Any object with ``result(timeout=seconds)`` raising ``TimeoutError`` while not done.
    spec : str
        The ``--scheduler`` value, for the message.
    grace : float
        Seconds without any worker before giving up (a worker that comes back within them resumes the wait).
    poll : float
        Seconds of one wait.

    Raises
    ------
    SchedulerError
        No worker for ``grace`` seconds; the message says so and that the run was stopped (the CLI: exit 2).
    Whatever the chunk's function raised.
    """
    import time

    alone_since = None
    while True:
        try:
            return future.result(timeout=poll)
        except TimeoutError:
            pass
        try:
            workers = len(client.nthreads())
        except Exception:  # noqa: BLE001 - a scheduler that no longer answers has no worker for us either
            workers = 0
        now = time.monotonic()
        if workers:
            alone_since = None
        elif alone_since is None:
            alone_since = now
        elif now - alone_since >= grace:
            raise SchedulerError(f"--scheduler {spec}: the Dask cluster has had no worker for {grace:g} s while "
                                 "chunks were waiting to be scored (every worker died or left, or the scheduler "
                                 "stopped answering); the run was stopped, nothing was written")


class DaskScheduler:
    """A Dask client (and, for ``local[:N]``, the cluster it started) that batch engines send chunks to.

    Open with :func:`open_scheduler`; :meth:`close` (or ``with``) closes the client, and the local cluster.

    Attributes
    ----------
    spec : str
        The ``--scheduler`` value.
    client : distributed.Client
    cluster : distributed.LocalCluster or None
    workers : int
        The ``workers`` count to give the engines: the cluster's threads, at least 2 (so that every
        engine takes its chunked path); it also bounds the chunks in flight.
    """

    def __init__(self, spec: str, client: Any, cluster: Any = None):
        self.spec, self.client, self.cluster = spec, client, cluster
        self.workers = max(2, sum(client.nthreads().values()))

    def __enter__(self) -> DaskScheduler:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop sending chunks to Dask; close the client, then the local cluster if this process started one."""
        global _DASK
        if _DASK is self:
            _DASK = None
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()


def parse_scheduler(spec: str) -> tuple[str, int | str]:
    """``("local", processes)`` for ``local`` / ``local:N``, ``("url", address)`` for a scheduler's address.

    Parameters
    ----------
    spec : str
        ``local``, ``local:N`` (N >= 1 processes, ``local`` alone: one per CPU), or an address such as
        ``tcp://10.0.0.5:8786`` (a ``HOST:PORT`` without a scheme means ``tcp://``).

    Raises
    ------
    SchedulerError
        For an empty value, ``local:`` with no positive count, or an address without a port.

    Examples
    --------
    >>> parse_scheduler("local:2"), parse_scheduler("10.0.0.5:8786")
    (('local', 2), ('url', 'tcp://10.0.0.5:8786'))
    """
    text = (spec or "").strip()
    if text == "local" or text.startswith("local:"):
        count = text[len("local:"):] if ":" in text else "0"
        if not count.isdigit() or (text != "local" and int(count) < 1):
            raise SchedulerError(f"--scheduler {spec}: local:N needs a positive number of processes")
        return "local", worker_count(int(count))
    address = text if "://" in text else f"tcp://{text}"
    rest = address.split("://", 1)[1]
    if not rest or (address.startswith(("tcp://", "tls://")) and not rest.rpartition(":")[2].isdigit()):
        raise SchedulerError(f"--scheduler {spec}: not a scheduler address (tcp://HOST:PORT) nor local[:N]")
    return "url", address


def local_cluster_options(processes: int, dashboard: str | None = None) -> dict:
    """``LocalCluster`` keywords for ``processes`` worker processes of one thread that open no port not asked for.

    ``dashboard_address=None`` does not turn the scheduler's web server off: distributed then listens
    on its default 8787.  The server (it also serves ``/health``) is bound to a loopback port the system
    picks, with the dashboard's pages off, unless ``dashboard="HOST:PORT"`` asks for them there; the
    scheduler and workers talk on loopback ports the system picks (as ``examples/dask_qa.py``).
    """
    ports = ({"dashboard_address": dashboard, "scheduler_kwargs": {"dashboard": True}} if dashboard else
             {"dashboard_address": "127.0.0.1:0", "scheduler_kwargs": {"dashboard": False}})
    return {"n_workers": processes, "threads_per_worker": 1, "processes": True, "host": "127.0.0.1", **ports}


def open_scheduler(spec: str) -> DaskScheduler:
    """Connect to the Dask scheduler of ``spec`` (or start a local cluster) and send chunks there until closed.

    Parameters
    ----------
    spec : str
        See :func:`parse_scheduler`.  The connection waits as long as Dask's
        ``distributed.comm.timeouts.connect`` setting (30 s by default;
        ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s`` shortens it), then for one worker as long again (a
        local cluster: for its workers, at least 60 s).  While chunks are scored, a cluster left without any
        worker for as long again stops the run (:func:`await_result`).

    Returns
    -------
    DaskScheduler
        Open: :func:`imap_chunks` submits ``workers > 1`` chunks to it until it is closed.

    Raises
    ------
    SchedulerError
        Dask is not installed (:data:`DASK_MISSING`), ``spec`` is malformed, no scheduler answers at the
        address, or it has no worker (a local cluster: its workers did not start).
    """
    global _DASK
    kind, where = parse_scheduler(spec)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SchedulerError(DASK_MISSING) from None
    cluster = None
    timeout = connect_timeout()
    if kind == "local":
        cluster = LocalCluster(**local_cluster_options(int(where)))
        client = Client(cluster)
        try:  # bounded: a worker that cannot start must not keep the command waiting
            client.wait_for_workers(int(where), timeout=max(timeout, 60.0))
        except (OSError, TimeoutError) as exc:
            client.close()
            cluster.close()
            raise SchedulerError(f"--scheduler {spec}: the local cluster's {where} worker(s) did not start "
                                 f"({exc})") from None
    else:
        try:
            client = Client(where, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            raise SchedulerError(f"--scheduler {spec}: no Dask scheduler answered at {where} "
                                 f"({type(exc).__name__}: {exc})") from None
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            client.close()
            raise SchedulerError(f"--scheduler {spec}: the Dask scheduler at {where} has no worker ({exc})") from None
    _DASK = DaskScheduler(spec, client, cluster)
    return _DASK


def _dask_chunks(fn: Callable[[Any], R], chunks: Iterable[list[T]], payload: Callable[[list[T]], Any],
                 limit: int) -> Iterator[tuple[list[T], R]]:
    """:func:`imap_chunks` on the open Dask client: every chunk scored on the cluster, at most ``limit`` in flight,
    results taken back (and released there) in input order."""
    client, spec = _DASK.client, _DASK.spec
    grace = connect_timeout()
    pending: deque = deque()  # (chunk, future)
    try:
        for chunk in chunks:
            pending.append((chunk, client.submit(fn, payload(chunk), pure=False)))
            while pending and (len(pending) >= limit or pending[0][1].done()):
                done, future = pending.popleft()
                yield done, await_result(client, future, spec, grace)
                future.release()
        while pending:
            done, future = pending.popleft()
            yield done, await_result(client, future, spec, grace)
            future.release()
    finally:
        if pending:  # an error (or the caller stopped): nothing left running for us on the cluster
            client.cancel([future for _, future in pending])
