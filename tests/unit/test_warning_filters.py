"""The pytest warning filters (pyproject.toml) hide exactly the third-party deprecations of the sign-in test's
OIDC provider (Authlib, oidc-provider-mock), by message and module, and nothing of ours.

Each warning is raised as its library raises it (the message, its class and the module it is attributed to),
under the filters pytest applies to every test; and the provider imported for the first time in a test (a
fresh pytest process) leaves no warning (Authlib's own "always" filter, set on its first import, is dropped by
tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
from authlib.deprecate import AuthlibDeprecationWarning

from tests.conftest import ROOT

#: (message, module the warning is attributed to), as Authlib 1.9 and oidc-provider-mock 0.3 raise them.
THIRD_PARTY = [
    ("authlib.jose module is deprecated, please use joserfc instead.\nIt will be compatible before version 2.0.0.",
     "oidc_provider_mock._app"),
    ("The httpx module is deprecated; please use httpx2 instead.", "authlib.integrations.httpx_client.assertion_client"),
    ("get_jwt_config(self, grant) is deprecated and will be removed in version 1.8. Use resolve_client_private_key, "
     "get_client_claims, get_client_algorithm instead.", "authlib.oidc.core.grants._legacy"),
]


def _shown(message: str, module: str, category: type[Warning] = AuthlibDeprecationWarning) -> bool:
    with warnings.catch_warnings(record=True) as got:  # the filters in force (pytest's, from pyproject.toml) kept
        warnings.warn_explicit(message, category, f"{module.replace('.', '/')}.py", 1, module=module, registry={})
    return bool(got)


def test_the_oidc_providers_deprecations_are_hidden():
    assert [m for m, module in THIRD_PARTY if _shown(m, module)] == []


def test_the_same_messages_from_elsewhere_and_other_warnings_still_show():
    # the same text raised for our own modules, or another library's deprecation: not hidden
    assert all(_shown(m, "evaluators.review.roles") for m, _ in THIRD_PARTY)
    assert _shown("something else is deprecated", "authlib.oidc.core.grants._legacy")
    assert _shown("authlib.jose module is deprecated", "oidc_provider_mock._app", UserWarning)


def test_the_first_import_of_the_provider_in_a_test_session_shows_no_warning(tmp_path):
    pytest.importorskip("oidc_provider_mock")
    # a fresh pytest process with the project's settings and tests/conftest.py, whose one test imports the provider
    (tmp_path / "test_first_import.py").write_text("def test_import():\n    import oidc_provider_mock  # noqa: F401\n",
                                                   encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "tests.conftest", "-q",
                          "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT), str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 passed" in out.stdout and "warning" not in out.stdout.lower(), out.stdout
