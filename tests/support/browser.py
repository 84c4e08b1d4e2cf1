"""Open one of our HTML pages in headless Chromium and measure it as a TA's
browser shows it: does anything overflow the window, how wide is CJK text, do
the bars keep a width.

The page keeps its own Content-Security-Policy; the measuring script is added
with its hash in that policy (never 'unsafe-inline'), runs after the page's
own script and writes its findings into the title, which ``--dump-dom`` prints.
Chromium's window is never narrower than 500 px: a phone's width (390 px) is
measured in an emulated phone viewport instead (:func:`on_phone`, over the
DevTools protocol), where the page's media queries and viewport meta apply as
on a phone.
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

# Where a script's findings go: the page's title, which the caller reads back.
REPORT = """
function report(found) { document.title = JSON.stringify(found); }
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
  // Table cells whose text wraps into lines of one or two characters ("并/排/对/照"): a column too narrow to read.
  var cells = document.body.querySelectorAll('td, th'), cramped = [];
  var ruler = document.createElement('span');
  ruler.style.whiteSpace = 'nowrap';
  ruler.style.position = 'absolute';
  document.body.appendChild(ruler);
  for (var c = 0; c < cells.length; c++) {
    var text = cells[c].textContent.replace(/\\s+/g, ' ').trim(), range = document.createRange();
    range.selectNodeContents(cells[c]);
    var shown = range.getBoundingClientRect().width;
    if (text.length < 2 || shown === 0) { continue; }
    ruler.style.font = window.getComputedStyle(cells[c]).font;
    ruler.textContent = text;
    var perCharacter = ruler.getBoundingClientRect().width / text.length;
    if (shown / perCharacter < Math.min(text.length, 3) - 0.5) { cramped.push(text.slice(0, 24) + ' ' + Math.round(shown)); }
  }
  document.body.removeChild(ruler);
  var table = document.getElementById('students-table');
  // The height of the students table's rows, lowest and highest: one line a student, or not.
  var heights = table ? Array.prototype.map.call(table.tBodies[0].rows, function (row) {
    return Math.round(row.getBoundingClientRect().height); }) : [];
  report({window: width, scroll_width: document.documentElement.scrollWidth,
          wide: wide.slice(0, 20), cjk_width: cjk, views: views,
          target_top: target ? Math.round(target.getBoundingClientRect().top) : null,
          scroll_y: Math.round(window.scrollY), tracks: tracks.length,
          narrowest_track: bars.length ? Math.min.apply(null, bars) : null, flat_bars: flat, cut_values: cut,
          cramped: cramped.slice(0, 20),
          students_table: table ? [table.scrollWidth, table.parentNode.clientWidth] : null,
          student_rows: heights.length ? [Math.min.apply(null, heights), Math.max.apply(null, heights)] : null});
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


def _run(chromium, path, width, height, fragment, script, *extra):
    """Chromium in a ``width`` x ``height`` window on an instrumented copy of ``path``;
    returns its completed process."""
    with tempfile.TemporaryDirectory(prefix="autograder-browser-") as scratch:
        copy = os.path.join(os.path.dirname(path), ".measured-" + os.path.basename(path))
        with open(path, encoding="utf-8") as handle:
            page = _instrumented(handle.read(), script) if script else handle.read()
        with open(copy, "w", encoding="utf-8") as handle:
            handle.write(page)
        try:
            return subprocess.run([chromium, *FLAGS, f"--user-data-dir={scratch}",
                                   f"--window-size={width},{height}", *extra, f"file://{copy}{fragment}"],
                                  capture_output=True, text=True, timeout=180)
        finally:
            os.unlink(copy)


def measure(chromium, path, width=1280, height=900, fragment="", script=MEASURE):
    """Load ``path`` (a file of ours) in a ``width`` x ``height`` viewport; return what ``script`` found."""
    if width < MIN_WINDOW:
        return on_phone(chromium, path, width, height, fragment, script)
    done = _run(chromium, path, width, height, fragment, script, "--virtual-time-budget=5000", "--dump-dom")
    found = re.search(r"<title>(.*?)</title>", done.stdout, re.DOTALL)
    assert found, f"chromium printed no page: {done.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def screenshot(chromium, path, out, width=1280, height=900, fragment=""):
    """A PNG of ``path`` in a ``width`` x ``height`` viewport (an emulated phone's when narrower
    than a window can be: the whole page then)."""
    if width < MIN_WINDOW:
        on_phone(chromium, path, width, height, fragment, script=REPORT + "report({});", screenshot_to=out)
        return
    _run(chromium, path, width, height, fragment, None, "--hide-scrollbars", "--virtual-time-budget=5000",
         f"--screenshot={out}")


