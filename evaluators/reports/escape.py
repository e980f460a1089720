"""The one way user text reaches a page or a Markdown/HTML report: escaped, on one line where needed,
with invisible control characters made visible.

User text is anything that came from an upload, a file, an endpoint or a widget: file names,
model names, ids, labels, questions, answers, categories, scene names, and error messages that
quote them.  Streamlit renders Markdown (and, with ``unsafe_allow_html``, HTML) in
``st.markdown``, ``st.write``, ``st.caption``, ``st.info``/``warning``/``error``/``success``,
widget labels, expander titles, tab names and metric labels; :func:`md` makes such text
inert there.  :func:`html_text` is for text placed inside our own HTML blocks.  ``st.text``,
``st.code`` and data-frame cells render no Markup; :func:`visible` still shows hidden
characters in names there.

Functions
---------
visible(text)
    Control and format characters (bidirectional overrides, zero-width characters, C0/C1
    controls but tab and newline) shown as ``⟨U+202E⟩``.
md(text, *, one_line=True)
    For Markdown: HTML-escaped, and a backslash before each character that would have a Markdown,
    KaTeX or Streamlit-directive meaning where it stands (a path, a snake_case name or a sentence
    reads as typed).
md_document(text)
    A Markdown document written in the product (guidelines): its Markdown kept, with no HTML, link, image,
    formula or directive.
html_text(text, *, breaks=True)
    For HTML: ``html.escape`` (quotes too), ``\\r`` dropped, newlines as ``<br>``.
"""

from __future__ import annotations

import html
import re

# Bidirectional embeddings/overrides/isolates, zero-width and joiner characters, BOM, word
# joiner and invisible operators, the line/paragraph separators, and C0/C1 controls (tab and
# newline excepted; a carriage return counts: it can end a Markdown or HTML block).
_HIDDEN = re.compile("[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f"
                     "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]")
# GitHub-flavoured Markdown's autolink literals (http://, https://, www., a@b.c) are found in the
# parsed text, after backslash escapes and entities are resolved: a word joiner (U+2060, invisible)
# before the ':', '.' or '@' that would start one is the only thing that keeps them plain text.
_AUTOLINK = re.compile(r"(?i)(?<![\w])(https?|ftp|www|mailto|xmpp)(?=\\?[:.])|(?=\\?@)")
_WORD_JOINER = "\u2060"
# What has a meaning anywhere in a line: escapes, code, emphasis (*), links and images ([ ]), table cells (|),
# strikethrough (~), KaTeX ($), and a ':' before a letter (Streamlit's :red[..] directives and :material/x:
# icons). '<', '>' and '&' are HTML-escaped first; '_' is handled on its own (_UNDERSCORES).
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~$]|:(?=[A-Za-z]))")
# '_' opens or closes emphasis only at a word's edge: a run of '_' between two letters or digits
# (snake_case, CH_002_牛郎织女) is text in CommonMark and stays as it is.
_UNDERSCORES = re.compile(r"_+")
# What has a meaning at the start of a line only: a heading (# ), a list item (- + 1. 1) ), a setext
# underline or thematic break (--- ===).
_LINE_START = re.compile(r"^(\s*)(#{1,6}(?=\s|$)|[-+=](?=\s|$|[-=])|\d{1,9}[.)](?=\s|$))")


def _underscores(m: re.Match) -> str:
    text, start, end = m.string, m.start(), m.end()
    inside = (start > 0 and (text[start - 1].isalnum())) and (end < len(text) and text[end].isalnum())
    return m.group() if inside else "\\_" * (end - start)


def _line_start(m: re.Match) -> str:
    marker = m.group(2)
    if marker[0].isdigit():  # an ordered list: the '.' or ')' after the number
        return m.group(1) + marker[:-1] + "\\" + marker[-1]
    return m.group(1) + "\\" + marker


def visible(text: object) -> str:
    r"""``str(text)`` with control and format characters shown as ``⟨U+XXXX⟩``.

    Parameters
    ----------
    text : object
        Converted with ``str``; ``None`` gives ``""``.

    Returns
    -------
    str
        Tabs and newlines are kept; every other control or invisible format character
        (U+202E RIGHT-TO-LEFT OVERRIDE, U+200B ZERO WIDTH SPACE, U+FEFF, ``\r`` ...) is
        replaced by its code point in angle brackets, so ``"evil\u202egnp.exe"`` cannot pass
        for another name.

    >>> visible("abc\u202egnp.exe\u200b")
    'abc⟨U+202E⟩gnp.exe⟨U+200B⟩'
    """
    if text is None:
        return ""
    return _HIDDEN.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", str(text))


