"""Human review sessions: durable decisions (:mod:`evaluators.review.store`), agreement
(:mod:`evaluators.review.agreement`; the statistics are :mod:`evaluators.metrics.agreement`'s),
items built from scored runs (:mod:`evaluators.review.items`) and JSONL / CSV exchange
(:mod:`evaluators.review.exchange`)."""

from evaluators.review.agreement import session_agreement
from evaluators.review.store import LABELS, Decision, Item, ReviewStore, Session, StaleDecision, item_digest

__all__ = ["LABELS", "Decision", "Item", "ReviewStore", "Session", "StaleDecision", "item_digest", "session_agreement"]
