"""The side-by-side pages of the similarity check (``DIR/similarity/*.html``).

Written here rather than with copydetect's own report: that one loads
Bootstrap's script from a CDN and puts file paths (hence student folder names)
into the page unescaped. These pages are static: a Content-Security-Policy
that allows no script, no external load and no form; every student string
(folder names, code) goes through :func:`autograder.reports.safe_text.html_text`,
which also shows control and bidi-override characters escaped, so code cannot
look different from what it is. Only the highlight tags are ours. File names
are ours too (``<module>-<rank>.html``), never a student's.

A page fits a laptop screen: the two files sit side by side and their lines
wrap (no horizontal scrolling). Matched regions are numbered in order on the
left; a region on the right carries the number of the left region it shares
most fingerprints with, and each number links to its partner. Lines that are
the template's given code are never highlighted. Links into a page go to its
first match (``#m1``).
"""
import functools
import html
import pathlib

from autograder.reports.html_page import page as html_page
from autograder.reports.safe_text import html_text

FIRST_MATCH = "m1"
STYLE = """
.pair { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1em; }
.pair pre { font-size: 12px; }
mark { padding: 0; } mark.a { background: #f6c9c9; } mark.b { background: #c6efc6; }
a.n { font: bold 11px sans-serif; color: #fff; background: #444; border-radius: 3px; padding: 0 .3em;
      text-decoration: none; margin-right: .2em; }
a.n:target { background: #c00; }
.flag { color: #a00; font-weight: bold; }
"""


def _escape_code(text):
    """Code as HTML text: line structure kept, each line escaped (tabs expanded)."""
    return "\n".join(_escape_line(line) for line in text.split("\n"))


@functools.lru_cache(maxsize=65536)
def _escape_line(line):  # the same lines come back on every page of a module
    return html_text(line.expandtabs(4), limit=None)


def _spans(slices, length):
    """Sorted, merged ``(start, end)`` ranges from copydetect's 2xN slice array."""
    if slices is None or len(slices) < 2 or len(slices[0]) == 0:
        return []
    ranges = sorted((max(0, int(s)), min(length, int(e))) for s, e in zip(slices[0], slices[1]))
    merged = []
    for start, end in ranges:
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


@functools.lru_cache(maxsize=64)
def _given_lines(template):  # one template per module, asked for on every page
    return frozenset(line.strip() for line in template.split("\n")) - {""}


def _given_ranges(text, template):
    """Character ranges of ``text`` whose line is a line of the template's given code."""
    given = _given_lines(template or "")
    ranges, position = [], 0
    for line in text.split("\n"):
        if line.strip() in given:
            ranges.append((position, position + len(line)))
        position += len(line) + 1
    return ranges


def _without(spans, holes):
    """``spans`` minus ``holes``, both sorted ranges that do not overlap among themselves
    (merged matches, lines): one pass over both."""
    out, first = [], 0
    for start, end in spans:
        while first < len(holes) and holes[first][1] <= start:  # behind this span and every later one
            first += 1
        cursor, index = start, first
        while index < len(holes) and holes[index][0] < end:
            h_start, h_end = holes[index]
            if h_start > cursor:
                out.append((cursor, h_start))
            cursor = max(cursor, h_end)
            index += 1
        if cursor < end:
            out.append((cursor, end))
    return out


def regions(text, slices, template=""):
    """The matched regions of ``text`` to highlight: copydetect's, minus given code."""
    spans = _without(_spans(slices, len(text)), _given_ranges(text, template))
    trimmed = []
    for start, end in spans:  # a number at a region's first character, not at a line's end
        piece = text[start:end]
        if piece.strip():
            start += len(piece) - len(piece.lstrip())
            end -= len(piece) - len(piece.rstrip())
            trimmed.append((start, end))
    return trimmed


def pair_numbers(text_a, spans_a, text_b, spans_b, fingerprint):
    """Number of each right-hand region: the left region (1-based) sharing most
    fingerprints with it (None when it shares none)."""
    left = [set(fingerprint(text_a[s:e])) for s, e in spans_a]
    numbers = []
    for start, end in spans_b:
        mine = set(fingerprint(text_b[start:end]))
        best = max(range(len(left)), key=lambda i: len(left[i] & mine), default=None)
        numbers.append(best + 1 if best is not None and left[best] & mine else None)
    return numbers