class _DevTools:
    """Chromium driven over --remote-debugging-pipe (the DevTools protocol: JSON messages
    ended by NUL on fds 3 and 4), for what a window cannot do: headless windows are at
    least 500 px wide, a phone's viewport is emulated instead."""

    def __init__(self, chromium, scratch, timeout=60):
        to_child, self._send = os.pipe()
        self._receive, from_child = os.pipe()

        def pipes():  # the protocol's fixed descriptors in the child, kept across exec
            first, second = os.dup(to_child), os.dup(from_child)
            os.dup2(first, 3)
            os.dup2(second, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.process = subprocess.Popen([chromium, *FLAGS, f"--user-data-dir={scratch}", "--remote-debugging-pipe",
                                         "about:blank"], preexec_fn=pipes, close_fds=False,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self.timeout, self.buffer, self.events, self.next_id, self.session = timeout, b"", [], 0, None

    def _read(self):
        import select
        import time

        deadline = time.monotonic() + self.timeout
        while b"\0" not in self.buffer:
            ready, _, _ = select.select([self._receive], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(self._receive, 1 << 20) if ready else b""
            assert chunk, "chromium did not answer over the DevTools pipe"
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self._send, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self.next_id:
                assert "error" not in answer, (method, answer["error"])
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, method):
        while True:
            for index, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(index)
            self.events.append(self._read())

    def close(self):
        try:
            self.call("Browser.close")
        except (AssertionError, OSError):
            pass
        finally:
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
            os.close(self._send)
            os.close(self._receive)


class Browser:
    """One Chromium for many loads (``with Browser(chromium) as browser: browser.load(...)``):
    each Chromium started costs a second or more, a load in a running one a fraction of that."""

    def __init__(self, chromium):
        self.chromium = chromium

    def __enter__(self):
        self._scratch = tempfile.TemporaryDirectory(prefix="autograder-browser-")
        self.tools = _DevTools(self.chromium, self._scratch.name)
        try:
            target = next(item["targetId"] for item in self.tools.call("Target.getTargets")["targetInfos"]
                          if item["type"] == "page")
            self.tools.session = self.tools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            self.tools.call("Page.enable")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        try:
            self.tools.close()
        finally:
            self._scratch.cleanup()

    def load(self, path, width=390, height=844, fragment="", script=MEASURE, screenshot_to=None, mobile=True):
        """What ``script`` found on ``path`` in a viewport of ``width`` x ``height`` CSS px (see on_phone)."""
        import base64

        tools = self.tools
        tools.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                   mobile=mobile)
        tools.call("Page.navigate", url=f"file://{os.path.abspath(path)}{fragment}")
        tools.wait_for("Page.loadEventFired")
        found = tools.call("Runtime.evaluate", expression=script + ";document.title", returnByValue=True)
        if screenshot_to:
            size = tools.call("Page.getLayoutMetrics")["cssContentSize"]
            shot = tools.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                              clip={"x": 0, "y": 0, "width": width, "height": min(size["height"], 12000),
                                    "scale": 1})
            with open(screenshot_to, "wb") as handle:
                handle.write(base64.b64decode(shot["data"]))
        return json.loads(found["result"]["value"])


def on_phone(chromium, path, width=390, height=844, fragment="", script=MEASURE, screenshot_to=None, mobile=True):
    """Load ``path`` (a file of ours) in a viewport of ``width`` x ``height`` CSS px (a phone's
    by default: mobile emulation, the page's viewport meta applies); return what ``script``
    found and save a screenshot of the whole page to ``screenshot_to`` when given."""
    with Browser(chromium) as browser:
        return browser.load(path, width, height, fragment, script, screenshot_to, mobile)
