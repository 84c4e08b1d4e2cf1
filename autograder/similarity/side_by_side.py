"""The side-by-side pages of the similarity check (``DIR/similarity/*.html``).

Written here rather than with copydetect's own report: that one loads
Bootstrap's script from a CDN and puts file paths (hence student folder names)
into the page unescaped. These pages are static: a Content-Security-Policy
that allows no script, no external load and no form; every student string
(folder names, code) goes through :func:`autograder.reports.safe_text.html_text`,
which also shows control and bidi-override characters escaped, so code cannot
look different from what it is. Only the highlight tags are ours. File names
are ours too (``<module>-<rank>.html``), never a student's.

A page fits every screen: on a laptop the two files sit side by side, on a
phone one above the other; lines wrap (no horizontal scrolling). Matched
regions are numbered in order on the left; a region on the right carries the
number of the left region it shares most fingerprints with, and each number
links to its partner. Lines that are the template's given code are never
highlighted. Links into a page go to its first match (``#m1``). The words are
the class's language (``lang``, catalogs in autograder/i18n/locale/).
"""
import functools
import html
import pathlib

from autograder.i18n import joining, text as t
from autograder.reports.html_page import page as html_page
from autograder.reports.safe_text import html_text
from autograder.similarity import fingerprints
from autograder.similarity.display import PAGE_NAME

