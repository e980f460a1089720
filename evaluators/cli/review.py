"""``python -m evaluators review export|import|agreement|sessions|corrections|settings|delete|create|debt --db URL``:
review
sessions outside the page (``create`` and ``debt``: :mod:`evaluators.cli.review_carry`; ``patch``, ``estimate``
and ``gate``: :mod:`evaluators.cli.review_numbers`).

Identity: ``--as NAME`` (default: the login name) and, optionally, ``--role ROLE`` (owner, adjudicator,
annotator, viewer).  The same rule as the page decides (:func:`evaluators.review.service.may`): with
``--role`` the configured policy (``EVALBOARD_REVIEW_ROLES``), without it the rules by name (a blind
session, or one with gold items, is exported by its owner, its adjudicators and
``EVALBOARD_REVIEW_ADMINS``).  Every export, import, settings change and deletion is appended to the audit
trail with ``via = cli`` (an export's row once the whole export is written, an import's with its first
write).  The CLI still works with direct access to the database, so ``--as`` and ``--role`` are declared,
not authenticated: they guard against mistakes and name the actor in the audit trail; authentication is
the page's (``st.login``).  Exports are streamed; imports are read one line (or one Label Studio task) at
a time and written in batches.  ``--format label-studio`` exports Label Studio tasks (JSON) and
``label-studio-config`` their labeling config (XML); ``import`` reads our JSONL or a Label Studio
export (a JSON array, found by its first character; ``--format`` says which).

``delete`` removes a session with its items, decisions, history and adjudications, for its owner and
``EVALBOARD_REVIEW_ADMINS`` (with ``--role``: the policy, owners by default), only with ``--yes``; the
deletion and its audit row are one transaction, and the audit trail stays.

``settings`` is the exception: changing a session's settings (guidelines, label help, ``k``,
adjudicators, blind) is for its owner and ``EVALBOARD_REVIEW_ADMINS``, named by ``--as`` (default:
the login name), by the same rule as the page (:func:`evaluators.review.service.update_settings`).

Exit codes: 0 success; 2 unusable input (no such session, unreadable file, nothing imported, a
database of a newer EvalBoard, settings changed by someone who may not).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from pathlib import Path

from evaluators.cli.common import EXIT_OK, actor, fail, terminal


def add_parser(subparsers) -> None:
    """Register the ``review`` subcommand."""
    p = subparsers.add_parser("review", help="export / import review sessions, agreement between annotators",
                              description="Work with the review database of the dashboard's Review page.")
    from evaluators.cli import review_carry, review_numbers

    p.add_argument("action", choices=("export", "import", "agreement", "sessions", "corrections", "settings",
                                      "delete") + review_numbers.ACTIONS + review_carry.ACTIONS)
    p.add_argument("--db", metavar="URL_OR_FILE",
                   help="SQLAlchemy URL or SQLite file (default: EVALBOARD_DATABASE_URL, else "
                        "$EVALBOARD_DATA_DIR/review.sqlite)")
    p.add_argument("--session", metavar="NAME",
                   help="the session (export, agreement, corrections); import: the session Label Studio tasks go "
                        "into (default: the one named in the tasks, else 'Label Studio: FILE')")
    p.add_argument("--format", choices=("jsonl", "csv", "label-studio", "label-studio-config"),
                   help="export format (default jsonl; label-studio: Label Studio tasks JSON, label-studio-config: "
                        "its labeling config XML); import: jsonl or label-studio (default: found from the file)")
    p.add_argument("--input", metavar="FILE", help="import: a JSONL file written by export, or a Label Studio "
                                                   "JSON export; create, debt: the run (QA / fact-check file)")
    p.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    p.add_argument("--slice", dest="agreement_slice", choices=("system", "question-type", "time", "guidelines"),
                   help="agreement: the figures of each slice apart (each system, question type, guidelines "
                        "version, or ten windows of time), each with its interval and under-30 flag")
    g = p.add_argument_group("session settings (settings; without options: print them)")
    g.add_argument("--label-help", metavar="FILE.json",
                   help="settings: one-line help per label, a JSON object such as {\"gt_error\": \"...\"}")
    g.add_argument("--fast-seconds", type=float, metavar="S",
                   help="settings: decisions made in less than S seconds on the item are counted per annotator on "
                        "Team progress (default: EVALBOARD_REVIEW_FAST_SECONDS, else 2)")
    g.add_argument("--adjudicators", metavar="A,B", help="settings: the session's adjudicators (comma-separated; "
                                                         "an empty string: none)")
    g.add_argument("--as", dest="as_user", metavar="NAME",
                   help="who acts (default: your login name): settings are changed by the owner and "
                        "EVALBOARD_REVIEW_ADMINS, a blind session is exported by them and its adjudicators")
    g.add_argument("--yes", action="store_true",
                   help="delete: confirm (without it nothing is deleted: what would go is printed)")
    g.add_argument("--role", choices=("owner", "adjudicator", "annotator", "viewer"),
                   help="act in this role: the configured policy (EVALBOARD_REVIEW_ROLES) decides instead of "
                        "the rules by name")
    review_numbers.add_arguments(p)  # patch, estimate, gate: evaluators/cli/review_numbers.py
    review_carry.add_arguments(p)  # create, debt: evaluators/cli/review_carry.py
    p.set_defaults(func=run)



def run(args: argparse.Namespace) -> int:
    """Run the ``review`` subcommand; returns the exit code."""
    from evaluators.io.json_text import dumps_pretty
    from evaluators.reports.review import export_text
    from evaluators.review.schema import SchemaTooNew
    from evaluators.review.store import ReviewStore

    if args.action == "gate":  # needs no review database
        from evaluators.cli.review_numbers import run as run_numbers
        return run_numbers(args, None)
    if args.db and "://" not in args.db and not Path(args.db).exists() and args.action not in ("import", "create"):
        return fail(f"no review database at {args.db} (a path is created only by import or the Review page)")
    try:
        store = ReviewStore(args.db)
    except SchemaTooNew as exc:
        return fail(f"{terminal(args.db or 'the review database')}: {exc}")
    if args.action in ("create", "debt"):
        from evaluators.cli.review_carry import run as run_carry
        return run_carry(args, store)
    if args.action in ("patch", "estimate"):
        from evaluators.cli.review_numbers import run as run_numbers
        return run_numbers(args, lambda: store)
    who = actor(args)
    if args.action == "sessions":
        chunks = iter(["".join(f"{terminal(s.name)}\t{terminal(s.kind)}\t{s.n_items} items\t"
                               f"{store.progress(s.id, '').n_decisions} decisions"
                               f"{chr(9) + 'blind' if s.blind else ''}\n" for s in store.sessions())])
    elif args.action == "import":
        if not args.input:
            return fail("import needs --input FILE")
        from evaluators.review import service as rs
        try:
            rs.require(None, who, "import")
        except PermissionError as exc:
            return fail(terminal(exc))
        try:
            fh = open(args.input, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            return fail(f"cannot read {args.input}: {exc.strerror or exc}")
        if args.format not in (None, *rs.IMPORT_FORMATS):
            fh.close()
            return fail(f"import reads jsonl or label-studio, not {args.format}")
        # the objects that exist before the import (the loaded modules) do not become garbage during it:
        # the collector, which runs often while hundreds of thousands of lines are read, leaves them
        # alone until it ends (0.77x the CPU for 300k lines)
        gc.freeze()
        try:
            with fh:  # the page's import too (its audit row commits with the import's first write)
                report = rs.import_file(store, who, fh, args.input, fmt=args.format, into=args.session)
        finally:
            gc.unfreeze()
        for issue in report.issues:
            print(f"warning: {terminal(issue.location())}: {terminal(issue.message)}", file=sys.stderr)
        if not report.imported and not report.sessions_created and not report.items_added:
            return fail(f"{args.input}: nothing imported")
        chunks = iter([f"{report.written} decision(s) written, {report.unchanged} unchanged, "
                       f"{report.conflicts} conflict(s), {report.duplicates} duplicate(s); "
                       f"{report.sessions_created} session(s) and {report.items_added} item(s) added\n"])
    else:
        if not args.session:
            return fail(f"{args.action} needs --session NAME (see: review sessions)")
        session = store.session_by_name(args.session)
        if session is None:
            return fail(f"no review session named {terminal(args.session)!r}")
        if args.action == "settings":
            return _settings(args, store, session, who)
        if args.action == "delete":
            return _delete(args, store, session, who)
        if args.action in ("export", "corrections"):
            # checked first, then written, then audited: a refused or failed export leaves no audit row
            from evaluators.review import service as rs
            what = "corrections" if args.action == "corrections" else args.format or "jsonl"
            try:
                rs.export(store, session, who, what, lambda: _emit(export_text(store, session.id, what), args.out))
            except PermissionError as exc:
                return fail(terminal(exc))
            except OSError as exc:
                return fail(f"cannot write {terminal(args.out or 'the output')}: {exc.strerror or exc}")
            return EXIT_OK
        if getattr(args, "agreement_slice", None):
            from evaluators.review import service as rs
            if args.agreement_slice == "system" and "system" not in rs.agreement_slices(session, who):
                return fail(f"{terminal(session.name)!r} is blind: its system names are for its owner, adjudicators "
                            "and admins (--as NAME)")
            slices = _agreement_slices(store, session, args.agreement_slice)
            chunks = iter([dumps_pretty({"by": args.agreement_slice.replace("-", " "), "slices": slices}) + "\n"])
            for s in slices:  # intervals are in the JSON; flags also on stderr
                for field, block in s["agreement"].items():
                    for name, fig in block.get("figures", {}).items():
                        if fig.get("note"):
                            print(f"note: {s['slice']}: {field} {name}: {fig['note']}", file=sys.stderr)
        else:
            agreement = store.agreement(session.id)
            chunks = iter([dumps_pretty(agreement) + "\n"])
            for field, block in agreement.items():  # intervals are in the JSON; flags also on stderr
                for name, fig in block.get("figures", {}).items():
                    if fig.get("note"):
                        print(f"note: {field} {name}: {fig['note']}", file=sys.stderr)
    _emit(chunks, args.out)
    return EXIT_OK


def _emit(chunks, out_path: str | None) -> None:
    """Write the text chunks to ``out_path`` (UTF-8), else to standard output (raises ``OSError``)."""
    if out_path:
        with open(out_path, "w", encoding="utf-8", newline="") as out:
            for chunk in chunks:
                out.write(chunk)
    else:
        for chunk in chunks:
            sys.stdout.write(chunk)


def _delete(args: argparse.Namespace, store, session, who) -> int:
    """``review delete``: for the owner and the admins (or ``--role`` owner), checked and audited in the
    service (:func:`evaluators.review.service.delete_session`); without ``--yes`` it says what would go and
    deletes nothing (exit 2)."""
    from evaluators.review import service as rs

    try:
        rs.require(session, who, "delete")
    except PermissionError as exc:
        return fail(terminal(exc))
    if not args.yes:
        decisions = store.progress(session.id, "").n_decisions
        return fail(f"review delete removes session {terminal(session.name)!r} with its {session.n_items} item(s) and "
                    f"{decisions} decision(s) for good: add --yes to confirm")
    try:
        counts = rs.delete_session(store, session, who)
    except (PermissionError, LookupError) as exc:
        return fail(terminal(exc))
    print(f"deleted session {terminal(session.name)}: {counts['items']} item(s), {counts['decisions']} decision(s), "
          f"{counts['adjudications']} adjudication(s), {counts['history']} history row(s); the audit trail keeps "
          "the deletion")
    return EXIT_OK


def _agreement_slices(store, session, by: str) -> list[dict]:
    """``review agreement --slice``: one entry per slice, ``slice`` (its name; ``window N`` with ``from`` / ``to``
    for time) and ``agreement`` (the :func:`~evaluators.review.agreement.session_agreement` block)."""
    from evaluators.review.agreement import agreement_by_slice, agreement_over_time, item_slices

    if by == "guidelines":
        return [{"slice": "none" if v is None else f"v{v}", "agreement": block}
                for v, block in store.agreement_by_guidelines(session.id).items()]
    if by == "time":
        return [{"slice": f"window {w['window']}", "from": w["start"], "to": w["end"],
                 "n_decisions": w["n_decisions"], "agreement": w["agreement"]}
                for w in agreement_over_time(store.ratings(session.id))]
    blocks = agreement_by_slice(store.ratings(session.id), item_slices(store, session.id, by.replace("-", " ")))
    return [{"slice": "none" if v is None else v, "agreement": block} for v, block in blocks.items()]


def _settings(args: argparse.Namespace, store, session, who) -> int:
    """``review settings``: save the options given (owner only), then print the settings and the
    guidelines versions."""
    from evaluators.io.sources import read_file_bytes
    from evaluators.review import service as rs

    changes: dict = {}
    try:
        if args.guidelines:
            changes["guidelines"] = read_file_bytes(args.guidelines).decode("utf-8")
        if args.label_help:
            changes["labels_help"] = json.loads(read_file_bytes(args.label_help).decode("utf-8"))
            if not isinstance(changes["labels_help"], dict):
                return fail(f"{args.label_help}: label help must be a JSON object of label -> text")
    except OSError as exc:
        return fail(f"cannot read {exc.filename}: {exc.strerror or exc}")
    except (UnicodeDecodeError, ValueError) as exc:
        return fail(f"{terminal(args.label_help or args.guidelines)}: {terminal(exc)}")
    if args.k is not None:  # --k and --blind are create's options too
        changes["k"] = args.k
    if args.blind:
        changes["blind"] = True
    if args.adjudicators is not None:
        changes["adjudicators"] = [a for a in args.adjudicators.split(",") if a.strip()]
    if args.fast_seconds is not None:
        changes["fast_seconds"] = args.fast_seconds
    if changes:
        try:
            session = rs.update_settings(store, session, who, **changes)
        except (PermissionError, ValueError) as exc:
            return fail(terminal(exc))
    lines = [f"session: {terminal(session.name)}", f"owner: {terminal(session.created_by)}", f"k: {session.k}",
             f"blind: {'yes' if session.blind else 'no'}",
             f"adjudicators: {terminal(', '.join(session.adjudicators)) or '(none)'}",
             f"fast decisions: under {rs.fast_threshold(session):g} s"]
    for lab, text in sorted(((session.settings or {}).get("labels_help") or {}).items()):
        lines.append(f"label help: {lab}: {terminal(text)}")
    versions = rs.guidelines_versions(store, session)
    if not versions:
        lines.append("guidelines: (none)")
    for v in versions:
        current = " (current)" if v["version"] == session.guidelines_version else ""
        lines.append(f"guidelines v{v['version']}{current}: {len(v['text'])} characters, by "
                     f"{terminal(v['by'] or '?')} at {terminal(v['at'] or '?')}, {v['decisions']} decision(s)")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
