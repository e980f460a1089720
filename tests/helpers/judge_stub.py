"""A local stub judge for the judge lab's tests: configurable rules, injectable biases, no network.

A :class:`StubJudge` gives a binary verdict (1 right, 0 wrong) for an item knowing its true (human) label,
the answer's length and the A/B order, by rules:

- ``sensitivity`` / ``specificity``: the probability of calling a right answer right and a wrong one wrong;
- ``memorised``: item ids whose verdict is the human label itself (a prompt tuned on its dev examples);
- ``length_bias``: added to the probability of "right" per ``length_unit`` characters above
  ``length_centre`` (a judge that likes long answers), clipped to [0, 1];
- ``first_position``: in an A/B comparison, the probability of picking the answer shown first whatever
  the answers (position bias); otherwise it picks the better answer with probability ``pair_accuracy``.

Every draw comes from a generator seeded with ``sha256(seed, item id, what)``, so a verdict depends only on
the stub's settings and the item: the same item gets the same verdict in any order and any batch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np


def _uniform(seed: int, item_id: str, what: str) -> float:
    digest = hashlib.sha256(f"{seed}:{item_id}:{what}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0 ** 64


@dataclass(frozen=True)
class StubJudge:
    sensitivity: float = 0.9
    specificity: float = 0.9
    memorised: frozenset = field(default_factory=frozenset)
    length_bias: float = 0.0
    length_unit: float = 100.0
    length_centre: float = 300.0
    first_position: float = 0.0
    pair_accuracy: float = 0.9
    seed: int = 0

    def p_right(self, label: int, length: float | None = None) -> float:
        """The probability of the verdict "right" for an answer of ``label`` and ``length``."""
        p = self.sensitivity if label == 1 else 1.0 - self.specificity
        if length is not None and self.length_bias:
            p += self.length_bias * (length - self.length_centre) / self.length_unit
        return min(1.0, max(0.0, p))

    def verdict(self, item_id: str, label: int, length: float | None = None) -> int:
        """The stub's verdict on one item (1 right, 0 wrong)."""
        if item_id in self.memorised:
            return int(label)
        return int(_uniform(self.seed, item_id, "verdict") < self.p_right(label, length))

    def verdicts(self, items, lengths=None) -> dict[str, int]:
        """Verdicts of ``items`` (``(item_id, label)`` pairs), with answer lengths by id when given."""
        return {i: self.verdict(i, lab, None if lengths is None else lengths[i]) for i, lab in items}

    def pick(self, item_id: str, better: str, order: str) -> str:
        """The answer (``"a"`` or ``"b"``) picked in an A/B comparison shown in ``order`` (``"ab"`` or ``"ba"``)."""
        if _uniform(self.seed, item_id, f"position:{order}") < self.first_position:
            return order[0]
        right = _uniform(self.seed, item_id, f"pair:{order}") < self.pair_accuracy
        return better if right else ("b" if better == "a" else "a")


