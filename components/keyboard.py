"""Keyboard shortcuts that never lose a key press: each press is queued in the browser, sent to the
server one at a time, acknowledged on screen, and only then is the next one sent.

Why not click the button: a key pressed while the page reruns (after the previous decision) found
the previous item's button or none, and the press was lost.  Here a press becomes an event of a
``st.components.v2`` component (no iframe; ``st.components.v1.html`` is deprecated): the browser
keeps a queue, sends the first press with the *token* of the screen it was meant for, and waits for
the server's acknowledgement, which comes back in the component's data on the next run together
with the new key map and token.  Presses made meanwhile wait in the queue (shown: "2 waiting"); a
press that arrives for a screen that has changed is refused visibly, never applied to another item.
A press without an answer for a minute is dropped with a visible message.

``?`` opens (and closes) a cheat sheet of the keys bound on the screen, with their names; ``Esc`` or a
click closes it.  It is drawn in the browser from the key map (no round trip), and follows the map as
the screen changes.

Key presses with a modifier, auto-repeats and presses in an input, a text area, a select or an
editable element are ignored (typing "1" in a comment never decides).  The script is our own text;
key maps and acknowledgements are data (set with ``textContent``, never as HTML).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

#: The component's widget key (one keyboard per page).
KEY = "evalboard_keys"
#: Most presses waiting in the browser; more are refused on screen.
MAX_QUEUE = 100

_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const win = window, doc = document;
  const kb = win.__evalboardKbd || (win.__evalboardKbd = {queue: [], inflight: null, seq: 0, acked: 0});
  kb.send = setTriggerValue;
  kb.keys = (data && data.keys) || {};
  kb.names = (data && data.names) || {};
  kb.token = data && data.token;
  win.__evalboardKeys = kb.keys;
  const box = () => {
    let el = doc.getElementById('evalboard-keys-status');
    if (!el) {
      el = doc.createElement('div');
      el.id = 'evalboard-keys-status';
      el.setAttribute('role', 'status');
      el.setAttribute('aria-live', 'polite');
      el.style.cssText = 'position:fixed;right:16px;bottom:16px;z-index:100000;padding:6px 12px;' +
        'border-radius:6px;font:14px sans-serif;background:#262730;color:#fff;opacity:0.92;display:none';
      doc.body.appendChild(el);
    }
    return el;
  };
  kb.show = (text, kind) => {
    const el = box();
    const waiting = kb.queue.length + (kb.inflight ? 1 : 0);
    el.textContent = text + (waiting ? ' \u00b7 ' + waiting + ' waiting \u00b7 \u7b49\u5f85\u4e2d' : '');
    el.dataset.kind = kind;
    el.style.background = kind === 'refused' ? '#a61b1b' : kind === 'ok' ? '#1b6b3a' : '#262730';
    el.style.display = 'block';
  };
  kb.pump = () => {
    if (kb.inflight || !kb.queue.length || !kb.send) return;
    const press = kb.queue.shift();
    if (!(press.key in kb.keys)) {
      kb.show('\u2717 ' + press.key.toUpperCase() + ': nothing to do here \u00b7 \u6b64\u5904\u65e0\u6548', 'refused');
      kb.pump();
      return;
    }
    press.token = kb.token;
    press.sent = Date.now();
    kb.inflight = press;
    kb.show('\u2026 ' + (kb.names[press.key] || press.key) + ': sending \u00b7 \u53d1\u9001\u4e2d', 'sending');
    kb.send('press', {seq: press.seq, key: press.key, token: press.token});
  };
  // "?": the cheat sheet of the keys bound on this screen (names as sent, set with textContent)
  kb.help = (open) => {
    let el = doc.getElementById('evalboard-keys-help');
    if (!open) { if (el) el.style.display = 'none'; kb.helpOpen = false; return; }
    if (!el) {
      el = doc.createElement('div');
      el.id = 'evalboard-keys-help';
      el.setAttribute('role', 'dialog');
      el.setAttribute('aria-label', 'Keyboard shortcuts');
      el.style.cssText = 'position:fixed;left:50%%;top:20%%;transform:translateX(-50%%);z-index:100001;' +
        'padding:16px 20px;border-radius:8px;font:15px sans-serif;background:#262730;color:#fff;' +
        'box-shadow:0 4px 24px rgba(0,0,0,.35);max-width:90vw';
      el.addEventListener('click', () => kb.help(false));
      doc.body.appendChild(el);
    }
    el.textContent = '';
    const title = doc.createElement('div');
    title.textContent = 'Keyboard shortcuts \u00b7 \u5feb\u6377\u952e';
    title.style.cssText = 'font-weight:600;margin-bottom:8px';
    el.appendChild(title);
    const rows = Object.keys(kb.keys).map((k) => {   // "1 · Model error" -> 1 | Model error
      const name = kb.names[k] || k, lead = k.toUpperCase() + ' \u00b7 ';
      return [k.toUpperCase(), name.startsWith(lead) ? name.slice(lead.length) : name];
    });
    rows.push(['?', 'This list \u00b7 \u5feb\u6377\u952e\u5217\u8868'], ['Esc', 'Close \u00b7 \u5173\u95ed']);
    const table = doc.createElement('table');
    for (const [k, name] of rows) {
      const tr = doc.createElement('tr');
      const a = doc.createElement('td'), b = doc.createElement('td');
      a.textContent = k;
      a.style.cssText = 'font-family:monospace;font-weight:600;padding:2px 14px 2px 0';
      b.textContent = name;
      tr.appendChild(a);
      tr.appendChild(b);
      table.appendChild(tr);
    }
    el.appendChild(table);
    el.style.display = 'block';
    kb.helpOpen = true;
  };
  if (kb.helpOpen) kb.help(Object.keys(kb.keys).length > 0);  // follows the screen's keys
  const ack = data && data.ack;
  if (ack && kb.inflight && ack.seq >= kb.inflight.seq) {
    kb.inflight = null;
    kb.acked = Math.max(kb.acked, ack.seq);
    kb.show((ack.ok ? '\u2713 ' : '\u2717 ') + ack.text, ack.ok ? 'ok' : 'refused');
  }
  if (!kb.listener) {
    kb.listener = (e) => {
      if (e.ctrlKey || e.altKey || e.metaKey || e.repeat) return;
      const t = e.target, tag = (t && t.tagName || '').toLowerCase();
      if (tag === 'input' || tag === 'textarea' || tag === 'select' || (t && t.isContentEditable)) return;
      if (e.key === 'Escape' && kb.helpOpen) { kb.help(false); return; }
      if (e.key === '?') {   // the cheat sheet, where keys are bound
        if (Object.keys(kb.keys).length) { e.preventDefault(); kb.help(!kb.helpOpen); }
        return;
      }
      const key = (e.key || '').toLowerCase();
      if (!(key in kb.keys)) return;   // not a shortcut here (other views: an empty map)
      e.preventDefault();
      if (kb.queue.length >= %(max_queue)d) {
        kb.show('\u2717 ' + key.toUpperCase() + ': too many keys waiting, ignored \u00b7 ' +
                '\u6309\u952e\u8fc7\u591a', 'refused');
        return;
      }
      kb.seq += 1;
      kb.queue.push({seq: kb.seq, key: key});
      if (kb.inflight) kb.show('\u2328 ' + key.toUpperCase() + ': queued \u00b7 \u5df2\u6392\u961f', 'queued');
      kb.pump();
    };
    doc.addEventListener('keydown', kb.listener);
    kb.timer = setInterval(() => {
      if (kb.inflight && Date.now() - kb.inflight.sent > 60000) {
        const lost = kb.inflight;
        kb.inflight = null;
        kb.show('\u2717 ' + lost.key.toUpperCase() + ': no answer from the server; check the item and ' +
                'press again', 'refused');
        kb.pump();
      }
    }, 1000);
  }
  kb.pump();
  return () => { kb.keys = {}; win.__evalboardKeys = {}; kb.help(false); };
}
""" % {"max_queue": MAX_QUEUE}

