"""Open one of our HTML pages in headless Chromium and measure it as a TA's
browser shows it: does anything overflow the window, how wide is CJK text.

The page keeps its own Content-Security-Policy; the measuring script is added
with its hash in that policy (never 'unsafe-inline'), runs after the page's
own script and writes its findings into the title, which ``--dump-dom`` prints.
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

MEASURE = """
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
  document.title = JSON.stringify({window: width, scroll_width: document.documentElement.scrollWidth,
                                   wide: wide.slice(0, 20), cjk_width: cjk, views: views,
                                   target_top: target ? Math.round(target.getBoundingClientRect().top) : null,
                                   scroll_y: Math.round(window.scrollY)});
})();
"""


def find_chromium():
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


# Sorts the students table by name, then by total (twice), filters it: what a TA's clicks do.
CLICKS = """
(function () {
  var head = document.querySelectorAll('#students-table th'), filter = document.getElementById('filter');
  function first(column) { return document.querySelector('#students-table tbody tr').cells[column].textContent; }
  head[0].click(); var name = first(0);
  head[2].click(); var high = first(2);
  head[2].click(); var low = first(2);
  filter.value = 'idle'; filter.dispatchEvent(new Event('input'));
  var shown = Array.prototype.filter.call(document.querySelectorAll('#students-table tbody tr'),
                                          function (row) { return row.style.display !== 'none'; }).length;
  document.title = JSON.stringify({name: name, high: high, low: low, shown: shown,
                                   filter_visible: !filter.classList.contains('hidden')});
})();
"""


def _instrumented(text, script):
    """The page with ``script`` added and allowed by hash in its own policy."""
    text = re.sub(r'(http-equiv="Content-Security-Policy" content="[^"]*?)(script-src [^";]*)?(")',
                  lambda m: (m.group(1) + (m.group(2) + " " if m.group(2) else "; script-src ")
                             + script_hash(script) + m.group(3)).replace(";; ", "; "), text, count=1)
    return text.replace("</body>", f"<script>{script}</script></body>", 1)


def measure(chromium, path, width=1280, height=900, fragment="", script=MEASURE):
    """Load ``path`` (a file of ours) at ``width`` x ``height``; return what ``script`` found."""
    with tempfile.TemporaryDirectory(prefix="amp-browser-") as scratch:
        copy = os.path.join(os.path.dirname(path), ".measured-" + os.path.basename(path))
        with open(path, encoding="utf-8") as handle:
            page = _instrumented(handle.read(), script)
        with open(copy, "w", encoding="utf-8") as handle:
            handle.write(page)
        try:
            done = subprocess.run([chromium, *FLAGS, f"--user-data-dir={scratch}", f"--window-size={width},{height}",
                                   "--virtual-time-budget=5000", "--dump-dom", f"file://{copy}{fragment}"],
                                  capture_output=True, text=True, timeout=120)
        finally:
            os.unlink(copy)
    found = re.search(r"<title>(.*?)</title>", done.stdout, re.DOTALL)
    assert found, f"chromium printed no page: {done.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def screenshot(chromium, path, out, width=1280, height=900):
    with tempfile.TemporaryDirectory(prefix="amp-browser-") as scratch:
        subprocess.run([chromium, *FLAGS, f"--user-data-dir={scratch}", f"--window-size={width},{height}",
                        f"--screenshot={out}", f"file://{path}"], capture_output=True, timeout=120)
