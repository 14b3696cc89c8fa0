"""A Griffe extension for the API pages: doctest blocks become code blocks, and Sphinx
cross-reference roles become inline code.

lexiframe's docstrings carry runnable examples as plain doctest blocks (``>>>`` lines and
their output, up to a blank line), which Markdown would render as nested quotes. This
extension fences each such block as ``pycon`` code before the docstrings are rendered;
blocks already inside a fence are left alone. References such as ``:func:`positions```
(read by IDEs and Sphinx) would show their role literally: they become ``positions``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

FENCE = "```"


def fence_doctests(text: str) -> str:
    """Wrap every doctest block of a docstring in a ``pycon`` fence.

    >>> fence_doctests("Text.\\n\\n  >>> 1 + 1\\n  2\\n\\nMore.").splitlines()
    ['Text.', '', '  ```pycon', '  >>> 1 + 1', '  2', '  ```', '', 'More.']
    """
    out: list[str] = []
    lines = text.splitlines()
    in_fence = False
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.lstrip()
        if stripped.startswith(FENCE):
            in_fence = not in_fence
        if in_fence or not stripped.startswith(">>>"):
            out.append(line)
            index += 1
            continue
        indent = line[: len(line) - len(stripped)]
        out.append(f"{indent}{FENCE}pycon")
        while index < len(lines) and lines[index].strip():
            out.append(lines[index])
            index += 1
        out.append(f"{indent}{FENCE}")
    return "\n".join(out)


ROLE = re.compile(r":(?:func|class|meth|attr|data|mod|obj|exc):`~?([^`]+)`")


def plain_roles(text: str) -> str:
    """Turn Sphinx roles into inline code: ``:func:`~a.b``` reads ``a.b``.

    >>> plain_roles("See :func:`lexiframe.positions` and :class:`~errors.InputError`.")
    'See `lexiframe.positions` and `errors.InputError`.'
    """
    return ROLE.sub(lambda match: f"`{match.group(1)}`", text)


class DoctestBlocks(griffe.Extension):
    """Fence the doctest blocks of every docstring (see ``fence_doctests``) and turn its
    Sphinx roles into inline code (``plain_roles``)."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = plain_roles(fence_doctests(obj.docstring.value))
