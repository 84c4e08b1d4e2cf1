"""Writing a class's report files: scores.csv (and with a roster gradebook.csv), report.md,
report.html and the charts, all from the same rows (:mod:`autograder.class_reports.class_report`)."""
import pathlib
import sys

from autograder.class_reports.charts import start_charts
from autograder.class_reports.over_time.changes import CHANGES_NAME, compare
from autograder.class_reports.over_time.changes import render_csv as render_changes
from autograder.class_reports.over_time.progress_view import Progress
from autograder.class_reports.over_time.results_files import load
from autograder.class_reports.csv_files import GRADEBOOK_NAME, render_csv, render_gradebook
from autograder.class_reports.class_report import (CSV_NAME, HTML_NAME, REPORT_NAME, load_rows,
                                                   test_columns)
from autograder.class_reports.html import render_html
from autograder.class_reports.markdown import render_markdown
from autograder.similarity import pairs as similarity


def write_all(output_dir, manifest):
    """Write scores.csv, report.md and the charts; return the paths written."""
    output_dir = pathlib.Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    rows = load_rows(output_dir, manifest)
    changes = comparison(output_dir, manifest)
    progress = Progress(output_dir, manifest, [row.student for row in rows if not row.absent]) \
        if manifest.get("history") else None
    columns = test_columns(rows)
    report_lang = manifest.get("report_lang") or "en"
    shown_columns = columns if report_lang == "en" else test_columns(rows, report_lang)  # titles in its language
    pending = start_charts(output_dir, rows, shown_columns, report_lang)  # drawn meanwhile where there is fork
    if pending.note is not None:
        print(f"class report: {pending.note.render('en')}", file=sys.stderr)
    try:
        csv_path = output_dir / CSV_NAME
        csv_path.write_text(render_csv(rows, columns), encoding="utf-8")
        gradebook = render_gradebook(rows, report_lang)
        if gradebook:
            (output_dir / GRADEBOOK_NAME).write_text(gradebook, encoding="utf-8")
        if changes is not None:
            (output_dir / CHANGES_NAME).write_text(render_changes(changes), encoding="utf-8")
        found = similarity.load_result(output_dir)
        html_path = output_dir / HTML_NAME
        html_path.write_text(render_html(rows, shown_columns, manifest, found, lang=report_lang,
                                                 changes=changes, progress=progress), encoding="utf-8")
    finally:
        charts = pending.finish()
    report_path = output_dir / REPORT_NAME  # shows the charts that were drawn
    report_path.write_text(render_markdown(rows, shown_columns, manifest, charts, found, lang=report_lang,
                                           chart_note=pending.note.render(report_lang) if pending.note else "",
                                           changes=changes, progress=progress),
                            encoding="utf-8")
    return [csv_path] + ([output_dir / GRADEBOOK_NAME] if gradebook else []) + \
        ([output_dir / CHANGES_NAME] if changes is not None else []) + [report_path, html_path] + \
        (list(charts.values()) if charts else [])


def comparison(output_dir, manifest):
    """With ``--compare``: this run beside the one it names (None without it, or when that folder
    is gone: the report then says nothing of it)."""
    compared = manifest.get("compare") if isinstance(manifest.get("compare"), dict) else None
    old = load(pathlib.Path(compared["dir"]) / "run.json") if compared and compared.get("dir") else None
    if old is None:
        return None
    return compare(compared["dir"], old, output_dir, manifest)
