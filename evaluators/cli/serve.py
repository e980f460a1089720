"""``evalboard serve``: start the dashboard from wherever it is, with the project's Streamlit settings.

Where the dashboard is (:func:`find_dashboard`): in a checkout, the repository's ``app.py`` (beside
the ``evaluators`` package that runs this command); when installed, ``<prefix>/share/evalboard/app.py``
(the installed distribution's file list first, then the data folders of ``sysconfig``, ``sys.prefix``
and the user scheme).  Each candidate must hold ``app.py``, ``pages/`` and ``.streamlit/config.toml``.

The settings are the project's ``.streamlit/config.toml`` beside ``app.py``: Streamlit reads that file
itself (a config file beside the main script, whatever the working directory), and this command also
passes each of its options as a ``streamlit run`` flag (``--browser.gatherUsageStats false`` ...), so
they hold whatever Streamlit finds elsewhere.  An option the user sets, as a flag after ``serve`` or as
a ``STREAMLIT_*`` environment variable, is left to the user.  The working directory stays the caller's
(``.evalboard/`` and ``.streamlit/secrets.toml`` are looked for there, as with ``streamlit run app.py``).

Exit codes: 2 when the dashboard's files or its settings cannot be found, or the data folder cannot be
made; otherwise the process becomes the Streamlit server (its exit code is the server's).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import sysconfig
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path

from evaluators.cli.common import EXIT_OK, fail

#: The dashboard's files under an installation prefix (``[tool.setuptools.data-files]`` in pyproject.toml).
SHARE = Path("share") / "evalboard"
#: The project's Streamlit settings, relative to the folder of ``app.py``.
CONFIG = Path(".streamlit") / "config.toml"


def add_parser(subparsers) -> None:
    """Register the ``serve`` subcommand (further ``streamlit run`` options are passed through)."""
    p = subparsers.add_parser(
        "serve", allow_abbrev=False,
        help="start the dashboard (Streamlit) with the project's settings",
        description="Start the EvalBoard dashboard: the checkout's app.py, or the installed "
                    "<prefix>/share/evalboard/app.py, with the project's .streamlit/config.toml (theme, upload "
                    "limit, no usage statistics, the project's own sidebar, headless). Further options are "
                    "passed to `streamlit run` and override the project's, e.g. "
                    "`evalboard serve --port 8650 --server.address 0.0.0.0`.",
        epilog="Exit code 2: the dashboard's files or its settings were not found.")
    p.add_argument("--port", type=int, metavar="N", help="port to listen on (default: Streamlit's, 8501)")
    p.add_argument("--data-dir", metavar="DIR",
                   help="folder of the review database, live-mode checkpoints and judge caches "
                        "(sets EVALBOARD_DATA_DIR, and EVALBOARD_JUDGE_CACHE_DIR to DIR/judge_cache unless set; "
                        "default: .evalboard in the working directory)")
    p.set_defaults(func=run, pass_through=True)


# ----------------------------------------------------------------------------- where the dashboard is
def _checkout() -> Path:
    """The folder above the ``evaluators`` package: the repository root in a checkout."""
    import evaluators

    return Path(evaluators.__file__).resolve().parents[1]


def _recorded() -> list[Path]:
    """``share/evalboard`` as recorded in the installed distribution's file list (any scheme or prefix)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("evalboard")
    except metadata.PackageNotFoundError:
        return []
    found = []
    for f in dist.files or []:
        if f.as_posix().endswith("share/evalboard/app.py"):
            found.append(Path(dist.locate_file(f)).resolve().parent)
    return found


def candidate_dirs() -> list[Path]:
    """Folders that may hold the dashboard, most specific first (duplicates removed)."""
    out: list[Path] = [_checkout()]
    out += _recorded()
    prefixes: list[str | None] = [sysconfig.get_path("data"), sys.prefix, sys.exec_prefix]
    try:
        prefixes.append(sysconfig.get_path("data", sysconfig.get_preferred_scheme("user")))
    except (KeyError, AttributeError):  # pragma: no cover - a platform without a user scheme
        pass
    import site

    prefixes += [site.getuserbase(), sys.base_prefix]
    out += [Path(p) / SHARE for p in prefixes if p]
    seen, unique = set(), []
    for d in out:
        key = os.path.normcase(os.path.abspath(d))
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique


def is_dashboard(folder: Path) -> bool:
    """``folder`` holds ``app.py`` and ``pages/``."""
    return (folder / "app.py").is_file() and (folder / "pages").is_dir()


def find_dashboard(candidates: Iterable[Path] | None = None) -> Path | None:
    """The first candidate folder (:func:`candidate_dirs` by default) holding the dashboard, or ``None``."""
    for folder in candidate_dirs() if candidates is None else candidates:
        if is_dashboard(folder):
            return folder
    return None


