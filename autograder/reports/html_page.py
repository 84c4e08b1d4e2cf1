"""The frame of the staff's HTML pages: one self-contained file, a strict
Content-Security-Policy, shared style, escaping helpers and bar charts in CSS.

Nothing is loaded from anywhere: no network, no external script, no image
file. The only script a page may carry is inline and allowed by its SHA-256
hash in the policy (``script-src 'sha256-…'``), so a ``<script>`` that student
text smuggled in would not run even if escaping failed. Pages work without
script too: the script only adds sorting and filtering.
"""
import base64
import hashlib
import html

from autograder.reports import colours
from autograder.reports.safe_text import html_text

NUM = ' class="num"'
BASE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

STYLE = """
:root { --fg: #1d1d1f; --muted: #5f6368; --line: #d0d4d9; --high: #b3261e; --medium: #a15c00;
        --low: #33658a; --info: #5f6368; }
* { box-sizing: border-box; }
body { font-family: system-ui, "Noto Sans", "Noto Sans CJK SC", sans-serif; color: var(--fg);
       margin: 0 auto; padding: 1em 1.5em 4em; max-width: 1240px; line-height: 1.45; font-size: 15px; }
h1 { font-size: 1.6em; margin: .3em 0; } h2 { margin-top: 1.6em; border-bottom: 2px solid var(--line); }
h3 { margin: .2em 0 .4em; overflow-wrap: anywhere; }
nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: .5em 0; max-width: 100%; }
td, th { border: 1px solid var(--line); padding: .25em .5em; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
#students-table td:first-child { min-width: 7em; } #students-table th code { font-size: 12px; overflow-wrap: anywhere; }
th { background: #f1f3f4; } td.num, th.num { text-align: right; }
/* A heading, a number, a link or a status word is read whole: never one character a line. */
th, td.num, .word { white-space: nowrap; }
/* Who a row is about: wide enough for a name or two a line. */
.who { display: inline-block; min-width: 10em; overflow-wrap: anywhere; }
/* A table wider than the window scrolls inside its own box, never the page. */
.scroll { overflow-x: auto; max-width: 100%; }
pre { background: #f6f8fa; padding: .5em .7em; white-space: pre-wrap; overflow-wrap: anywhere;
      font-size: 13px; line-height: 1.35; margin: .3em 0; max-width: 100%; }
.muted { color: var(--muted); } .note { background: #fff8e1; padding: .4em .7em; border-left: 4px solid #f0b400; }
.sev { display: inline-block; min-width: 4.5em; text-align: center; border-radius: 3px; color: #fff;
       font-size: 12px; padding: 0 .4em; font-weight: 600; }
.sev-high { background: var(--high); } .sev-medium { background: var(--medium); }
.sev-low { background: var(--low); } .sev-info { background: var(--info); }
/* The bars keep a width of their own: the labels' column gives way first, and on a
   narrow screen each label goes above its bar. */
.chart { display: grid; grid-template-columns: minmax(0, 30em) minmax(8em, 1fr); gap: 3px .6em;
         align-items: center; margin: .5em 0 1em; max-width: 100%; }
.chart .label { text-align: right; font-size: 13px; overflow-wrap: anywhere; }
.chart .track { background: #eef0f2; height: 1.25em; position: relative; min-width: 0; }
.chart .bar { background: #4c72b0; height: 100%; }
.chart .value { position: absolute; left: .3em; top: .1em; font-size: 12px; line-height: 1.05em; background: rgba(255,255,255,.85); padding: 0 .25em; border-radius: 2px; }
@MODULE_COLOURS@
.student { border: 1px solid var(--line); border-radius: 6px; padding: .6em 1em; margin: 1em 0; }
.student:target { outline: 3px solid #4c72b0; }
.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(20em, 100%), 1fr)); gap: .2em 2em; }
.facts > div, .student h3 { overflow-wrap: anywhere; min-width: 0; }
details > summary { cursor: pointer; }
#filter { font-size: 15px; padding: .2em .4em; width: 22em; max-width: 100%; }
th[data-sort] { cursor: pointer; } th[data-sort]:after { content: " \\2195"; color: var(--muted); }
.hidden { display: none; }
@media (max-width: 640px) {
  body { padding: .6em .75em 3em; font-size: 14px; }
  .chart { grid-template-columns: minmax(0, 1fr); gap: 1px 0; }
  .chart .label { text-align: left; margin-top: .4em; }
  nav a { display: inline-block; margin: 0 .8em .3em 0; }
  /* A table of sentences (class="stack"): each row becomes a block of its cells, one under the other. */
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack thead { display: none; }
  table.stack tr { border: 1px solid var(--line); margin-bottom: .5em; }
  table.stack td { border: 0; overflow-wrap: anywhere; }
}
"""


