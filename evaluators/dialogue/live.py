"""Live mode: ask a persona chat endpoint for each case's reply.

Protocol (the earlier persona script's server):

- ``POST {base}/chat`` with JSON ``{"message": context, "model_config_name": model}``;
  the reply is JSON with the text under ``"response"``.
- ``POST {base}/reset`` (no body) clears the conversation; it is sent after each scene
  (as the earlier script did) and also before the first scene sent in a run, so every
  scene starts with an empty history, also when a run resumes.

Each call has a timeout; transient failures (connection errors, timeouts, HTTP
408/409/429/5xx, honouring ``Retry-After``) are retried ``retries`` times with a short
exponential backoff; an HTTP 4xx, a redirect to another host, a reply over the size cap
and a malformed reply (not JSON, or without a text ``"response"``) are not retried.  A
case whose call still fails gets its error recorded and the run goes on (the case is then
scored as a missing reply).  Results are appended to a JSONL checkpoint as they arrive;
running again with the same checkpoint skips the cases already answered (failed ones are
tried again), so an interrupted or stopped run resumes.  A scene resumed half-way starts
again from an empty history: its earlier turns are not replayed.  Only the configured
endpoint is contacted, through :mod:`evaluators.net`: an http(s) URL only, within
``EVALBOARD_ALLOWED_HOSTS`` when that is set, no redirect to another host, replies capped
in size, and no reply body quoted in an error.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from evaluators import net
from evaluators.dialogue.inputs import DialogueCase, PredictionRow, index_key
from evaluators.io.readers import loads_json_line
from evaluators.io.replies import ReplyStore
from evaluators.results import DictMixin


class EndpointError(RuntimeError):
    """A chat or reset call failed after its retries; the message says why."""


#: The persona endpoint's settings: :class:`evaluators.net.EndpointSettings` (one class for every endpoint:
#: ``EndpointConfig(base_url, model, timeout_s, max_retries)``; ``model`` is sent as ``model_config_name``).
EndpointConfig = net.EndpointSettings


class ChatClient:
    """JSON-over-HTTP client for the persona endpoint (:func:`evaluators.net.post`, retried by tenacity).

    Raises
    ------
    evaluators.net.URLRejected
        At construction, when ``config.base_url`` may not be contacted (not http/https, or a
        host outside ``EVALBOARD_ALLOWED_HOSTS``).
    """

    def __init__(self, config: net.EndpointSettings, sleep: Callable[[float], None] = time.sleep,
                 policy: net.URLPolicy | None = None):
        self.policy = policy or net.URLPolicy.from_env()
        self.policy.check(config.base_url)
        self.config = config
        self._sleep = sleep
        # one client for the run, connections kept alive (the policy of the environment, as checked above)
        self._session = net.Session(replace(config, policy=self.policy))

    def close(self) -> None:
        """Close the kept-alive connections."""
        self._session.close()

    def _post(self, path: str, payload: dict | None) -> dict:
        url = self.config.base_url.rstrip("/") + path
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8") if payload is not None else b""
        attempts = 0

        def call() -> dict:
            nonlocal attempts
            attempts += 1
            body = self._session.post(url, data, headers={"Content-Type": "application/json"})
            try:
                return loads_json_line(body) if body.strip() else {}
            except (ValueError, RecursionError) as exc:  # a malformed reply: not retried, never quoted
                raise EndpointError(f"{path}: reply is not JSON ({len(body)} bytes) after {attempts} "
                                    "attempt(s)") from exc

        try:
            return net.retrying(call, max_retries=self.config.max_retries, backoff_s=self.config.backoff_s,
                                max_backoff_s=self.config.max_backoff_s, sleep=self._sleep)
        except net.HTTPFailure as exc:
            raise EndpointError(f"{path}: {exc} after {attempts} attempt(s)") from exc

    def chat(self, message: str) -> str:
        """The persona's reply to ``message``.

        Raises
        ------
        EndpointError
            After the retries, or when the reply has no text ``"response"``.
        """
        data = self._post("/chat", {"message": message, "model_config_name": self.config.model})
        reply = data.get("response") if isinstance(data, dict) else None
        if isinstance(reply, str):
            return reply
        raise EndpointError("/chat: reply has no text 'response' field")

    def reset(self) -> None:
        """Clear the conversation history.

        Raises
        ------
        EndpointError
            After the retries.
        """
        self._post("/reset", None)


@dataclass
class LiveRun(DictMixin):
    """Outcome of :func:`run_live` for one model.

    Attributes
    ----------
    model : str
    rows : list of PredictionRow
        One row per case in case order; failed cases have ``error`` set and an empty prediction.
        A stopped run lists only the cases with a reply so far (from this run or the checkpoint).
    n_called : int
        Cases sent to the endpoint in this run.
    n_resumed : int
        Cases taken from the checkpoint without calling.
    n_errors : int
        Cases whose call failed.
    reset_errors : list of str
        Failed resets (the run went on).
    stopped : bool
        True when ``should_stop`` ended the run early (the checkpoint keeps what was done).
    """

    model: str
    rows: list[PredictionRow] = field(default_factory=list)
    n_called: int = 0
    n_resumed: int = 0
    n_errors: int = 0
    reset_errors: list[str] = field(default_factory=list)
    stopped: bool = False


def _checkpoint_key(rec: dict) -> tuple:
    return str(rec.get("scene")), index_key(rec.get("dialogue_index")), int(rec.get("occurrence", 0) or 0)


def open_checkpoint(path: str | Path | None, model: str) -> ReplyStore:
    """The live checkpoint as a :class:`~evaluators.io.replies.ReplyStore` (JSONL layout, the one reply store):
    ``model``'s answered cases by ``(scene, dialogue index, occurrence)``; failed replies and other models' lines
    stay in the file but are not reused.  A line cut by an interruption is skipped and ended."""
    store = ReplyStore(path, layout="jsonl", key=_checkpoint_key,
                       accept=lambda rec: rec.get("model") == model and not rec.get("error"))
    store.open_for_append()
    return store


def run_live(cases: list[DialogueCase], config: EndpointConfig, *, checkpoint: str | Path | None = None,
             progress: Callable[[int, int, PredictionRow], None] | None = None,
             should_stop: Callable[[], bool] | None = None, client: ChatClient | None = None) -> LiveRun:
    """Collect one model's replies from the endpoint, scene by scene.

    Parameters
    ----------
    cases : list of DialogueCase
        In the order to send them; scenes are taken in first-seen order.
    config : EndpointConfig
    checkpoint : path, optional
        JSONL file of results so far; answered cases in it are not sent again.
    progress : callable, optional
        ``progress(done, total, row)`` after each case.
    should_stop : callable, optional
        Checked before each case still to ask (and before a scene's first reset); once it
        returns True nothing more is sent
        (no further chat or reset), the rest of the cases answered in the checkpoint are still
        listed, and ``stopped`` is set.  A later run with the same checkpoint resumes.
    client : ChatClient, optional
        For tests; built from ``config`` by default.

    Returns
    -------
    LiveRun
    """
    own_client = client is None
    client = client or ChatClient(config)
    ckpt = Path(checkpoint) if checkpoint else None
    store = open_checkpoint(ckpt, config.model) if ckpt else None
    done = store.entries if store is not None else {}
    out = LiveRun(model=config.model)
    scenes = list(dict.fromkeys(c.scene for c in cases))
    total = len(cases)
    count = 0
    source = f"{config.base_url} (live)"
    history_clean = False
    for scene in scenes:
        scene_cases = [c for c in cases if c.scene == scene]
        pending = [c for c in scene_cases if c.key not in done]
        if pending and not out.stopped and should_stop is not None and should_stop():
            out.stopped = True
        if pending and not history_clean and not out.stopped:
            try:
                client.reset()
            except EndpointError as exc:
                out.reset_errors.append(f"before scene {scene!r}: {exc}")
        for case in scene_cases:
            rec = done.get(case.key)
            if rec is None and not out.stopped and should_stop is not None and should_stop():
                out.stopped = True
            if rec is not None:
                out.n_resumed += 1
                row = PredictionRow(config.model, case.scene, case.dialogue_index, str(rec.get("prediction", "")),
                                    file=str(ckpt), occurrence=case.occurrence)
            elif out.stopped:
                continue  # stopped: only replies already in the checkpoint are listed, nothing is asked
            else:
                out.n_called += 1
                try:
                    reply, error = client.chat(case.context), None
                except EndpointError as exc:
                    reply, error = "", str(exc)
                    out.n_errors += 1
                row = PredictionRow(config.model, case.scene, case.dialogue_index, reply, file=source,
                                    occurrence=case.occurrence, error=error)
                if store is not None:
                    store.put(case.key, {
                        "model": config.model, "scene": case.scene, "dialogue_index": case.dialogue_index,
                        "occurrence": case.occurrence, "prediction": reply, "error": error,
                    })
            out.rows.append(row)
            count += 1
            if progress:
                progress(count, total, row)
        if pending and not out.stopped:
            try:
                client.reset()
                history_clean = True
            except EndpointError as exc:
                history_clean = False
                out.reset_errors.append(f"after scene {scene!r}: {exc}")
    if own_client:
        client.close()
    return out