# ----------------------------------------------------------------------------- the streamlit command
def _snake(name: str) -> str:
    """``maxUploadSize`` -> ``max_upload_size`` (Streamlit's environment variable spelling)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def env_var(option: str) -> str:
    """The environment variable Streamlit reads for ``option``: ``server.maxUploadSize`` ->
    ``STREAMLIT_SERVER_MAX_UPLOAD_SIZE``."""
    return "STREAMLIT_" + _snake(option.replace(".", "_")).upper()


def config_flags(config: Path) -> dict[str, str]:
    """The options of a Streamlit ``config.toml`` as ``{"section.option": "value"}`` (booleans as true/false;
    lists are left to the file, which Streamlit reads beside the script)."""
    data = tomllib.loads(config.read_text(encoding="utf-8"))
    flags: dict[str, str] = {}

    def walk(prefix: str, table: dict) -> None:
        for key, value in table.items():
            name = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict):
                walk(name, value)
            elif isinstance(value, list):  # no one-word flag spelling; Streamlit reads it from the file
                continue
            elif isinstance(value, bool):
                flags[name] = "true" if value else "false"
            else:
                flags[name] = str(value)

    walk("", data)
    return flags


def user_options(extra: Sequence[str]) -> set[str]:
    """Names of the Streamlit options among pass-through arguments (``--server.port 1`` / ``--server.port=1``)."""
    return {a[2:].split("=", 1)[0] for a in extra if a.startswith("--") and "." in a.split("=", 1)[0]}


def streamlit_command(app_dir: Path, *, port: int | None = None, extra: Sequence[str] = (),
                      environ: dict[str, str] | None = None, python: str = sys.executable) -> list[str]:
    """The ``python -m streamlit run`` command line that serves ``app_dir/app.py`` with its settings.

    Parameters
    ----------
    app_dir : Path
        Folder of ``app.py``, ``pages/`` and ``.streamlit/config.toml``.
    port : int, optional
        ``--server.port``.
    extra : sequence of str
        Further ``streamlit run`` options, passed as given, last; an option among them (or set in
        ``environ`` as ``STREAMLIT_*``) replaces the project's value instead of repeating it.
    environ : dict, optional
        The environment the server will run in (default ``os.environ``).
    python : str
        Interpreter that runs Streamlit (this one by default).

    Returns
    -------
    list of str
    """
    environ = os.environ if environ is None else environ
    theirs = user_options(extra)
    if port is not None:
        if "server.port" in theirs:
            raise ValueError("give the port once: --port or --server.port")
        theirs.add("server.port")
    cmd = [python, "-m", "streamlit", "run", str(app_dir / "app.py")]
    for name, value in config_flags(app_dir / CONFIG).items():
        if name not in theirs and env_var(name) not in environ:
            cmd += [f"--{name}", value]
    if port is not None:
        cmd += ["--server.port", str(port)]
    return cmd + list(extra)


def run(args: argparse.Namespace) -> int:
    """Run the ``serve`` subcommand: replace this process by the Streamlit server (exit 2 if not found)."""
    import importlib.util

    app_dir = find_dashboard()
    if app_dir is None:
        where = "\n  ".join(str(d) for d in candidate_dirs())
        return fail("the EvalBoard dashboard (app.py and pages/) was not found; looked in:\n  " + where +
                    "\n(in a checkout, run from the repository; installed, `pip install` puts it under "
                    "<prefix>/share/evalboard)")
    if not (app_dir / CONFIG).is_file():
        return fail(f"the dashboard's settings {app_dir / CONFIG} are missing (theme, upload limit, no usage "
                    "statistics): reinstall EvalBoard")
    if importlib.util.find_spec("streamlit") is None:
        return fail("streamlit is not installed in this Python (pip install -r requirements.txt)")
    extra = list(getattr(args, "extra", []) or [])
    if extra and extra[0] == "--":
        extra = extra[1:]
    env = dict(os.environ)
    if args.data_dir:
        data = Path(args.data_dir).expanduser().resolve()
        try:
            data.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return fail(f"cannot make the data folder {data}: {exc.strerror or exc}")
        env["EVALBOARD_DATA_DIR"] = str(data)
        env.setdefault("EVALBOARD_JUDGE_CACHE_DIR", str(data / "judge_cache"))
    try:
        cmd = streamlit_command(app_dir, port=args.port, extra=extra, environ=env)
    except ValueError as exc:
        return fail(exc)
    print(f"EvalBoard: serving {app_dir / 'app.py'} with {app_dir / CONFIG}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt":  # pragma: no cover - exec does not replace the process on Windows
        import subprocess

        return subprocess.call(cmd, env=env)
    os.execve(cmd[0], cmd, env)  # the server is this process: signals and the exit code are its own
    return EXIT_OK  # pragma: no cover - not reached