def md(text: object, *, one_line: bool = True) -> str:
    r"""User text made inert inside Streamlit Markdown.

    HTML-escaped (``<``, ``>``, ``&``), then a backslash before each character that has a
    Markdown, KaTeX or Streamlit-directive meaning where it stands, and before no other, so no
    link, image, emphasis, heading, list, table cell, colour (``:red[...]``), icon
    (``:material/x:``) or formula (``$x$``) can be made and a path such as
    ``long_memory/results.json`` reads as typed: ``\ ` * [ ] | ~ $`` everywhere, ``:`` before a
    letter, ``_`` at a word's edge (not in ``snake_case``), and at a line's start ``#``, ``-``,
    ``+``, ``=`` and the ``.`` or ``)`` of ``1.``; hidden characters are made :func:`visible`.
    GitHub-style autolinks (``http://``, ``https://``, ``www.``, ``name@host``) are recognised
    after escapes are resolved, so a word joiner (U+2060, invisible) goes before their ``:``,
    ``.`` or ``@``: the text looks the same and is no link (a copy of it holds the joiner).

    Parameters
    ----------
    text : object
        Converted with ``str``; ``None`` gives ``""``.
    one_line : bool
        Newlines become spaces (default), so the text can stand in a heading, a label or a
        table cell and cannot start a new block; blanks at either end are dropped (``**q **`` would be
        no bold, four leading spaces a code block).  With ``False`` newlines are kept as
        Markdown hard breaks (``"  \n"``); blank lines still cannot open a block.

    >>> md("**bold** :red[x] $x^2$ ![i](http://h/i.png)")
    '\\*\\*bold\\*\\* \\:red\\[x\\] \\$x^2\\$ !\\[i\\](http\u2060://h/i.png)'
    >>> md("long_memory/locomo_predictions_mem0/results.json")
    'long_memory/locomo_predictions_mem0/results.json'
    >>> md("第一行\n\n第二行")
    '第一行 第二行'
    """
    escaped = _MD_SPECIAL.sub(r"\\\1", html.escape(visible(text), quote=False))
    escaped = _UNDERSCORES.sub(_underscores, escaped)
    escaped = _AUTOLINK.sub(lambda m: (m.group(1) or "") + _WORD_JOINER, escaped)
    lines = [line.strip() for line in escaped.split("\n")]
    if one_line:
        # trimmed: "**question **" is no bold, and four leading spaces would start a code block
        lines = [" ".join(line for line in lines if line)] if len(lines) > 1 else [escaped.strip()]
    else:
        lines = [line for line in lines if line]
    # block markers count at the start of a line only, and are escaped there alone
    return ("  \n" if not one_line else "").join(_LINE_START.sub(_line_start, line, count=1) for line in lines)


# What an owner's Markdown document may not use: links and images ([ ]), KaTeX ($), Streamlit directives (:red[..],
# :material/x:); HTML is escaped before.
_DOC_SPECIAL = re.compile(r"([\[\]$]|:(?=[A-Za-z]))")


def md_document(text: object) -> str:
    r"""A Markdown document written in the product (a session's guidelines), rendered as Markdown:
    headings, lists, emphasis, code, tables and quotes work as written, while HTML is escaped (``<``, ``>``,
    ``&``: shown as typed), no link or image can be made (a backslash before ``[`` and ``]``; a bare URL
    is still GitHub's autolink), no formula (``$``) and no Streamlit directive (``:`` before a letter);
    hidden characters are made :func:`visible`.  Not for text from a file or an endpoint: :func:`md`.

    Parameters
    ----------
    text : object
        Converted with ``str``; ``None`` gives ``""``.

    >>> md_document("# Rules\n- **full** answer <script>x</script> [a](javascript:x) $x$ :red[y]")
    '# Rules\n- **full** answer &lt;script&gt;x&lt;/script&gt; \\[a\\](javascript\\:x) \\$x\\$ \\:red\\[y\\]'
    """
    return _DOC_SPECIAL.sub(r"\\\1", html.escape(visible(text), quote=False))


def html_text(text: object, *, breaks: bool = True) -> str:
    r"""User text for our own HTML (rendered with ``unsafe_allow_html``).

    ``html.escape`` with quotes (safe inside attributes too), hidden characters made
    :func:`visible`; with ``breaks`` newlines become ``<br>`` (a raw blank line would end
    Streamlit's HTML block and let the rest render as Markdown).

    >>> html_text('<img src=x onerror="alert(1)">\n\n"ok"')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;<br><br>&quot;ok&quot;'
    """
    text = "" if text is None else str(text)
    escaped = html.escape(visible(text.replace("\r\n", "\n")), quote=True)
    return escaped.replace("\n", "<br>") if breaks else escaped.replace("\n", " ")
