"""MkDocs hook: the CLI reference page, rendered from ``occubench.cli.build_parser()`` at every build.

``docs/reference/cli.md`` holds a short introduction and the marker below; this hook replaces the marker with one
section per command (nested subcommands included: ``occubench workplace generate``, ``occubench synth simulated``, ...):
its help, its description, a synopsis and a table of its options per argument group. The rendered text is never
written to the repository, so the page cannot drift from the parsers: a new flag, a changed help text or default
is on the site with the next build.
"""

from __future__ import annotations

import argparse
import html
import re
from typing import Any

MARKER = "<!-- cli-reference -->"
PAGE = "reference/cli.md"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any, **kwargs: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        from mkdocs.exceptions import PluginError

        raise PluginError(f"{PAGE} must contain the marker {MARKER}, which docs/hooks/cli_reference.py replaces")
    from occubench.cli import build_parser

    # In a div of its own (md_in_html) so docs/stylesheets/extra.css can style these tables only.
    return markdown.replace(MARKER, f'<div class="cli-reference" markdown>\n\n{render(build_parser())}\n</div>')


def render(parser: argparse.ArgumentParser) -> str:
    """The Markdown reference of ``parser`` and every subcommand under it, the top-level commands at ``##``."""
    lines: list[str] = []
    _command(parser, parser.prog, None, 2, lines, top=True)
    return "\n".join(lines).rstrip() + "\n"


def _command(parser: argparse.ArgumentParser, name: str, summary: str | None, level: int, lines: list[str],
             top: bool = False) -> None:
    anchor = _slug(name)
    lines += [f"{'#' * level} {name} {{#{anchor}}}", ""]
    description = parser.description or ""
    if summary and " ".join(summary.split()) != " ".join(description.split()):
        lines += [_inline(_sentence(summary)), ""]
    for paragraph in re.split(r"\n\s*\n", description.strip()):
        if paragraph.strip():
            lines += [_inline(paragraph), ""]
    lines += ["```text", _synopsis(parser, name), "```", ""]

    subcommands = _subcommands(parser)
    for group in parser._action_groups:
        rows = [action for action in group._group_actions if _documented(action)]
        if not rows:
            continue
        if group not in (parser._positionals, parser._optionals):  # a group of the parser's own: a heading
            title = _sentence_case(group.title or "")
            lines += [f"{'#' * min(level + 1, 6)} {_inline(title)} {{#{anchor}--{_slug(title)}}}", ""]
        if group.description:
            lines += [_inline(group.description), ""]
        lines += _table(parser, rows)

    if subcommands:
        lines += ["| Command | Description |", "| --- | --- |"]
        for sub_name, _, help_text in subcommands:
            full = f"{name} {sub_name}"
            lines.append(f"| [`{full}`](#{_slug(full)}) | {_inline(help_text or '')} |")
        lines.append("")
        # The top level's commands are sections of their own; deeper ones nest under their parent.
        child_level = level if top else level + 1
        for sub_name, sub, help_text in subcommands:
            _command(sub, f"{name} {sub_name}", help_text, min(child_level, 6), lines)


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser, str | None]]:
    """``(name, parser, help)`` of each subcommand, in the order added; an alias is not a second command."""
    found: list[tuple[str, argparse.ArgumentParser, str | None]] = []
    seen: set[int] = set()
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for sub_name, sub in action.choices.items():
            if id(sub) in seen or helps.get(sub_name) == argparse.SUPPRESS:
                continue
            seen.add(id(sub))
            found.append((sub_name, sub, helps.get(sub_name)))
    return found


def _documented(action: argparse.Action) -> bool:
    return (action.help != argparse.SUPPRESS
            and not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)))


