"""The score table: one row per module and the total, laid out by rich, which
counts a CJK character as two cells, so that Chinese lines up; each module's
first thing to fix is its last column where the line leaves it room."""
import io

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from autograder.i18n import _
from autograder.i18n import text as t
from autograder.reports import safe_text, wrap
from autograder.reports.terminal.styles import STYLES

_GAP = 3            # cells between two columns of the table (padding, rule, padding)
NARROW_DIAGNOSIS = 40  # below this many cells the diagnosis goes under the table, not beside it


def points(value):
    return f"{value:g}"


def score_cells(pairs):
    """"score / maximum" for each pair, padded so that every "/" sits in the same column."""
    scores = [points(score) for score, _maximum in pairs]
    maxima = [points(maximum) for _score, maximum in pairs]
    left, right = max(map(len, scores), default=1), max(map(len, maxima), default=1)
    return [f"{score:>{left}} / {maximum:<{right}}" for score, maximum in zip(scores, maxima)]


def _score_style(score, maximum):
    return "full" if maximum and score >= maximum else "lost" if not score else "partial"


def rows(report, lang):
    """[(module, score text, score style, not-run text)], the total row last."""
    modules = report.by_module()
    not_run = report.hidden_not_run if isinstance(report.hidden_not_run, dict) else {}
    pairs = list(modules.values()) + [(report.score, report.max_score)]
    scores = score_cells(pairs)
    visible = " " + t("visible", lang) if not_run else ""
    found = []
    for (module, (score, maximum)), score_text in zip(modules.items(), scores):
        missing = not_run.get(module, 0)
        found.append((safe_text.terminal_line(module, limit=40), score_text + (visible if missing else ""),
                      _score_style(score, maximum),
                      t("{points} hidden points", lang, points=points(missing)) if missing else ""))
    total_missing = sum(not_run.values())
    found.append((t("TOTAL", lang), scores[-1] + (visible if total_missing else ""),
                  _score_style(report.score, report.max_score),
                  t("{points} hidden points", lang, points=points(total_missing)) if total_missing else ""))
    return found


def _columns(table_rows, lang):
    headers = [_("Module").render(lang), _("Score").render(lang)]
    keep = [0, 1]
    if any(row[3] for row in table_rows):
        headers.append(_("Not run here").render(lang))
        keep.append(3)
    cells = [[row[index] for index in keep] for row in table_rows]
    widths = [max(cell_len(text) for text in [header] + [row[column] for row in cells])
              for column, header in enumerate(headers)]
    return headers, cells, widths


def fix_column(report, lang, width):
    """The cells the first thing to fix has beside the scores on a line of ``width``,
    or None where it goes under the table (fewer than NARROW_DIAGNOSIS)."""
    _headers, _cells, widths = _columns(rows(report, lang), lang)
    room = width - sum(widths) - _GAP * len(widths)
    return room if room >= NARROW_DIAGNOSIS else None


def module_table(report, lang, width, fixes=None):
    """The table as lines of Text; ``fixes`` (module -> lines already wrapped to
    :func:`fix_column`) fill its last column."""
    table_rows = rows(report, lang)
    headers, cells, widths = _columns(table_rows, lang)
    styles = [row[2] for row in table_rows]
    if fixes is not None:
        header = _("First thing to fix").render(lang)
        shown = [fixes.get(row[0], []) for row in table_rows[:-1]] + [[]]
        headers.append(header)
        widths.append(max([cell_len(header)] + [cell_len(piece) for cell in shown for piece in cell]))
        for cell_row, cell in zip(cells, shown):
            cell_row.append("\n".join(cell))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    for column, header in enumerate(headers):
        table.add_column(Text(header), justify="left", overflow="fold", width=widths[column])
    for row, style in zip(cells, styles):
        texts = [Text(text) for text in row]
        texts[1].stylize(STYLES[style])
        table.add_row(*texts)
    return _lines(table, max(width, sum(widths) + _GAP * (len(widths) - 1)))


def _lines(table, width):
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False, no_color=True,
                      highlight=False, emoji=False, markup=False, soft_wrap=False)
    found = []
    for segments in console.render_lines(table, console.options.update(width=width), pad=False):
        text = Text(end="")
        for segment in segments:
            text.append(segment.text, segment.style)
        text.rstrip()
        found.append(text)
    while found and not found[0].plain:
        found.pop(0)
    while found and not found[-1].plain:
        found.pop()
    return found


def preload():
    """Lay out one CJK table now: rich loads its character-width data lazily."""
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column(Text("模块"))
    table.add_row(Text("模块"))
    _lines(table, 80)


def fix_lines(module, fix, lang, width):
    """One module's entry of the list under the table."""
    return wrap.wrap_hanging(t("{module}: {fix}", lang, module=module, fix=fix), width, "  ")
