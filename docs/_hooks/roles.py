"""MkDocs hook: Sphinx cross-reference roles in docstrings (``:mod:`x```, ``:func:`x```, ...) print as code.

The docstrings use Sphinx's roles, which Markdown does not know: rendered as is they read ``:mod:<code>x</code>``.
This hook drops the role and keeps the code, on every page after it is rendered.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:mod|func|class|meth|data|attr|exc|obj|ref|py:\w+):(?=<code>)")


def on_page_content(html: str, **_: Any) -> str:
    return _ROLE.sub("", html)
