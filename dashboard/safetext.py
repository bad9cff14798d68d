"""Names from files shown as text, never as markdown or HTML.

Model, file and class names come from the visitor's files. Streamlit renders
markdown in st.markdown, st.caption, st.error and widget labels: a name with
``![x](http://...)`` would fetch a remote image, ``**x**`` would turn bold,
``:red[x]`` would colour, ``http://...`` would become a live link.
:func:`md_text` escapes every markdown character and breaks bare addresses with an
invisible word joiner, so the name reads exactly as written. It is the one escaping
helper of the app: every string from data that reaches markdown goes through it.
"""

from __future__ import annotations

import re

__all__ = ["md_text"]

# Every ASCII punctuation character may be backslash-escaped in CommonMark; these are the ones
# markdown, Streamlit's directives (:red[...], :material/...:) and LaTeX ($) give a meaning to.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#!|:$~&])")
_LIST_START = re.compile(r"^(\s*)([-+=]|\d+(?=[.)]))")
# GitHub-flavoured markdown turns bare addresses into links after escapes are resolved, so no backslash
# stops them: an invisible word joiner (U+2060) before "http:", "https:", "www." and after "@" does.
_AUTOLINK_START = re.compile(r"(?i)(?=(?:https?:|ftp:|mailto:|xmpp:|www\.))")
WORD_JOINER = "\u2060"


def md_text(text) -> str:
    """``text`` escaped for Streamlit markdown; line breaks become spaces.

    >>> md_text("**bold** ![x](/x.png)")
    '\\\\*\\\\*bold\\\\*\\\\* \\\\!\\\\[x\\\\]\\\\(\\\\/x.png\\\\)'
    >>> md_text("see http://e") == "see " + WORD_JOINER + "http\\\\:\\\\/\\\\/e"
    True
    """
    text = str(text).replace("\r", " ").replace("\n", " ")
    text = _AUTOLINK_START.sub(WORD_JOINER, text).replace("@", "@" + WORD_JOINER)
    text = _SPECIAL.sub(r"\\\1", text).replace("/", "\\/")
    # A leading "-", "+" or "1." would start a list; a backslash keeps it a character.
    return _LIST_START.sub(_escape_start, text)


def _escape_start(match) -> str:
    lead, mark = match.group(1), match.group(2)
    return lead + (mark + "\\" if mark[0].isdigit() else "\\" + mark)
