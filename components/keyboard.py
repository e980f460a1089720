"""Keyboard shortcuts for buttons with a key: a key press clicks the button (``.st-key-<key> button``).

The maintained ``streamlit-shortcuts`` package does the same, but it also fires while the user
types in a text field (typing "1" in a comment would submit a decision), so this small listener
is ours: it ignores key presses with a modifier and those made in an input, a text area, a
select or an editable element.  The script is our own text (button keys are ours, never user
text) and runs in an invisible component; every run replaces the listener and its key map (a
listener made by a frame that a rerun removed no longer runs).
"""

from __future__ import annotations

import json

import streamlit.components.v1 as components

_SCRIPT = """<script>
const doc = window.parent.document, win = window.parent;
win.__evalboardKeys = %s;
// A listener made by an earlier run's frame stops working once that frame is replaced: swap it.
if (win.__evalboardKeyListener) doc.removeEventListener('keydown', win.__evalboardKeyListener);
win.__evalboardKeyListener = (e) => {
  if (e.ctrlKey || e.altKey || e.metaKey || e.repeat) return;
  const t = e.target, tag = (t && t.tagName || '').toLowerCase();
  if (tag === 'input' || tag === 'textarea' || tag === 'select' || (t && t.isContentEditable)) return;
  const key = (win.__evalboardKeys || {})[e.key.toLowerCase()];
  if (!key) return;
  // the shown button: a wrapping label renders a second, hidden copy of the button to measure it
  const button = [...doc.querySelectorAll('.st-key-' + key + ' button')]
    .find((b) => !b.disabled && b.getClientRects().length > 0 && getComputedStyle(b).visibility !== 'hidden');
  if (button) { e.preventDefault(); button.click(); }
};
doc.addEventListener('keydown', win.__evalboardKeyListener);
</script>"""


def shortcuts(mapping: dict[str, str]) -> None:
    """Make each key (one character or a key name, e.g. ``"1"``, ``"j"``) click the button with that widget key.

    Parameters
    ----------
    mapping : dict
        Key pressed -> widget key of a button (``st.button`` / ``st.form_submit_button``).
        Widget keys must be made of letters, digits, ``_`` and ``-`` (they become CSS classes).

    Raises
    ------
    ValueError
        A widget key with other characters.
    """
    for widget in mapping.values():
        if not all(ch.isalnum() or ch in "_-" for ch in widget):
            raise ValueError(f"widget key {widget!r} cannot be used as a shortcut target")
    components.html(_SCRIPT % json.dumps({k.lower(): v for k, v in mapping.items()}), height=0, width=0)