def scores_array(judge: StubJudge, labels: np.ndarray, lengths: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Vectorised verdicts for simulations: ``rng`` draws, :meth:`StubJudge.p_right` rules (no memorised ids)."""
    p = np.where(labels == 1, judge.sensitivity, 1.0 - judge.specificity)
    if judge.length_bias:
        p = p + judge.length_bias * (lengths - judge.length_centre) / judge.length_unit
    return (rng.random(labels.shape) < np.clip(p, 0.0, 1.0)).astype(int)


class StubJudgeServer:
    """An OpenAI-compatible ``/v1/chat/completions`` endpoint answering ``yes`` / ``no`` by :class:`StubJudge` rules.

    The prompt names its version (``VERSION: <name>``, one :class:`StubJudge` per name in ``versions``), its item
    (``[item <id>]`` in the question) and the answer (``Answer: <text>`` up to a blank line, whose length feeds
    the length bias); the true label of each item comes from ``labels``.  ``requests`` counts the requests.
    """

    def __init__(self, versions: dict, labels: dict):
        import json
        import re

        from tests.helpers.http_servers import RecordingServer

        outer = self

        class _Server(RecordingServer):
            def respond(self, path, raw, headers):
                prompt = json.loads(raw)["messages"][-1]["content"]
                version = re.search(r"VERSION: (\S+)", prompt).group(1)
                item = re.search(r"\[item (\S+?)\]", prompt).group(1)
                answer = re.search(r"Answer: (.*?)(?:\n\n|$)", prompt, re.S).group(1)
                with self._lock:
                    outer.requests += 1
                v = outer.versions[version].verdict(item, outer.labels[item], len(answer))
                return 200, {"id": "stub", "object": "chat.completion", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "yes" if v else "no"},
                     "finish_reason": "stop"}]}, {}

        self.versions, self.labels, self.requests = versions, labels, 0
        self._server = _Server()

    @property
    def base_url(self) -> str:
        return f"{self._server.url}/v1"

    def __enter__(self):
        self._server.__enter__()
        return self

    def __exit__(self, *exc):
        self._server.__exit__(*exc)


class LatencyJudgeServer:
    """An OpenAI-compatible judge endpoint with a fixed latency that honours ``Idempotency-Key``.

    Each request waits ``latency_s`` and answers ``yes`` or ``no`` for the item named in the prompt
    (``[item <id>]``) by a fixed rule of the id (:meth:`label`), so a label depends on the item only.
    ``executions`` counts the judgements it made (a "call" of the model); a request repeating an
    ``Idempotency-Key`` already seen is answered from its record (``replays``), waiting for the first one
    when it is still running, as endpoints that honour the header do.  ``requests`` counts HTTP requests,
    ``keys`` the idempotency keys seen, ``max_in_flight`` the most executions at once.
    """

    def __init__(self, latency_s: float = 0.2, seed: int = 0):
        import json
        import re
        import threading
        import time

        from tests.helpers.http_servers import RecordingServer

        outer = self
        self.latency_s, self.seed = latency_s, seed
        self.requests = self.executions = self.replays = self.in_flight = self.max_in_flight = 0
        self.keys: dict[str, threading.Event] = {}
        self.replies: dict[str, bytes] = {}
        lock = threading.Lock()

        class _Server(RecordingServer):
            def respond(self, path, raw, headers):
                key = next((v for k, v in headers.items() if k.lower() == "idempotency-key"), None)
                prompt = json.loads(raw)["messages"][-1]["content"]
                item = re.search(r"\[item (\S+?)\]", prompt).group(1)
                with lock:
                    outer.requests += 1
                    first = key is None or key not in outer.keys
                    if first:
                        if key is not None:
                            outer.keys[key] = threading.Event()
                        outer.executions += 1
                        outer.in_flight += 1
                        outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                    else:
                        outer.replays += 1
                if not first:
                    outer.keys[key].wait(60)
                    return 200, outer.replies[key], {}
                try:
                    time.sleep(outer.latency_s)
                    body = json.dumps({"id": "stub", "object": "chat.completion", "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": "yes" if outer.label(item) else "no"},
                         "finish_reason": "stop"}]}).encode("utf-8")
                finally:
                    with lock:
                        outer.in_flight -= 1
                if key is not None:
                    outer.replies[key] = body
                    outer.keys[key].set()
                return 200, body, {}

        self._server = _Server()

    def label(self, item_id: str) -> int:
        """The stub's verdict on an item (1 yes, 0 no): a fixed draw of the id and the seed."""
        return int(_uniform(self.seed, item_id, "latency-judge") < 0.5)

    @property
    def base_url(self) -> str:
        return f"{self._server.url}/v1"

    def __enter__(self):
        self._server.__enter__()
        return self

    def __exit__(self, *exc):
        self._server.__exit__(*exc)
