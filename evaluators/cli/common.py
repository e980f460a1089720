"""What every command shares: its exit codes, its error line, and user text made safe for a terminal line.

Every command module returns one of the exit codes below from its ``run`` (:func:`evaluators.cli.main`
exits with it) and writes an unusable input's reason with :func:`fail`.
"""

from __future__ import annotations

import sys

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
