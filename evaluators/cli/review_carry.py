"""``python -m evaluators review create|debt``: sessions from a run file, and what is left to review.

- ``review create --input RUN --session NAME [--k N] [--blind] [--order random|informative]
  [--guidelines FILE.md] [--new-only] [--by NAME] [--seed N]``: a review session over the scored
  records of a QA / fact-check file (:func:`evaluators.review.create.create_qa_session`).  With
  ``--new-only`` (*review what's new*) it holds only the records whose (question, GT, prediction)
  has no final label in any session of the database; the others are carried with their verdict
  (counted on stdout, listed with ``--verbose``).
- ``review debt --input RUN``: per system, the records of the file, those already reviewed (a final
  label on their triple in some session) and the review debt (the rest)
  (:func:`evaluators.review.carry.debt_by_system`).

Exit codes: 0 success; 2 unusable input (unreadable file, a taken session name, nothing new).
The parser is :mod:`evaluators.cli.review`'s (these actions are registered there).
"""

from __future__ import annotations

import getpass
from pathlib import Path

from evaluators.cli.common import EXIT_OK, actor, fail, terminal

ACTIONS = ("create", "debt")


def add_arguments(p) -> None:
    """The options of :data:`ACTIONS` on the ``review`` parser."""
    from evaluators.review.create import ORDERS

    g = p.add_argument_group("new sessions and review debt (create, debt)")
    g.add_argument("--k", type=int, metavar="N", help="create: reviewers per item (default 1); settings: change it")
    g.add_argument("--blind", action="store_true", help="create, settings: hide system names and scores from "
                                                        "reviewers")
    g.add_argument("--order", choices=ORDERS, default="random",
                   help="create: random (default: the session's seeded shuffle, what an estimate from the reviewed "
                        "records needs) or informative (most informative first: records that split the systems, "
                        "partial credit, judge against metric)")
    g.add_argument("--guidelines", metavar="FILE.md", help="create: reviewing guidelines (Markdown), version 1; "
                                                             "settings: a new version")
    g.add_argument("--new-only", action="store_true",
                   help="create: review what's new: only records whose (question, GT, prediction) was never reviewed "
                        "in a session of this database; the others carry their verdict")
    g.add_argument("--by", metavar="NAME", help="create: the session's owner (default: your login name)")
    g.add_argument("--verbose", action="store_true", help="create: list the carried records")



def _owner(args) -> str:
    if args.by:
        return args.by
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "cli"


def run(args, store) -> int:
    """Run ``review create|debt`` on the open review database ``store``."""
    from evaluators.io import InputError
    from evaluators.io.sources import read_file_bytes
    from evaluators.review.create import create_qa_session, qa_file_items

    if not args.input:
        return fail(f"review {args.action} needs --input FILE (a QA / fact-check file with GT and predictions)")
    path = Path(args.input)
    try:
        data = read_file_bytes(path)
        items = qa_file_items(data, path.name)
    except OSError as exc:
        return fail(f"cannot read {path}: {exc.strerror or exc}")
    except InputError as exc:
        return fail(str(exc))
    if args.action == "debt":
        from evaluators.review.carry import debt_by_system

        rows = debt_by_system(store, items)
        print("system\trecords\treviewed\tdebt")
        for r in rows:
            print(f"{terminal(r.system if r.system is not None else '(one run)')}\t{r.records}\t{r.reviewed}\t{r.debt}")
        total = [sum(getattr(r, f) for r in rows) for f in ("records", "reviewed", "debt")]
        if len(rows) > 1:
            print(f"all\t{total[0]}\t{total[1]}\t{total[2]}")
        return EXIT_OK
    if not args.session:
        return fail("review create needs --session NAME (the new session's name)")
    guidelines = None
    if args.guidelines:
        try:
            guidelines = read_file_bytes(args.guidelines).decode("utf-8")
        except (OSError, ValueError) as exc:  # ValueError: over the size cap, or not UTF-8
            return fail(f"cannot read {args.guidelines}: {getattr(exc, 'strerror', None) or exc}")
    who = actor(args, args.by or getattr(args, "as_user", None) or _owner(args))
    try:  # checked, and audited in the session's own transaction (evaluators.review.service.create_session)
        made = create_qa_session(store, args.session, data, path.name, created_by=who, k=1 if args.k is None else args.k,
                                 blind=args.blind, seed=args.seed, order=args.order, guidelines=guidelines,
                                 new_only=args.new_only, items=items)
    except PermissionError as exc:
        return fail(terminal(exc))
    except ValueError as exc:
        return fail(str(exc))
    s = made.session
    print(f"session {terminal(s.name)}: {s.n_items} item(s) to review of {made.offered} in {terminal(path.name)} "
          f"(k = {s.k}, order {args.order}{', blind' if s.blind else ''})")
    if args.new_only:
        summary = (s.settings or {}).get("carried") or {}
        labels = ", ".join(f"{n} {label}" for label, n in (summary.get("labels") or {}).items())
        print(f"carried forward: {len(made.carried)} record(s) with an earlier verdict ({labels or 'none'}) from "
              f"{', '.join(map(terminal, summary.get('sessions') or [])) or 'no session'}")
        if args.verbose:
            for payload, c in made.carried:
                print(f"  carried\t{terminal(payload.get('id'))}\t{terminal(payload.get('system') or '')}\t{c.label}"
                      f"\t{terminal(c.session)}")
    return EXIT_OK