def _synopsis(parser: argparse.ArgumentParser, name: str) -> str:
    """``occubench report [options] RUN_DIR [RUN_DIR ...]``: the command, then its positional arguments."""
    formatter = parser._get_formatter()
    parts = [name]
    if any(action.option_strings and _documented(action) for action in parser._actions):
        parts.append("[options]")
    for action in parser._actions:
        if action.option_strings or action.help == argparse.SUPPRESS:
            continue
        if isinstance(action, argparse._SubParsersAction):
            parts.append(f"{action.metavar or 'COMMAND'} ...")
        else:
            parts.append(formatter._format_args(action, formatter._get_default_metavar_for_positional(action)))
    return " ".join(parts)


def _table(parser: argparse.ArgumentParser, actions: list[argparse.Action]) -> list[str]:
    """A table row per action; a Default column only where some action has a default to show (``occubench run``
    has none: its defaults are :class:`occubench.RunConfig`'s, which the help texts quote)."""
    rows = [(_option(parser, action), _default(action), _description(parser, action)) for action in actions]
    first = "Option" if any(action.option_strings for action in actions) else "Argument"
    if any(default for _, default, _ in rows):
        table = [f"| {first} | Default | Description |", "| --- | --- | --- |"]
        table += [f"| {option} | {default} | {description} |" for option, default, description in rows]
    else:
        table = [f"| {first} | Description |", "| --- | --- |"]
        table += [f"| {option} | {description} |" for option, _, description in rows]
    return [*table, ""]


def _option(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()
    if not action.option_strings:
        return _code(formatter._format_args(action, formatter._get_default_metavar_for_positional(action)))
    value = ""
    if action.nargs != 0:
        value = " " + formatter._format_args(action, formatter._get_default_metavar_for_optional(action))
    return ", ".join(_code(flag + value) for flag in action.option_strings)


def _description(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    description = _inline(parser._get_formatter()._expand_help(action)) if action.help else ""
    if action.choices is not None and action.metavar is not None:  # the metavar hides the choices: list them
        choices = ", ".join(_code(str(choice)) for choice in action.choices)
        description = f"{description}<br>One of {choices}." if description else f"One of {choices}."
    return description


def _default(action: argparse.Action) -> str:
    if action.required:  # a positional argument is required unless its nargs says otherwise: no news there
        return "*required*" if action.option_strings else ""
    default = action.default
    if (default is None or default == argparse.SUPPRESS or action.nargs == 0
            or (isinstance(default, (list, tuple, dict, set)) and not default)):
        return ""  # store_true and friends: the flag's absence is the default
    if isinstance(default, (list, tuple)):
        default = " ".join(map(str, default))
    return _code(str(default))


#: An rST role (:class:`X`, :py:func:`~a.b`), a ``double`` or a `single` backtick code span.
_CODE = re.compile(r":(?:[a-z]+:)?[a-z]+:`~?(?P<role>[^`]+)`|``(?P<double>.+?)``|`(?P<single>[^`]+)`")
#: Markdown syntax that help texts do not mean: emphasis, links, escapes, table cells, HTML.
_SPECIAL = re.compile(r"([\\*_\[\]|#])")


def _inline(text: str) -> str:
    """One line of Markdown showing ``text`` (help or description prose) as written: its code spans as code, its
    rST roles as links to the API reference, everything else escaped (``<data-dir>`` is not an HTML tag, ``|`` not
    a table cell's end)."""
    text = " ".join(text.split())
    out: list[str] = []
    end = 0
    for match in _CODE.finditer(text):
        out.append(_escape(text[end:match.start()]))
        if match["role"]:  # a link when the API reference documents it (mkdocs-autorefs), plain code otherwise
            target = html.escape(match["role"])
            out.append(f'<autoref identifier="{target}" optional><code>{target}</code></autoref>')
        else:
            out.append(_code(match["double"] or match["single"]))
        end = match.end()
    out.append(_escape(text[end:]))
    return "".join(out)


def _escape(prose: str) -> str:
    return _SPECIAL.sub(r"\\\1", html.escape(prose, quote=False))


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def _sentence_case(title: str) -> str:
    return title[:1].upper() + title[1:]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
