"""Live-mode jobs of an interactive session: start, go on after an interruption, stop, collect the replies.

A page (or any front end that reruns its script) keeps a live run as a *job* in a mutable
mapping it owns (Streamlit's ``session_state``; a plain ``dict`` in tests).  The rules:

- :meth:`LiveJobs.start` records the job (cases digest, URL, model, timeout, retries) and
  clears a stop request;
- every run of the page calls :meth:`LiveJobs.run` while a job is recorded: it asks the
  endpoint for the cases still without a reply in the job's checkpoint (one JSONL per
  cases, endpoint and model under ``live_dir``), so a run cut short (a rerun of the page is
  a ``BaseException`` in Streamlit) goes on from where it was in the next run;
- :meth:`LiveJobs.request_stop` makes the running job stop after the reply in progress;
  every reply received so far is kept;
- a job ends (is removed) when it finished, stopped, or failed with a located reason (URL
  refused, settings, checkpoint not writable) or an unexpected error (which is raised);
  an interruption (``BaseException`` that is not an ``Exception``) leaves it recorded;
- a job for other cases than the ones now loaded does not apply and is dropped
  (:meth:`LiveJobs.current`);
- the replies of each model's latest run are kept in the mapping (:meth:`LiveJobs.rows`),
  replacing that model's earlier ones, and are scored with the file predictions.

Nothing here imports Streamlit; ``tests/unit/test_dialogue_live_job.py`` drives it with a dict.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path

from evaluators.dialogue.inputs import DialogueCase, PredictionRow, PredictionSet
from evaluators.dialogue.live import EndpointConfig, run_live
from evaluators.net import URLRejected

#: Keys of the mapping (kept as before the move, so open sessions keep their jobs).
JOB_KEY, STOP_KEY, ROWS_KEY = "dialogue_live_job", "dialogue_live_stop_requested", "dialogue_live_rows"


def checkpoint_path(live_dir: str | Path, cases_key: str, url: str, model: str) -> Path:
    """The checkpoint of these cases (by digest), endpoint and model under ``live_dir``."""
    name = hashlib.blake2b(f"{cases_key}|{url.strip()}|{model}".encode(), digest_size=12).hexdigest()
    return Path(live_dir) / (name + ".jsonl")


@dataclass(frozen=True)
class LiveOutcome:
    """How a job's run ended, for the page to show.

    Attributes
    ----------
    level : str
        ``success``, ``warning`` (stopped early) or ``error`` (nothing asked; the reason in ``message``).
    message : str
        Plain text (the page escapes it).
    warnings : tuple of str
        Further notes (failed resets).
    n_rows : int
        Replies kept from this run (asked or from the checkpoint).
    """

    level: str
    message: str
    warnings: tuple[str, ...] = ()
    n_rows: int = 0


@dataclass
class LiveJobs:
    """The live-mode job state of one session, kept in ``state`` (see the module docstring).

    Parameters
    ----------
    state : mutable mapping
        Where the job, the stop request and the replies live between runs.
    live_dir : path
        Folder of the checkpoints.
    """

    state: MutableMapping
    live_dir: Path

    # ------------------------------------------------------------------ state
    def current(self, cases_key: str) -> dict | None:
        """The recorded job, or ``None``; a job for other cases is dropped first."""
        job = self.state.get(JOB_KEY)
        if job is not None and job.get("cases") != cases_key:
            del self.state[JOB_KEY]
            job = None
        return job

    def start(self, cases_key: str, url: str, model: str, timeout: float, retries: int) -> None:
        """Record a job (the next :meth:`run` asks the endpoint)."""
        self.state[JOB_KEY] = {"cases": cases_key, "url": url.strip(), "model": model, "timeout": float(timeout),
                               "retries": int(retries)}
        self.state[STOP_KEY] = False

    def request_stop(self) -> None:
        """Ask the running job to stop after the reply in progress."""
        self.state[STOP_KEY] = True

    def stop_requested(self) -> bool:
        return bool(self.state.get(STOP_KEY, False))

    def checkpoint(self, cases_key: str, url: str, model: str) -> Path:
        return checkpoint_path(self.live_dir, cases_key, url, model)

    def has_replies(self, cases_key: str, url: str, model: str) -> bool:
        """Whether a checkpoint with replies for these cases, URL and model exists."""
        return self.checkpoint(cases_key, url, model).exists()

    def rows(self) -> list[PredictionRow]:
        """The live replies of this session (each model's latest run)."""
        return list(self.state.get(ROWS_KEY, []))

    def prediction_sets(self) -> list[PredictionSet]:
        """The live replies as one prediction set (none when there are no replies)."""
        rows = self.rows()
        return [PredictionSet(rows=rows, files=["live endpoint"])] if rows else []

    # ------------------------------------------------------------------ run
    def run(self, cases: list[DialogueCase], progress: Callable[[int, int], None] | None = None) -> LiveOutcome:
        """Go on with the recorded job until it is done or stopped; end it (see the module docstring).

        Raises
        ------
        RuntimeError
            When no job is recorded.
        Exception
            An unexpected failure, after the job was ended.
        """
        job = self.state.get(JOB_KEY)
        if job is None:
            raise RuntimeError("no live job to run")
        checkpoint = self.checkpoint(job["cases"], job["url"], job["model"])
        try:
            checkpoint.parent.mkdir(parents=True, exist_ok=True)
            run = run_live(cases, EndpointConfig(job["url"], job["model"], job["timeout"], job["retries"]),
                           checkpoint=checkpoint, should_stop=self.stop_requested,
                           progress=(lambda d, t, row: progress(d, t)) if progress else None)
        except URLRejected as exc:
            outcome = LiveOutcome("error", f"This URL is not contacted: {exc}")
        except ValueError as exc:
            outcome = LiveOutcome("error", f"Live mode settings: {exc}")
        except OSError as exc:
            outcome = LiveOutcome("error", f"Cannot write the live-mode checkpoint under {self.live_dir}: "
                                           f"{exc.strerror or exc}")
        except Exception:  # an unexpected failure ends the job; an interruption (BaseException) does not:
            del self.state[JOB_KEY]  # a run cut by a rerun goes on from its checkpoint in the next one
            raise
        else:
            kept = [r for r in self.state.get(ROWS_KEY, []) if r.model != job["model"]]
            self.state[ROWS_KEY] = kept + run.rows
            model = job["model"]
            if run.stopped:
                outcome = LiveOutcome("warning", f"{model}: stopped; {len(run.rows)} of {len(cases)} replies kept "
                                                 f"({run.n_called} asked in this run). Ask again to go on with "
                                                 "the others.", n_rows=len(run.rows))
            else:
                outcome = LiveOutcome("success", f"{model}: {run.n_called} replies asked, {run.n_resumed} kept "
                                                 f"from earlier runs, {run.n_errors} errors (recorded per case).",
                                      n_rows=len(run.rows))
            outcome = LiveOutcome(outcome.level, outcome.message,
                                  tuple(f"reset failed {err}" for err in run.reset_errors), outcome.n_rows)
        del self.state[JOB_KEY]
        return outcome