FIRST_MATCH = "m1"
STYLE = """
.pair { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1em; }
.pair > div { min-width: 0; }
.pair pre, pre.code { font-size: 12px; }
@media (max-width: 760px) { .pair { grid-template-columns: minmax(0, 1fr); } body { padding: .6em .7em 3em; } }
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


def page(title, body, lang):
    """A whole page of the similarity folder."""
    return html_page(title, body, lang=lang, style=STYLE)


def link(name, lang):
    """A link to one of our pages at its first match ('' for a name that is not ours)."""
    if isinstance(name, str) and PAGE_NAME.fullmatch(name):
        return f'<a class="word" href="{html.escape(name)}#{FIRST_MATCH}">' + t("side by side", lang) + "</a>"
    return ""


def _percent(share):
    return f"{int(share * 100 + 1e-9)}%"   # never rounded up


def sentences(lang, *parts):
    """Sentences one after the other, as the language joins them (empty parts left out)."""
    return joining.sentences(parts, lang)


def names(members, lang):
    """Student names as one escaped list in ``lang`` (Chinese lists with 、)."""
    return joining.listed([html_text(member, 200) for member in members], lang)


class PageWriter:
    """Writes the pair pages of one ``DIR/similarity/`` folder, in ``lang``.
    ``templates``: ``{module: stub text}``, whose given lines are never highlighted;
    ``boilerplate`` and ``texts`` (per module, filled in by the check): what is left out
    of the comparison and the students' files; ``framework``: the assignment's framework
    comparison, if any."""

    def __init__(self, folder, templates=None, framework=None, lang="en"):
        self.folder = pathlib.Path(folder)
        self.templates = templates or {}
        self.framework = framework or {}
        self.lang = lang
        self.boilerplate, self.texts = {}, {}

    def _matched(self, module, text_a, text_b):
        """Both files as a page shows them (their readable canonical form) and where they
        match: the comparison the score comes from, not a new one."""
        boilerplate = self.boilerplate.get(module)
        found = fingerprints.compare(fingerprints.fingerprint(text_a, boilerplate),
                                     fingerprints.fingerprint(text_b, boilerplate))
        return (fingerprints.readable(text_a), fingerprints.to_readable(text_a, found[3]),
                fingerprints.readable(text_b), fingerprints.to_readable(text_b, found[4]))

    def _given(self, module):
        """The template's lines, as written and in the form the pages show."""
        stub = self.templates.get(module, "")
        return stub and stub + "\n" + fingerprints.readable(stub)

    def _as_handed_in(self, text):
        return ("<details><summary>" + t("The file as handed in (with its comments)", self.lang) + "</summary>"
                f'<pre class="code">{_escape_code(text)}</pre></details>')

    def _write(self, name, title, body):
        (self.folder / name).write_text(page(title, body, self.lang), encoding="utf-8")
        return name

    def _help(self):
        lang = self.lang
        return "<p>" + sentences(lang, t(
            "Highlighted: regions whose fingerprints match once names, strings, comments, layout and order are set "
            "aside, in each file as the check reads it (comments and docstrings dropped, one layout; the file as "
            "handed in is below it). Never highlighted, never evidence: the template's given code, what independent "
            "correct solutions write alike, and reference code that is public. The same number marks the same region "
            "on both sides (click it to jump).", lang), f'<a href="#{FIRST_MATCH}">' + t("First match", lang)
            + '</a> &middot; <a href="index.html">' + t("All pairs", lang) + "</a>") + "</p>\n"

    def identical(self, module, rank, group, text):
        """The page of students who all handed in the same code."""
        lang, template = self.lang, self._given(module)
        shown, slices, _, _ = self._matched(module, text, text)
        spans = regions(shown, slices, template)
        told = sentences(
            lang, t("{count} students handed in the same code (names, comments, layout and order aside): {names}.",
                    lang, count=len(group.members), names=names(group.members, lang)),
            t("Shown as the check reads it (comments and docstrings dropped, one layout); highlighted: what they "
              "wrote beyond the template and beyond what honest solutions share.", lang),
            '<a href="index.html">' + t("All pairs", lang) + "</a>")
        numbers = list(range(1, len(spans) + 1))
        body = (f"<h1>{html.escape(module)}.py &mdash; " + t("the same code", lang) + f"</h1>\n<p>{told}</p>\n"
                f'<pre class="code">{highlighted(shown, slices, "a", template, numbers, "a", "a")}</pre>\n'
                + self._as_handed_in(text))
        return self._write(f"{module}-{rank}.html", t("{module}.py: group {rank}", lang, module=module, rank=rank), body)

    def pair(self, module, rank, pair, text_a, text_b, other=None, group=None):
        """One pair's page; ``other``: ``'torch'`` (the framework's file) or ``'reference'``
        (the solution) on the right; ``group``: the group the pair stands for."""
        lang, label = self.lang, self.framework.get("label", "framework")
        torch = other == "torch"
        name = f"{module}-{'torch-' if torch else 'ref-' if other else ''}{rank}.html"
        given = self._given(module)
        left = html_text(pair.a, 200)
        right = {"torch": html.escape(f"{self.framework.get('package', '')} {label}"),
                 "reference": f"solutions/{html.escape(module)}.py"}.get(other, html_text(pair.b, 200))
        if torch:
            title = t("{module}.py: against {label}, {rank}", lang, module=module, label=label, rank=rank)
        elif other:
            title = t("{module}.py: against the reference, {rank}", lang, module=module, rank=rank)
        else:
            title = t("{module}.py: pair {rank}", lang, module=module, rank=rank)
        shares = t("{left}: {share_a} of its own code matches; {right}: {share_b}; {overlap} matching characters "
                   "of filtered code.", lang, left=left, right=right, share_a=_percent(pair.similarity_a),
                   share_b=_percent(pair.similarity_b), overlap=pair.overlap)
        members = "" if group is None or len(group.members) < 3 else (
            "<p>" + t("One group of {count} students whose files match: {names}. Shown: the closest pair of them.",
                      lang, count=len(group.members), names=names(group.members, lang)) + "</p>\n")
        given_b = "" if torch else given
        shown_a, slices_a, shown_b, slices_b = self._matched(module, text_a, text_b)
        spans_a, spans_b = regions(shown_a, slices_a, given), regions(shown_b, slices_b, given_b)
        numbers_b = pair_numbers(shown_a, spans_a, shown_b, spans_b, fingerprints.text_hashes)
        numbers_a = list(range(1, len(spans_a) + 1))
        original_b = "" if torch else self._as_handed_in(text_b)
        body = (f"<h1>{html.escape(module)}.py &mdash; {left} / {right}</h1>\n{members}<p>{shares}</p>\n"
                + self._help() +
                f"<div class=\"pair\"><div><h2>{left}</h2><pre class=\"code\">"
                f"{highlighted(shown_a, slices_a, 'a', given, numbers_a, 'a', 'b', set(numbers_b))}</pre>"
                f"{self._as_handed_in(text_a)}</div>\n<div><h2>{right}</h2><pre class=\"code\">"
                f"{highlighted(shown_b, slices_b, 'b', given_b, numbers_b, 'b', 'a')}</pre>{original_b}</div></div>")
        return self._write(name, title, body)
