"""Human review sessions: durable decisions (:mod:`evaluators.review.store`), agreement
(:mod:`evaluators.review.agreement`), items built from scored runs (:mod:`evaluators.review.items`)
and JSONL / CSV exchange (:mod:`evaluators.review.exchange`)."""

from evaluators.review.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha, session_agreement
from evaluators.review.store import LABELS, Decision, Item, ReviewStore, Session, StaleDecision, item_digest

__all__ = ["LABELS", "Decision", "Item", "ReviewStore", "Session", "StaleDecision", "cohen_kappa", "fleiss_kappa",
           "item_digest", "krippendorff_alpha", "session_agreement"]
