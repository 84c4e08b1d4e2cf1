"""Open one of our HTML pages in headless Chromium and measure it as a TA's
browser shows it: does anything overflow the window, how wide is CJK text, do
the bars keep a width.

The page keeps its own Content-Security-Policy; the measuring script is added
with its hash in that policy (never 'unsafe-inline'), runs after the page's
own script and writes its findings into the title, which ``--dump-dom`` prints.
Chromium's window is never narrower than 500 px: a phone's width (390 px) is
measured with the page in a frame of that width inside a wider window (the
frame is the page's viewport: its media queries and widths are a phone's), the
findings posted to the outer page.
"""
import html
import json
import os
import re
import shutil
import subprocess
import tempfile

from autograder.reports.html_page import script_hash

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run")

MIN_WINDOW = 500   # Chromium's narrowest window

# Where a script's findings go: the title (a page of its own) or the outer page (in a frame).
REPORT = """
function report(found) {
  var text = JSON.stringify(found);
  document.title = text;
  if (window.parent !== window) { window.parent.postMessage(text, '*'); }
}
"""

MEASURE = REPORT + """
(function () {
  var width = window.innerWidth, wide = [];
  var all = document.body.getElementsByTagName('*');
  for (var i = 0; i < all.length; i++) {
    var box = all[i].getBoundingClientRect();
    if (box.width > 0 && box.right > width + 1 && !all[i].closest('.scroll')) {
      wide.push(all[i].tagName + '.' + all[i].className + ' ' + Math.round(box.right));
    }
    if (all[i].tagName === 'PRE' && all[i].scrollWidth > all[i].clientWidth + 1) {
      wide.push('PRE scrolls ' + all[i].scrollWidth + ' > ' + all[i].clientWidth);
    }
  }
  var probe = document.createElement('span');
  probe.style.fontSize = '20px';
  probe.style.whiteSpace = 'nowrap';
  probe.textContent = '\\u6df7\\u5408\\u7cbe\\u5ea6\\u53cd\\u5411\\u4f20\\u64ad\\u68af\\u5ea6';
  document.body.appendChild(probe);
  var cjk = probe.getBoundingClientRect().width;
  document.body.removeChild(probe);
  var views = document.querySelectorAll('section.student').length;
  var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
  // Bar charts: every track has a width, every bar with a value has pixels, every value is in the window.
  var tracks = document.querySelectorAll('.chart .track'), bars = [], flat = [], cut = [];
  for (var j = 0; j < tracks.length; j++) {
    var track = tracks[j].getBoundingClientRect(), bar = tracks[j].querySelector('.bar');
    var value = tracks[j].querySelector('.value').getBoundingClientRect();
    bars.push(Math.round(track.width));
    if (parseFloat(bar.style.width) > 0 && bar.getBoundingClientRect().width < 1) { flat.push(j); }
    if (value.left < 0 || value.right > width + 1) { cut.push(j); }
  }
  var table = document.getElementById('students-table');
  report({window: width, scroll_width: document.documentElement.scrollWidth,
          wide: wide.slice(0, 20), cjk_width: cjk, views: views,
          target_top: target ? Math.round(target.getBoundingClientRect().top) : null,
          scroll_y: Math.round(window.scrollY), tracks: tracks.length,
          narrowest_track: bars.length ? Math.min.apply(null, bars) : null, flat_bars: flat, cut_values: cut,
          students_table: table ? [table.scrollWidth, table.parentNode.clientWidth] : null});
})();
"""


def find_chromium():
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


# Sorts the students table by name, then by total (twice), filters it: what a TA's clicks do.
CLICKS = REPORT + """
(function () {
  var head = document.querySelectorAll('#students-table th'), filter = document.getElementById('filter');
  function first(column) { return document.querySelector('#students-table tbody tr').cells[column].textContent; }
  head[0].click(); var name = first(0);
  head[2].click(); var high = first(2);
  head[2].click(); var low = first(2);
  filter.value = 'idle'; filter.dispatchEvent(new Event('input'));
  var shown = Array.prototype.filter.call(document.querySelectorAll('#students-table tbody tr'),
                                          function (row) { return row.style.display !== 'none'; }).length;
  report({name: name, high: high, low: low, shown: shown, filter_visible: !filter.classList.contains('hidden')});
})();
"""


def _instrumented(text, script):
    """The page with ``script`` added and allowed by hash in its own policy."""
    text = re.sub(r'(http-equiv="Content-Security-Policy" content="[^"]*?)(script-src [^";]*)?(")',
                  lambda m: (m.group(1) + (m.group(2) + " " if m.group(2) else "; script-src ")
                             + script_hash(script) + m.group(3)).replace(";; ", "; "), text, count=1)
    return text.replace("</body>", f"<script>{script}</script></body>", 1)


# The outer page of a framed measurement: the frame's findings become its title.
FRAME = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>waiting</title>
<style>body {{ margin: 0; }} iframe {{ border: 0; width: {width}px; height: {height}px; display: block; }}</style>
</head><body><iframe src="{src}"></iframe>
<script>window.addEventListener('message', function (event) {{ document.title = event.data; }});</script>
</body></html>
"""


def _framed(copy, width, height, fragment):
    """An outer page beside ``copy`` showing it in a ``width`` x ``height`` frame."""
    outer = os.path.join(os.path.dirname(copy), ".frame-" + os.path.basename(copy))
    with open(outer, "w", encoding="utf-8") as handle:
        handle.write(FRAME.format(width=width, height=height,
                                  src=html.escape(os.path.basename(copy) + fragment, quote=True)))
    return outer


def _run(chromium, path, width, height, fragment, script, *extra):
    """Chromium on an instrumented copy of ``path`` (framed where ``width`` is under
    :data:`MIN_WINDOW`); returns its completed process."""
    with tempfile.TemporaryDirectory(prefix="amp-browser-") as scratch:
        copy = os.path.join(os.path.dirname(path), ".measured-" + os.path.basename(path))
        with open(path, encoding="utf-8") as handle:
            page = _instrumented(handle.read(), script) if script else handle.read()
        with open(copy, "w", encoding="utf-8") as handle:
            handle.write(page)
        outer = _framed(copy, width, height, fragment) if width < MIN_WINDOW else None
        try:
            url = f"file://{outer}" if outer else f"file://{copy}{fragment}"
            return subprocess.run([chromium, *FLAGS, f"--user-data-dir={scratch}",
                                   f"--window-size={max(width, MIN_WINDOW)},{height}", *extra, url],
                                  capture_output=True, text=True, timeout=180)
        finally:
            for made in (copy, outer):
                if made:
                    os.unlink(made)


def measure(chromium, path, width=1280, height=900, fragment="", script=MEASURE):
    """Load ``path`` (a file of ours) in a ``width`` x ``height`` viewport; return what ``script`` found."""
    done = _run(chromium, path, width, height, fragment, script, "--virtual-time-budget=5000", "--dump-dom")
    found = re.search(r"<title>(.*?)</title>", done.stdout, re.DOTALL)
    assert found, f"chromium printed no page: {done.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def screenshot(chromium, path, out, width=1280, height=900, fragment=""):
    """A PNG of ``path`` in a ``width`` x ``height`` viewport (a frame in a 500 px window when narrower)."""
    _run(chromium, path, width, height, fragment, None, "--hide-scrollbars", "--virtual-time-budget=5000",
         f"--screenshot={out}")
