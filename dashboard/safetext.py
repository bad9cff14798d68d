"""Names from files shown as text, never as markdown or HTML.

Model, file and class names come from the visitor's files. Streamlit renders
markdown in st.markdown, st.caption, st.error and widget labels: a name with
``![x](http://...)`` would fetch a remote image, ``**x**`` would turn bold,
``:red[x]`` would colour. :func:`md_text` escapes every markdown character, so
the name reads exactly as written.
"""

from __future__ import annotations

import re

__all__ = ["md_text"]

# Every ASCII punctuation character may be backslash-escaped in CommonMark; these are the ones
# markdown, Streamlit's directives (:red[...], :material/...:) and LaTeX ($) give a meaning to.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#!|:$~&])")
_LIST_START = re.compile(r"^(\s*)([-+=]|\d+(?=[.)]))")


def md_text(text) -> str:
    """``text`` escaped for Streamlit markdown; line breaks become spaces.

    >>> md_text("**bold** ![x](http://e/x.png)")
    '\\\\*\\\\*bold\\\\*\\\\* \\\\!\\\\[x\\\\]\\\\(http\\\\:\\\\/\\\\/e\\\\/x.png\\\\)'
    """
    text = str(text).replace("\r", " ").replace("\n", " ")
    text = _SPECIAL.sub(r"\\\1", text).replace("/", "\\/")
    # A leading "-", "+" or "1." would start a list; a backslash keeps it a character.
    return _LIST_START.sub(_escape_start, text)


def _escape_start(match) -> str:
    lead, mark = match.group(1), match.group(2)
    return lead + (mark + "\\" if mark[0].isdigit() else "\\" + mark)