_component = st.components.v2.component("evalboard_keyboard", js=_JS)


@dataclass(frozen=True)
class Shortcut:
    """What one key does.

    Attributes
    ----------
    target : str
        The widget key of the button the key stands for (letters, digits, ``_``, ``-``): what the
        browser's key map (``window.__evalboardKeys``) shows.
    name : str
        Shown in the acknowledgement ("1 · Model error").
    action : callable
        Called (in the event's callback, before the next run) with ``kwargs``; returns the
        acknowledgement text, or raises to refuse (the message is shown).
    kwargs : dict
    """

    target: str
    name: str
    action: Callable[..., str | None]
    kwargs: dict = field(default_factory=dict)


def _on_press(mapping: Mapping[str, Shortcut], token: str) -> None:
    ss = st.session_state
    press = (ss.get(KEY) or {}).get("press") or {}
    seq, key = press.get("seq"), str(press.get("key") or "")
    if not isinstance(seq, int):
        return
    shortcut = mapping.get(key)
    if shortcut is None or press.get("token") != token:
        ss["_evalboard_keys_ack"] = {"seq": seq, "ok": False,
                                     "text": f"{key.upper()}: the page changed before this key arrived; not applied "
                                             "· 页面已变化，未执行"}
        return
    try:
        text = shortcut.action(**shortcut.kwargs)
        ok = True
    except Exception as exc:  # noqa: BLE001 - shown to the annotator, never lost silently
        text, ok = f"not done: {exc}", False
    ss["_evalboard_keys_ack"] = {"seq": seq, "ok": ok, "text": f"{shortcut.name}: {text or 'done · 完成'}"}


def shortcuts(mapping: Mapping[str, Shortcut], *, token: str = "") -> None:
    """Make each key (one character, e.g. ``"1"``, ``"u"``) run its :class:`Shortcut`'s action.

    Parameters
    ----------
    mapping : dict
        Key pressed -> :class:`Shortcut`; ``{}`` turns every shortcut off.
    token : str
        What the screen shows (e.g. the item id): a press made for another screen is refused.

    Raises
    ------
    ValueError
        A target with characters other than letters, digits, ``_`` and ``-``.
    """
    for s in mapping.values():
        if not all(ch.isalnum() or ch in "_-" for ch in s.target):
            raise ValueError(f"widget key {s.target!r} cannot be used as a shortcut target")
    data: dict[str, Any] = {"keys": {k.lower(): s.target for k, s in mapping.items()},
                            "names": {k.lower(): s.name for k, s in mapping.items()}, "token": token,
                            "ack": st.session_state.get("_evalboard_keys_ack")}
    _component(key=KEY, data=data, height=0,
               on_press_change=functools.partial(_on_press, {k.lower(): s for k, s in mapping.items()}, token))
