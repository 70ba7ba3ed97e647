"""Griffe extension (loaded by mkdocstrings, see mkdocs.yml): the Sphinx conventions of the code's docstrings.

The code documents attributes with ``#:`` comments and names other objects with rST roles
(``:class:`occubench.RunConfig```, ``:func:`run```, ``:meth:`~Environment.step```). Griffe reads neither: an
attribute would show without its comment, and a role as ":class:" before a code span. So, once a package is loaded:

- the ``#:`` comment lines just above an attribute (or after it on its line) become its docstring;
- each role becomes an optional cross-reference: a link when the object is on the API reference page, plain code
  otherwise, never a warning (``mkdocs build --strict`` stays clean whatever a docstring names). A relative name
  is looked up the way a reader would: in the object itself, its class, its module, then the package.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const|type):`(?P<tilde>~?)(?P<target>[^`]+)`")
_TRAILING_COMMENT = re.compile(r"\s#:\s?(?P<text>.*)$")


class SphinxConventions(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        _rewrite(pkg)

    on_package_loaded = on_package  # the same event in older Griffe versions; rewriting twice changes nothing


def _rewrite(obj: griffe.Object) -> None:
    """Give ``obj`` and its members (not the names they import) their ``#:`` docstrings and roles as references."""
    if obj.is_attribute and obj.docstring is None:
        comment = _comment(obj)
        if comment:
            obj.docstring = griffe.Docstring(comment, lineno=obj.lineno, endlineno=obj.lineno, parent=obj)
    if obj.docstring is not None and ":" in obj.docstring.value:
        obj.docstring.value = _ROLE.sub(lambda match: _reference(match, obj), obj.docstring.value)
    for member in obj.members.values():
        if not member.is_alias:
            _rewrite(member)


def _comment(attribute: griffe.Object) -> str | None:
    """The attribute's ``#:`` comment: the lines right above its assignment, else the end of its first line."""
    try:
        lines = attribute.lines_collection[attribute.filepath]
    except (KeyError, TypeError):
        return None
    if not attribute.lineno or attribute.lineno > len(lines):
        return None
    above: list[str] = []
    index = attribute.lineno - 2
    while index >= 0 and lines[index].strip().startswith("#:"):
        above.insert(0, lines[index].strip()[2:].strip())
        index -= 1
    if above:
        return "\n".join(above)
    trailing = _TRAILING_COMMENT.search(lines[attribute.lineno - 1])
    return trailing["text"].strip() if trailing else None


def _reference(match: re.Match[str], obj: griffe.Object) -> str:
    target = match["target"].strip()
    explicit = re.fullmatch(r"(?P<title>.+?)\s*<(?P<target>[^>]+)>", target)  # :class:`title <target>`
    if explicit:
        title, target = explicit["title"], explicit["target"]
    else:
        title = target.rsplit(".", 1)[-1] if match["tilde"] else target
    identifier = _resolve(target.lstrip("."), obj) or target
    return (f'<autoref identifier="{html.escape(identifier)}" optional>'
            f"<code>{html.escape(title)}</code></autoref>")


def _resolve(target: str, obj: griffe.Object) -> str | None:
    """The documented path of ``target`` as ``obj``'s docstring means it, or None when it is not found."""
    scopes = [obj.path]
    parent = obj.parent
    while parent is not None:
        scopes.append(parent.path)
        parent = parent.parent
    package = obj.path.split(".", 1)[0]
    for path in [*(f"{scope}.{target}" for scope in scopes), target, f"{package}.{target}"]:
        try:
            found = obj.modules_collection[path]
        except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            continue
        try:
            return found.final_target.path if found.is_alias else found.path
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            return found.path
    return None
