"""Every widget of the pages and components has a key (state survives reruns and is addressable in tests)."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import ROOT

WIDGETS = {"radio", "selectbox", "multiselect", "text_input", "text_area", "checkbox", "slider", "number_input",
           "toggle", "button", "download_button", "file_uploader", "segmented_control", "pills", "date_input",
           "select_slider", "color_picker"}
FILES = sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("components/*.py"), ROOT / "app.py"])


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_widget_has_a_key(path):
    missing = [f"{path.name}:{node.lineno} st.{node.func.attr}"
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr in WIDGETS and not any(k.arg == "key" for k in node.keywords)]
    assert not missing, missing


def test_shortcut_targets_must_be_plain_widget_keys():
    from components.keyboard import Shortcut, shortcuts

    with pytest.raises(ValueError):
        shortcuts({"1": Shortcut("bad key'] button, x", "x", lambda: None)})  # not a plain widget key
