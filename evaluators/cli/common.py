"""What every command shares: its exit codes, its error line, user text made safe for a terminal line, and
inputs typed without their flag.

Every command module returns one of the exit codes below from its ``run`` (:func:`evaluators.cli.main`
exits with it) and writes an unusable input's reason with :func:`fail`.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

#: Success (a report was written or printed).
EXIT_OK = 0
#: A run that failed as a whole: an unexpected error (a bug, one line on stderr), a gate the candidate
#: does not pass (``review gate``), a judge whose every request failed (``memory --judge``).
EXIT_FAILED = 1
#: Unusable input or options: the reason on stderr (:func:`fail`), nothing scored.
EXIT_INPUT = 2
#: Interrupted from the keyboard (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130


def fail(message: object) -> int:
    """Write ``error: <message>`` on stderr and return :data:`EXIT_INPUT`.

    Parameters
    ----------
    message : object
        Why the input or options cannot be used, as one line (user text in it already made safe with
        :func:`terminal` where it may hold control characters).

    Returns
    -------
    int
        :data:`EXIT_INPUT`, for the command to return: ``return fail("no such file")``.
    """
    print(f"error: {message}", file=sys.stderr)
    return EXIT_INPUT


def actor(args: argparse.Namespace, name: str | None = None):
    """Who acts in a review command: ``name`` (else ``--as``, else the login name; ``None`` when there is
    none) in ``--role`` (``None``: no role, the rules by name), from the CLI
    (:class:`evaluators.review.roles.Actor`)."""
    import getpass

    from evaluators.review.roles import Actor

    try:
        name = name or getattr(args, "as_user", None) or getpass.getuser()
    except (KeyError, OSError):
        return None
    return Actor(name, getattr(args, "role", None), via="cli")


def terminal(text: object) -> str:
    """User text for a terminal line: control and format characters (escape sequences, tabs,
    newlines, bidirectional overrides) shown as ``⟨U+XXXX⟩``.

    Parameters
    ----------
    text : object
        Any value; written with ``str``.

    Returns
    -------
    str
        One line, safe to print (:func:`evaluators.reports.escape.visible`, tabs and newlines named too).

    >>> terminal("a\\tb\\n")
    'a⟨U+0009⟩b⟨U+000A⟩'
    """
    from evaluators.reports.escape import visible

    return visible(text).replace("\t", "⟨U+0009⟩").replace("\n", "⟨U+000A⟩")


@dataclass(frozen=True)
class Positional:
    """An input a newcomer types without its flag (``evalboard qa FILE``), kept beside the flag (``--input``).

    Attributes
    ----------
    dest : str
        The flag's destination (``args.<dest>``), where the merged value ends up.
    metavar : str
        Its name in the usage line and in messages (``FILE``, ``GT``, ``RESULTS``).
    flag : str
        The flag that gives the same input (``--input``).
    many : bool
        Several values (``FILE [FILE ...]``; the flag is then repeatable and ``args.<dest>`` a list).
    required : bool
        Give it one way or the other, else exit 2 naming both ways.
    help : str
        What it is, for ``--help`` (the flag is named after it).
    """

    dest: str
    metavar: str
    flag: str
    many: bool = False
    required: bool = True
    help: str = ""


def add_positionals(p: argparse.ArgumentParser, *specs: Positional) -> None:
    """Add each input of ``specs`` as a positional argument (optional to argparse: :func:`merge_positionals`
    checks it against its flag after parsing). The flags themselves are added by the command, not required."""
    for spec in specs:
        p.add_argument(f"{spec.dest}_positional", metavar=spec.metavar, nargs="*" if spec.many else "?",
                       help=(spec.help + "; " if spec.help else "") + f"or give it with {spec.flag}")
    p.set_defaults(_positionals=specs)


def merge_positionals(args: argparse.Namespace, prog: str = "python -m evaluators") -> str | None:
    """Put the positional inputs into their flags' places; the error message when an input is given twice
    differently, not at all, or one too many (``None`` when all is well).

    The values typed without a flag fill, in order, the inputs no flag gave (``narrative --gt G P``: ``P`` is
    PRED); a value equal to its input's flag value is the same input given both ways.
    """
    specs = list(getattr(args, "_positionals", ()))
    if not specs:
        return None
    typed: list[str] = []
    for spec in specs:
        value = getattr(args, f"{spec.dest}_positional", None)
        typed += list(value or []) if spec.many else ([value] if value is not None else [])
    typed += list(getattr(args, "_typed_after_options", ()))
    flags = {spec.dest: getattr(args, spec.dest, None) for spec in specs}
    usage = " ".join(s.metavar + (" [...]" if s.many else "") for s in specs if s.required or s.many)
    free = [s for s in specs if not flags[s.dest]]
    if not any(s.many for s in specs) and len(typed) > len(free):
        given = {flags[s.dest] for s in specs if flags[s.dest] and not s.many}
        typed = [v for v in typed if v not in given] if len(typed) - len(free) else typed  # the same both ways
        if len(typed) > len(free):
            extra = typed[len(free):]
            clash = next((s for s in specs if flags[s.dest] and not s.many), None)
            if clash is not None:
                return (f"{clash.metavar} given twice: {typed[0]} (as {clash.metavar}) and {flags[clash.dest]} "
                        f"({clash.flag}); give it once, as {clash.metavar} or with {clash.flag}, not both")
            return (f"one input too many: {' '.join(extra)}; {prog} {args.command} takes {usage} "
                    f"({', '.join(s.flag for s in specs)})")
    for spec in specs:
        flagged = flags[spec.dest]
        if spec.many and spec in free:
            value, typed = typed, []
        elif spec.many:
            value = list(flagged)
            if typed and typed != value:
                return (f"{spec.metavar} given twice: {' '.join(typed)} (as {spec.metavar}) and {' '.join(value)} "
                        f"({spec.flag}); give them once, as {spec.metavar} or with {spec.flag}, not both")
            typed = []
        elif flagged:
            value = flagged
            if typed and typed[0] == flagged:
                typed.pop(0)  # the same input both ways (dialogue C --cases C P)
        else:
            value = typed.pop(0) if typed else None
        if spec.required and not value:
            return (f"{args.command} needs {spec.metavar}: {prog} {args.command} {usage} "
                    f"(or {spec.flag} {spec.metavar})")
        setattr(args, spec.dest, value if value else ([] if spec.many else None))
    return None
