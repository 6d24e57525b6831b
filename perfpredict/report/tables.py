"""Tables for reports and proposals, as text other tools read (Markdown, LaTeX)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from perfpredict.figures import format_value


def confidence_percent(confidence: float) -> str:
    """A confidence as a percentage, as precise as given and never rounded to 100:
    0.9 is "90%", 0.999 "99.9%", 0.99999999 "99.999999%"."""
    return f"{100 * confidence:.10g}%"


def _fmt(value: Any) -> str:
    """A Markdown cell: a pipe escaped (it would end the cell), and < and > as entities
    (a renderer drops "<d>" as an HTML tag)."""
    return (format_value(value).replace("|", "\\|").replace("<", "&lt;")
            .replace(">", "&gt;"))


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    """A GitHub-flavoured Markdown table of ``rows``."""
    columns = list(columns or (rows[0].keys() if rows else []))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


# |, < and > have no glyph of their own in LaTeX's default OT1 text font (an em-dash and
# inverted marks): the text-companion commands set them as written
_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", "|": r"\textbar{}", "<": r"\textless{}",
                  ">": r"\textgreater{}"}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped, so labels like "5000 neurons/rank,
    theta=0.1" or "50%" typeset as written, and options like "--time" too: a hyphen before
    another is kept from joining it into an en-dash."""
    return "".join("-{}" if ch == "-" and text[i + 1:i + 2] == "-"
                   else _LATEX_SPECIAL.get(ch, ch) for i, ch in enumerate(text))


#: A header wider than this (in characters) is set on several lines, so that a table of
#: ten columns fits a page instead of running into the margin.
LATEX_HEADER_CHARS = 14


def _latex_header(label: str) -> str:
    lines = [latex_escape(line)
             for line in textwrap.wrap(label, LATEX_HEADER_CHARS, break_on_hyphens=False)]
    if len(lines) <= 1:
        return latex_escape(label)
    # "{}" ends the line break's argument scan: "\\ [90\% interval]" reads as a length
    return r"\shortstack{" + r" \\{} ".join(lines) + "}"


def latex_table(rows: Sequence[dict[str, Any]], columns: Sequence[str],
                caption: str | None = None, italic: Sequence[bool] | None = None,
                rule_before: Sequence[int] = (), align: str | None = None,
                label: str | None = None) -> str:
    """A booktabs ``tabular`` (in a ``table`` float when captioned) of ``rows``.
    ``italic`` marks rows to set in italics and ``rule_before`` the row indexes to separate
    with a rule, so that predicted rows stand visibly apart from measured ones. ``align``
    is the column spec (default: the first column left, the others right); ``label`` the
    float's ``\\label`` for ``\\ref``. Long headers are set on several lines, and in a
    float the tabular is shrunk to the text width if it is still wider (never enlarged).
    Needs ``\\usepackage{booktabs}`` (and ``adjustbox`` for a float)."""
    def cell(value: Any) -> str:
        return latex_escape(format_value(value))

    align = align or "l" + "r" * (len(columns) - 1)
    lines = [r"\begin{tabular}{" + align + "}", r"\toprule",
             " & ".join(_latex_header(c) for c in columns) + r" \\", r"\midrule"]
    for index, row in enumerate(rows):
        if index in rule_before:
            lines.append(r"\midrule")
        cells = [cell(row.get(c)) for c in columns]
        if italic and italic[index]:
            cells = [r"\textit{" + c + "}" if c else c for c in cells]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption is None:
        return "\n".join(lines)
    return "\n".join([r"\begin{table}[ht]", r"\centering",
                      r"\begin{adjustbox}{max width=\linewidth}", *lines, r"\end{adjustbox}",
                      r"\caption{" + latex_escape(caption) + "}",
                      *([r"\label{" + label + "}"] if label else []), r"\end{table}"])


def display_rows(rows: Sequence[dict[str, Any]],
                 headers: dict[str, str]) -> tuple[list[dict[str, str]], list[str]]:
    """``rows`` for a terminal table: only the ``headers`` keys, renamed to their short
    labels (with spaces, so a narrow terminal wraps them instead of cutting them off), and
    values to three significant digits; returns the rows and the column labels."""
    shown = [{label: format_value(row.get(key)) for key, label in headers.items()}
             for row in rows]
    return shown, list(headers.values())
