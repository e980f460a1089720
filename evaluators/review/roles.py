"""Roles of signed-in reviewers: which ID-token groups make an owner, adjudicator, annotator or viewer,
and which role may do which review action (:func:`permitted`).  The page (``st.login``) and the CLI
(``--as NAME --role ROLE``) both ask :func:`evaluators.review.service.may`, which asks this module
whenever the acting person carries a role (:class:`Actor`).  Without a role (a typed name, no sign-in)
the service keeps its rules by name (owner, the session's adjudicators, ``EVALBOARD_REVIEW_ADMINS``).

Configuration: ``EVALBOARD_REVIEW_ROLES`` names a TOML file::

    claim = "groups"            # the ID-token claim that holds the groups (a list, or one string)
    max_age_s = 28800           # a sign-in older than this is sent back to login (0: no limit)
    default_role = "viewer"     # a signed-in person in none of the groups below ("" : no role at all)

    [groups]                    # group -> role; a person in several groups gets the strongest role
    "eval-owners" = "owner"
    "eval-adjudicators" = "adjudicator"
    "eval-annotators" = "annotator"
    "eval-viewers" = "viewer"

    [actions]                   # optional: replace the roles allowed to do an action
    export = ["owner", "adjudicator"]

Without the file, a group named like a role (``owner`` ...) maps to that role, the claim is
``groups``, the maximum age 8 hours and :data:`DEFAULT_POLICY` applies.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from typing import Any

ROLES_ENV = "EVALBOARD_REVIEW_ROLES"
#: Strongest first.
ROLES = ("owner", "adjudicator", "annotator", "viewer")
#: The review actions the service layer guards (each allowed mutating or revealing one is audited):
#: ``create`` a session, change its ``settings`` (guidelines, label help, k, adjudicators, blind),
#: mark ``gold`` items, ``decide`` (and skip), ``undo`` one's last decision, ``adjudicate``, ``export`` a
#: blind session or one with gold items (an open one is open to every role), write a ``patch`` of GT
#: corrections, ``import`` decisions, ``delete`` a session.
ACTIONS = ("create", "settings", "gold", "decide", "undo", "adjudicate", "export", "patch", "import", "delete")
#: Which roles may do each action unless the configuration says otherwise.
DEFAULT_POLICY: dict[str, frozenset[str]] = {
    "create": frozenset({"owner"}),
    "settings": frozenset({"owner"}),
    "gold": frozenset({"owner"}),
    "decide": frozenset({"owner", "adjudicator", "annotator"}),
    "undo": frozenset({"owner", "adjudicator", "annotator"}),
    "adjudicate": frozenset({"owner", "adjudicator"}),
    "export": frozenset({"owner", "adjudicator"}),
    "patch": frozenset({"owner", "adjudicator"}),
    "import": frozenset({"owner"}),
    "delete": frozenset({"owner"}),
}
DEFAULT_MAX_AGE_S = 8 * 3600


class Actor(str):
    """An acting name that carries its role and where it acts from.

    A plain ``str`` everywhere a name is expected (stored, compared, shown); ``role`` ``None`` is a
    typed name without sign-in (the rules by name apply).

    Parameters
    ----------
    name : str
    role : str, optional
        One of :data:`ROLES`, ``""`` for a signed-in person without a role, ``None`` for no sign-in.
    via : str
        ``page`` or ``cli`` (the audit trail's column).
    """

    role: str | None
    via: str

    def __new__(cls, name: str, role: str | None = None, via: str = "page") -> Actor:
        self = super().__new__(cls, name)
        self.role, self.via = role, via
        return self


def role_of(who: Any) -> str | None:
    """The role ``who`` acts in (``None``: a plain name, no role)."""
    return getattr(who, "role", None)


def via_of(who: Any) -> str:
    """``page`` or ``cli`` (a plain name: ``page``)."""
    return getattr(who, "via", "page")


@dataclass(frozen=True)
class RoleConfig:
    """The mapping of groups to roles and the policy (:func:`load_config`)."""

    groups: dict[str, str] = field(default_factory=lambda: {r: r for r in ROLES})
    claim: str = "groups"
    max_age_s: int = DEFAULT_MAX_AGE_S
    default_role: str = "viewer"
    policy: dict[str, frozenset[str]] = field(default_factory=lambda: dict(DEFAULT_POLICY))

    def role_for(self, groups: Any) -> str:
        """The strongest role among ``groups`` (a list, or one string), else ``default_role``.

        Parameters
        ----------
        groups : list of str, str or None
            The claim's value.

        Returns
        -------
        str
            One of :data:`ROLES`, or ``""`` (no role).
        """
        if isinstance(groups, str):
            groups = [groups]
        found = {self.groups[g] for g in groups or () if isinstance(g, str) and g in self.groups}
        return next((r for r in ROLES if r in found), self.default_role)

    def permitted(self, action: str, role: str | None) -> bool:
        """Whether ``role`` may do ``action`` (an unknown action or role: never).

        Parameters
        ----------
        action : str
            One of :data:`ACTIONS`.
        role : str or None

        Returns
        -------
        bool
        """
        return bool(role) and role in self.policy.get(action, frozenset())


def _check_role(value: Any, where: str, *, empty: bool = False) -> str:
    if value in ROLES or (empty and value == ""):
        return value
    raise ValueError(f"{where}: role must be one of {', '.join(ROLES)}, not {value!r:.60}")


def parse_config(data: dict[str, Any], where: str = ROLES_ENV) -> RoleConfig:
    """A :class:`RoleConfig` from the parsed TOML (see the module docstring).

    Raises
    ------
    ValueError
        An unknown role or action, or a value of the wrong type (named with ``where``).
    """
    groups = data.get("groups", None)
    if groups is not None and not isinstance(groups, dict):
        raise ValueError(f"{where}: [groups] must be a table of group = role")
    mapping = {str(g): _check_role(r, f"{where} [groups] {g!r}") for g, r in (groups or {}).items()}
    policy = dict(DEFAULT_POLICY)
    actions = data.get("actions", {})
    if not isinstance(actions, dict):
        raise ValueError(f"{where}: [actions] must be a table of action = [roles]")
    for action, roles in actions.items():
        if action not in ACTIONS:
            raise ValueError(f"{where}: unknown action {action!r:.60} (actions: {', '.join(ACTIONS)})")
        if not isinstance(roles, list):
            raise ValueError(f"{where}: [actions] {action} must be a list of roles")
        policy[action] = frozenset(_check_role(r, f"{where} [actions] {action}") for r in roles)
    max_age = data.get("max_age_s", DEFAULT_MAX_AGE_S)
    if not isinstance(max_age, int) or isinstance(max_age, bool) or max_age < 0:
        raise ValueError(f"{where}: max_age_s must be a whole number of seconds >= 0")
    claim = data.get("claim", "groups")
    if not isinstance(claim, str) or not claim:
        raise ValueError(f"{where}: claim must be the name of an ID-token claim")
    return RoleConfig(groups=mapping if groups is not None else {r: r for r in ROLES}, claim=claim,
                      max_age_s=max_age,
                      default_role=_check_role(data.get("default_role", "viewer"), f"{where} default_role",
                                               empty=True),
                      policy=policy)


def load_config(path: str | None = None) -> RoleConfig:
    """The role configuration: the TOML file ``path`` (default: ``EVALBOARD_REVIEW_ROLES``), else the defaults.

    Raises
    ------
    ValueError
        The file cannot be read or is invalid.
    """
    path = path if path is not None else os.environ.get(ROLES_ENV, "").strip()
    if not path:
        return _DEFAULT
    try:
        key = (path, os.stat(path).st_mtime_ns)
        if key in _LOADED:  # read again only when the file changes
            return _LOADED[key]
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ValueError(f"{ROLES_ENV}: cannot read {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{ROLES_ENV}: {path}: {exc}") from exc
    _LOADED.clear()
    _LOADED[key] = config = parse_config(data, path)
    return config


_DEFAULT = RoleConfig()
_LOADED: dict[tuple[str, int], RoleConfig] = {}


def permitted(action: str, role: str | None, config: RoleConfig | None = None) -> bool:
    """Whether ``role`` may do ``action`` under ``config`` (default :func:`load_config`).

    Parameters
    ----------
    action : str
        One of :data:`ACTIONS`.
    role : str or None
    config : RoleConfig, optional

    Returns
    -------
    bool
    """
    return (config or load_config()).permitted(action, role)


def sign_in_expired(issued_at: Any, now: float, max_age_s: int) -> bool:
    """Whether a sign-in made at ``issued_at`` (the ID token's ``iat``, seconds) is older than ``max_age_s``
    (0: never); a missing or unreadable ``iat`` counts as expired.

    Parameters
    ----------
    issued_at : int, float or None
    now : float
        Seconds since the epoch.
    max_age_s : int

    Returns
    -------
    bool
    """
    if not max_age_s:
        return False
    if isinstance(issued_at, bool) or not isinstance(issued_at, (int, float)):
        return True
    return now - float(issued_at) > max_age_s


__all__ = ["ACTIONS", "DEFAULT_MAX_AGE_S", "DEFAULT_POLICY", "ROLES", "ROLES_ENV", "Actor", "RoleConfig",
           "load_config", "parse_config", "permitted", "role_of", "sign_in_expired", "via_of"]
