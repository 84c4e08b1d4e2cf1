"""The side-by-side pages of the similarity check (``DIR/similarity/*.html``).

Written here rather than with copydetect's own report: that one loads
Bootstrap's script from a CDN and puts file paths (hence student folder names)
into the page unescaped. These pages are static: a Content-Security-Policy
that allows no script, no external load and no form; every student string
(folder names, code) goes through :func:`autograder.reports.safe_text.html_text`,
which also shows control and bidi-override characters escaped, so code cannot
look different from what it is. Only the highlight tags are ours. File names
are ours too (``<module>-<rank>.html``), never a student's.
"""
import html
import pathlib

from autograder.reports.safe_text import html_text

CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
STYLE = """
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .2em .6em; text-align: left; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
pre { background: #f8f8f8; padding: .6em; overflow-x: auto; font-size: 12px; line-height: 1.35; }
mark.a { background: #f2b6b6; } mark.b { background: #b6f2b6; }
.flag { color: #a00; font-weight: bold; }
"""


def _page(title, body):
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
            "<meta name=\"referrer\" content=\"no-referrer\">\n"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")


def _escape_code(text):
    """Code as HTML text: line structure kept, each line escaped (tabs expanded)."""
    return "\n".join(html_text(line.expandtabs(4), limit=None) for line in text.split("\n"))


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


def highlighted(text, slices, css_class):
    """``text`` escaped, the matching regions wrapped in ``<mark class=...>``."""
    out, position = [], 0
    for start, end in _spans(slices, len(text)):
        out.append(_escape_code(text[position:start]))
        out.append(f'<mark class="{css_class}">{_escape_code(text[start:end])}</mark>')
        position = end
    out.append(_escape_code(text[position:]))
    return "".join(out)


class PageWriter:
    """Writes the pair pages and the index of one ``DIR/similarity/`` folder."""

    def __init__(self, folder):
        self.folder = pathlib.Path(folder)

    def pair(self, module, rank, pair, text_a, text_b, torch=False):
        name = f"{module}-{'torch-' if torch else ''}{rank}.html"
        left, right = html_text(pair.a, 200), ("torch GradScaler" if torch else html_text(pair.b, 200))
        title = f"{module}: {'GradScaler' if torch else 'pair'} {rank}"
        if torch:
            shares = (f"<p>{left}: {pair.similarity_a:.0%} of its code found in torch/amp/grad_scaler.py "
                      f"({pair.overlap} matching characters of filtered code).</p>")
        else:
            shares = (f"<p>{left}: {pair.similarity_a:.0%} of its code matches; {right}: "
                      f"{pair.similarity_b:.0%}; {pair.overlap} matching characters of filtered code.</p>")
        body = (f"<h1>{html.escape(module)}.py &mdash; {left} / {right}</h1>\n{shares}\n"
                "<p>Highlighted: regions whose fingerprints match after names, strings and comments "
                "are normalised and the template's given code is removed. "
                "<a href=\"index.html\">All pairs</a>.</p>\n"
                f"<div class=\"pair\"><div><h2>{left}</h2><pre>{highlighted(text_a, pair.slices_a, 'a')}</pre></div>\n"
                f"<div><h2>{right}</h2><pre>{highlighted(text_b, pair.slices_b, 'b')}</pre></div></div>")
        (self.folder / name).write_text(_page(title, body), encoding="utf-8")
        return name

    def index(self, result):
        parts = [f"<h1>Similarity of the student modules</h1>\n<p>{html.escape(result.get('tool', ''))}, "
                 f"k = {result.get('k')}; the template's given code is excluded. Flagged pairs are worth "
                 "reading side by side; a score is never proof.</p>"]
        for module, data in result.get("modules", {}).items():
            parts.append(f"<h2>{html.escape(module)}.py</h2><p>Threshold {data['threshold']:.2f} "
                         f"(and at least {data['min_overlap']} matching characters). {html.escape(data['why'])}</p>")
            parts.append(_table(["Rank", "Student A", "Student B", "Score", "Overlap", "Flagged", ""],
                                [[str(rank), html_text(row["a"], 200), html_text(row["b"], 200),
                                  f"{row['score']:.2f}", str(row["overlap"]), _flag(row["flagged"]),
                                  f"<a href=\"{html.escape(row['page'])}\">side by side</a>"]
                                 for rank, row in enumerate(data["pairs"], 1)]))
        torch = result.get("torch_reference", {})
        parts.append(f"<h2>loss_scaler.py against torch's GradScaler</h2><p>{html.escape(torch.get('why', ''))}</p>")
        if torch.get("skipped"):
            parts.append(f"<p>{html.escape(torch['skipped'])}</p>")
        else:
            parts.append(_table(["Student", "Share in GradScaler", "Overlap", "Flagged", ""],
                                [[html_text(row["student"], 200), f"{row['score']:.2f}", str(row["overlap"]),
                                  _flag(row["flagged"]), f"<a href=\"{html.escape(row['page'])}\">side by side</a>"]
                                 for row in torch.get("matches", [])]))
        (self.folder / "index.html").write_text(_page("Similarity", "\n".join(parts)), encoding="utf-8")


def _flag(value):
    return '<span class="flag">yes</span>' if value else "no"


def _table(header, rows):
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"
