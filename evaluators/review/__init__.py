"""Human review sessions: durable decisions (:mod:`evaluators.review.store`), agreement
(:mod:`evaluators.review.agreement`; the statistics are :mod:`evaluators.metrics.agreement`'s),
items built from scored runs (:mod:`evaluators.review.items`) and JSONL / CSV exchange
(:mod:`evaluators.review.exchange`).

The names below are imported when first used (PEP 562): importing a submodule such as
:mod:`evaluators.review.items` (every scoring page does, for its *Review* button) does not load
the store and SQLAlchemy, which cost a page's first render a quarter of a second."""

from importlib import import_module

#: Public name -> the submodule that defines it.
_HOMES = {"LABELS": "store", "Decision": "store", "Item": "store", "ReviewStore": "store", "Session": "store",
          "StaleDecision": "store", "item_digest": "store", "session_agreement": "agreement"}

__all__ = ["LABELS", "Decision", "Item", "ReviewStore", "Session", "StaleDecision", "item_digest", "session_agreement"]


def __getattr__(name: str):
    if name in _HOMES:
        value = getattr(import_module(f"evaluators.review.{_HOMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evaluators.review' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
