"""``python -m evaluators review export|import|agreement --db URL``: review decisions outside the page.

Exit codes: 0 success; 2 unusable input (no such session, unreadable file, nothing imported).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    """Register the ``review`` subcommand."""
    p = subparsers.add_parser("review", help="export / import review decisions, agreement between annotators",
                              description="Work with the review database of the dashboard's Review page.")
    from evaluators.cli import review_numbers

    p.add_argument("action", choices=("export", "import", "agreement", "sessions", "corrections")
                   + review_numbers.ACTIONS)
    p.add_argument("--db", metavar="URL_OR_FILE",
                   help="SQLAlchemy URL or SQLite file (default: EVALBOARD_DATABASE_URL, else "
                        "$EVALBOARD_DATA_DIR/review.sqlite)")
    p.add_argument("--session", metavar="NAME", help="the session (export, agreement, corrections)")
    p.add_argument("--format", choices=("jsonl", "csv"), default="jsonl", help="export format (default jsonl)")
    p.add_argument("--input", metavar="FILE", help="import: a JSONL file written by export")
    p.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    review_numbers.add_arguments(p)  # patch, estimate, gate: evaluators/cli/review_numbers.py
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run the ``review`` subcommand; returns the exit code."""
    from evaluators.reports.review import export_csv
    from evaluators.review.agreement import session_agreement
    from evaluators.review.exchange import export_jsonl, import_jsonl
    from evaluators.review.store import ReviewStore

    if args.action == "gate":  # needs no review database
        from evaluators.cli.review_numbers import run as run_numbers
        return run_numbers(args, None)
    if args.db and "://" not in args.db and not Path(args.db).exists() and args.action != "import":
        return _fail(f"no review database at {args.db} (a path is created only by import or the Review page)")
    store = ReviewStore(args.db)
    if args.action in ("patch", "estimate"):
        from evaluators.cli.review_numbers import run as run_numbers
        return run_numbers(args, lambda: store)
    if args.action == "sessions":
        text = "".join(f"{s.name}\t{s.kind}\t{len(store.items(s.id))} items\t{len(store.decisions(s.id))} decisions\n"
                       for s in store.sessions())
    elif args.action == "import":
        if not args.input:
            return _fail("import needs --input FILE")
        try:
            data = Path(args.input).read_bytes()
        except OSError as exc:
            return _fail(f"cannot read {args.input}: {exc.strerror or exc}")
        written, unchanged, issues = import_jsonl(store, data, args.input)
        for issue in issues:
            print(f"warning: {issue.location()}: {issue.message}", file=sys.stderr)
        if not written and not unchanged:
            return _fail(f"{args.input}: no decision imported")
        text = f"{written} decision(s) written, {unchanged} unchanged\n"
    else:
        if not args.session:
            return _fail(f"{args.action} needs --session NAME (see: review sessions)")
        session = store.session_by_name(args.session)
        if session is None:
            return _fail(f"no review session named {args.session!r}")
        if args.action == "export":
            text = export_csv(store, session.id) if args.format == "csv" else export_jsonl(store, session.id)
        elif args.action == "corrections":
            text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in store.gt_corrections(session.id))
        else:
            agreement = session_agreement(store.decisions(session.id))
            text = json.dumps(agreement, ensure_ascii=False, indent=2) + "\n"
            for field, block in agreement.items():  # intervals are in the JSON; flags also on stderr
                for name, fig in block["figures"].items():
                    if fig["note"]:
                        print(f"note: {field} {name}: {fig['note']}", file=sys.stderr)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