def script_hash(script):
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii") + "'"


def csp(script=None):
    return BASE_CSP + (f"; script-src {script_hash(script)}" if script else "")


def page(title, body, lang="en", script=None, style=""):
    """A whole HTML document; ``script`` (ours, never student text) runs by its hash only."""
    tail = f"<script>{script}</script>\n" if script else ""
    return ("<!DOCTYPE html>\n"
            f"<html lang=\"{html.escape(lang)}\"><head><meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp(script)}\">\n"
            "<meta name=\"referrer\" content=\"no-referrer\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title><style>{STYLE.replace('@MODULE_COLOURS@', colours.css())}{style}</style></head>\n<body>\n{body}\n{tail}"
            "</body></html>\n")


def esc(text, limit=300):
    """One line of student (or any) text, escaped."""
    return html_text(text, limit)


def esc_block(text, limit=20000, max_lines=200):
    """Multi-line text (feedback, code) for a ``<pre>``: lines kept, each escaped."""
    text = "" if text is None else str(text)
    lines = text.replace("\r\n", "\n")[:limit].split("\n")
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"… ({len(lines) - max_lines} more lines)"]
    return "\n".join(html_text(line.expandtabs(4), limit=None) for line in lines)


def table(header, rows, numeric=(), attrs="", sortable=False):
    """``rows`` are lists of cells (HTML already escaped, or ``(HTML, sort key)``);
    ``numeric``: column indexes aligned right and sorted as numbers."""
    def th(index, cell):
        classes = NUM if index in numeric else ""
        sort = f' data-sort="{"num" if index in numeric else "text"}"' if sortable else ""
        return f"<th{classes}{sort}>{cell}</th>"

    head = "".join(th(index, cell) for index, cell in enumerate(header))
    body = []
    for row in rows:
        cells, extra = (row[0], row[1]) if isinstance(row, tuple) else (row, "")
        body.append(f"<tr{extra}>" + "".join(_td(index in numeric, cell) for index, cell in enumerate(cells))
                    + "</tr>")
    return f'<div class="scroll"><table{attrs}><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _td(numeric, cell):
    """A cell: HTML, or ``(HTML, sort key)`` (the key is ours: a number)."""
    key = ""
    if isinstance(cell, tuple):
        cell, key = cell[0], f' data-v="{html.escape(str(cell[1]))}"'
    return f"<td{NUM if numeric else ''}{key}>{cell}</td>"


def bar_chart(items, maximum=100.0, unit="%"):
    """Horizontal bars: ``items`` are ``(label HTML, value, css class)``; value in 0..maximum."""
    out = ['<div class="chart">']
    for label, value, css in items:
        width = 0.0 if not maximum else max(0.0, min(100.0, 100.0 * value / maximum))
        shown = f"{value:.0f}{unit}" if unit == "%" else f"{value:g}{unit}"
        out.append(f'<div class="label">{label}</div><div class="track"><div class="bar {css}" '
                   f'style="width:{width:.1f}%"></div><span class="value">{shown}</span></div>')
    out.append("</div>")
    return "".join(out)


def severity_badge(severity, label=None):
    """The badge of a severity (its class), showing ``label`` (the word in the page's language)."""
    if not severity:
        return ""
    return f'<span class="sev sev-{html.escape(severity)}">{html.escape(label or severity)}</span>'