def highlighted(text, slices, css_class, template="", numbers=None, side="a", other="b", linked=None):
    """``text`` escaped, the matching regions wrapped in ``<mark class=...>``; with
    ``numbers`` each region gets its number, a link to its partner on the other
    side where ``linked`` (the numbers there) has it."""
    out, position, seen = [], 0, {}
    spans = regions(text, slices, template) if template else _spans(slices, len(text))
    for index, (start, end) in enumerate(spans):
        out.append(_escape_code(text[position:start]))
        label = ""
        if numbers is not None:
            number = numbers[index]
            if number is not None:
                seen[number] = seen.get(number, 0) + 1
                ident = f"{side}{number}" + (f"-{seen[number]}" if seen[number] > 1 else "")
                first = ' id="m1"' if side == "a" and index == 0 else ""
                target = f' href="#{other}{number}"' if linked is None or number in linked else ""
                label = f'<span{first}></span><a class="n" id="{ident}"{target}>{number}</a>'
        out.append(f'{label}<mark class="{css_class}">{_escape_code(text[start:end])}</mark>')
        position = end
    out.append(_escape_code(text[position:]))
    return "".join(out)


def _page(title, body):
    return html_page(title, body, style=STYLE)


class PageWriter:
    """Writes the pair pages and the index of one ``DIR/similarity/`` folder.
    ``templates``: ``{module: stub text}``, whose given lines are never highlighted;
    ``fingerprints``: text -> its k-gram hashes (the comparison's own, to number
    matching passages); ``framework``: the assignment's framework comparison, if any."""

    def __init__(self, folder, templates=None, fingerprints=None, framework=None):
        self.folder = pathlib.Path(folder)
        self.templates = templates or {}
        self.fingerprints = fingerprints
        self.framework = framework or {}

    def pair(self, module, rank, pair, text_a, text_b, other=None):
        """One page; ``other``: ``'torch'`` (the framework's file) or ``'reference'`` (the solution) on the right."""
        label = self.framework.get("label", "framework")

        torch = other == "torch"
        name = f"{module}-{'torch-' if torch else 'ref-' if other else ''}{rank}.html"
        template = self.templates.get(module, "")
        left = html_text(pair.a, 200)
        right = {"torch": html.escape(f"{self.framework.get('package', '')} {label}"),
                 "reference": f"solutions/{html.escape(module)}.py"}.get(other, html_text(pair.b, 200))
        title = f"{module}: {label if torch else 'reference' if other else 'pair'} {rank}"
        members = getattr(pair, "members", None)
        if members:
            names = ", ".join(html_text(member, 200) for member in members)
            spans = regions(text_a, pair.slices_a, template)
            body = (f"<h1>{html.escape(module)}.py &mdash; identical files</h1>\n<p>{len(members)} students handed "
                    f"in the same file (line endings and trailing blanks aside): {names}. Highlighted: what they "
                    "wrote beyond the template's given code.</p><p><a href=\"index.html\">All pairs</a>.</p>\n"
                    f"<pre>{highlighted(text_a, pair.slices_a, 'a', template, list(range(1, len(spans) + 1)), 'a', 'a')}</pre>")
            (self.folder / name).write_text(_page(title, body), encoding="utf-8")
            return name
        if other:
            shares = (f"<p>{left}: {pair.similarity_a:.0%} of its code found in {right} "
                      f"({pair.overlap} matching characters of filtered code).</p>")
            template_b = "" if torch else template
        else:
            shares = (f"<p>{left}: {pair.similarity_a:.0%} of its code matches; {right}: "
                      f"{pair.similarity_b:.0%}; {pair.overlap} matching characters of filtered code.</p>")
            template_b = template
        spans_a, spans_b = regions(text_a, pair.slices_a, template), regions(text_b, pair.slices_b, template_b)
        numbers_b = pair_numbers(text_a, spans_a, text_b, spans_b, self.fingerprints)
        numbers_a = list(range(1, len(spans_a) + 1))
        body = (f"<h1>{html.escape(module)}.py &mdash; {left} / {right}</h1>\n{shares}\n"
                "<p>Highlighted: regions whose fingerprints match after names, strings and comments "
                "are normalised; the template's given code, the reference answers and passages common to "
                "the class are not evidence and never highlighted. The same number marks the same region on "
                "both sides (click it to jump). <a href=\"#m1\">First match</a> &middot; "
                "<a href=\"index.html\">All pairs</a>.</p>\n"
                f"<div class=\"pair\"><div><h2>{left}</h2><pre>"
                f"{highlighted(text_a, pair.slices_a, 'a', template, numbers_a, 'a', 'b', set(numbers_b))}</pre></div>\n"
                f"<div><h2>{right}</h2><pre>"
                f"{highlighted(text_b, pair.slices_b, 'b', template_b, numbers_b, 'b', 'a')}</pre></div></div>")
        (self.folder / name).write_text(_page(title, body), encoding="utf-8")
        return name

    def index(self, result):
        parts = [f"<h1>Similarity of the student modules</h1>\n<p>{html.escape(result.get('tool', ''))}, "
                 f"k = {result.get('k')}; the template's given code, the reference answers and passages shared "
                 "by more than a few submissions are excluded. Listed per module: every pair at or above the "
                 f"threshold, then the top {html.escape(str(result.get('top')))}; identical files once, as a "
                 "group. Flagged pairs are worth reading side by side; a score is never proof.</p>"]
        for module, data in result.get("modules", {}).items():
            calibration = data.get("calibration") or {}
            honest = (f" Independent correct solutions: {calibration.get('reached', 0)} of "
                      f"{calibration.get('pairs', 0)} pairs reach it (highest {calibration.get('max_score', 0):.2f})."
                      if calibration.get("pairs") else "")
            parts.append(f"<h2>{html.escape(module)}.py</h2><p>Threshold {data['threshold']:.2f} "
                         f"(and at least {data['min_overlap']} matching characters).{html.escape(honest)} "
                         f"{html.escape(data['why'])}</p>")
            parts.append(_table(["Rank", "Students", "Score", "Overlap", "Flagged", ""],
                                [[str(rank), _members(row), f"{row['score']:.2f}", str(row["overlap"]),
                                  _flag(row["flagged"]), _link(row["page"])]
                                 for rank, row in enumerate(data["pairs"], 1)]))
        for module, data in (result.get("solution_reference") or {}).items():
            parts.append(f"<h2>{html.escape(module)}.py against the reference solution</h2><p>Threshold "
                         f"{data['threshold']:.2f}. {html.escape(data['why'])}</p>")
            parts.append(f"<p>{html.escape(data['skipped'])}</p>" if data.get("skipped") else _table(
                ["Student", "Share in the reference", "Overlap", "Flagged", ""],
                [[html_text(row["student"], 200), f"{row['score']:.2f}", str(row["overlap"]), _flag(row["flagged"]),
                  _link(row["page"])] for row in data.get("matches", [])]))
        torch = result.get("torch_reference")
        if not torch:  # the assignment compares no module with a framework file
            pass
        elif torch.get("skipped"):
            parts.append(_framework_heading(torch) + f"<p>{html.escape(torch['skipped'])}</p>")
        else:
            parts.append(_framework_heading(torch))
            parts.append(_table(["Student", f"Share in {torch.get('label', 'the framework')}", "Overlap", "Flagged", ""],
                                [[html_text(row["student"], 200), f"{row['score']:.2f}", str(row["overlap"]),
                                  _flag(row["flagged"]), _link(row["page"])]
                                 for row in torch.get("matches", [])]))
        (self.folder / "index.html").write_text(_page("Similarity", "\n".join(parts)), encoding="utf-8")


def _framework_heading(data):
    module, label = data.get("module", "module"), data.get("label", "the framework")
    return (f"<h2>{html.escape(str(module))}.py against {html.escape(str(label))}</h2>"
            f"<p>{html.escape(data.get('why', ''))}</p>")


def _members(row):
    members = row.get("members") or [row["a"], row["b"]]
    joined = " / ".join(html_text(member, 200) for member in members)
    return f"identical: {joined}" if row.get("identical") else joined


def _link(page):
    return f"<a href=\"{html.escape(page)}#{FIRST_MATCH}\">side by side</a>"


def _flag(value):
    return '<span class="flag">yes</span>' if value else "no"


def _table(header, rows):
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"
