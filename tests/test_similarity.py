"""The similarity check (copydetect) on a class with a disguised copy, independent
solutions, a student who wrote nothing, a renamed copy of torch's GradScaler and a
hostile folder name; its HTML and Markdown; skipped without copydetect.

The class (no grading: the check only reads the modules):
  alice  the reference solutions
  bob    the independent variants of tests/variants/
  carol  another independent amp_update (float64 arithmetic)
  dave   bob's three modules, disguised (names, order, comments, blank lines)
  erin   the template stubs, untouched
  frank  torch/amp/grad_scaler.py renamed into loss_scaler.py
  <img…> a hostile folder name, code that tries to close the <pre> and run a script
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from disguise import disguise  # noqa: E402

from autograder import similarity  # noqa: E402
from autograder.reports import class_report  # noqa: E402

pytest.importorskip("copydetect", reason="copydetect (requirements-dev.txt) runs the similarity check")

MODULES = ("amp_update", "loss_scaler", "amp_training_step")
VARIANTS = {"amp_update": "amp_update_foreach", "loss_scaler": "loss_scaler_tensor",
            "amp_training_step": "amp_training_step_alt"}
HOSTILE = "<img src=x onerror=alert(1)>"
HOSTILE_CODE = ('SCRIPT = "</pre><script>alert(document.cookie)</script>"\n'
                "access = 'user' # \u202e \u2066 admin \u2069 \u2066\n")


def _write(folder, module, text):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text(text, encoding="utf-8")


def build_class(root):
    grad_scaler, _ = similarity.torch_grad_scaler()
    for module in MODULES:
        variant = (ROOT / "tests" / "variants" / f"{VARIANTS[module]}.py").read_text(encoding="utf-8")
        _write(root / "alice" / "exercises", module, (ROOT / "solutions" / f"{module}.py").read_text(encoding="utf-8"))
        _write(root / "bob" / "exercises", module, variant)
        copied = disguise(variant)
        compile(copied, module, "exec")  # still a Python module
        _write(root / "dave" / "exercises", module, copied)
        _write(root / "erin" / "exercises", module, (ROOT / "exercises" / f"{module}.py").read_text(encoding="utf-8"))
    _write(root / "carol", "amp_update", (ROOT / "tests" / "variants" / "amp_update_float64.py").read_text())
    _write(root / "frank" / "exercises", "loss_scaler", disguise(grad_scaler.read_text(encoding="utf-8")))
    _write(root / HOSTILE / "exercises", "amp_update", (ROOT / "exercises" / "amp_update.py").read_text()
           + HOSTILE_CODE)
    return {path.name: path / "exercises" if (path / "exercises").is_dir() else path for path in root.iterdir()}


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    base = tmp_path_factory.mktemp("similarity")
    submissions = build_class(base / "class")
    result = similarity.run(submissions, base / "out")
    return {"root": base / "class", "out": base / "out", "result": result, "submissions": submissions}


def _pair(row):
    return {row["a"], row["b"]}


@pytest.mark.parametrize("module", MODULES)
def test_the_disguised_copy_ranks_first_and_is_flagged(checked, module):
    pairs = checked["result"]["modules"][module]["pairs"]
    assert _pair(pairs[0]) == {"bob", "dave"}, pairs[:3]
    assert pairs[0]["flagged"] is True and pairs[0]["score"] >= similarity.POLICIES[module].threshold


@pytest.mark.parametrize("module", MODULES)
def test_independent_solutions_are_not_flagged(checked, module):
    flagged = [_pair(row) for row in checked["result"]["modules"][module]["pairs"] if row["flagged"]]
    assert flagged == [{"bob", "dave"}]
    independent = [row for row in checked["result"]["modules"][module]["pairs"]
                   if _pair(row) <= {"alice", "bob", "carol"}]
    assert independent and all(row["score"] < 0.5 for row in independent)


def test_the_template_code_is_excluded(checked):
    """erin handed in the stubs: nothing of hers counts, though every student's
    file holds the same given code (without the exclusion they would match)."""
    for module in MODULES:
        assert all("erin" not in _pair(row) for row in checked["result"]["modules"][module]["pairs"])
    texts = {name: similarity.read_module(checked["submissions"][name], "loss_scaler") for name in ("alice", "erin")}
    with_template = similarity.compare_module(texts, "")
    assert with_template[0].overlap > 0
    without = similarity.compare_module(texts, (ROOT / "exercises" / "loss_scaler.py").read_text())
    assert without[0].overlap == 0


def test_a_renamed_copy_of_grad_scaler_is_flagged(checked):
    torch = checked["result"]["torch_reference"]
    assert "skipped" not in torch, torch
    flagged = [row["student"] for row in torch["matches"] if row["flagged"]]
    assert flagged == ["frank"]
    assert torch["matches"][0]["student"] == "frank" and torch["matches"][0]["score"] >= 0.8
    assert "torch/amp/grad_scaler.py (torch " in torch["reference"]


def test_pages_load_nothing_and_link_only_our_pages(checked):
    folder = checked["out"] / "similarity"
    pages = sorted(folder.glob("*.html"))
    assert (folder / "index.html") in pages and (folder / "amp_update-1.html") in pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "Content-Security-Policy" in text and "default-src 'none'" in text
        assert "<script" not in text.lower(), page.name
        for target in re.findall(r"(?:src|href)=\"([^\"]*)\"", text):
            assert target == "index.html" or similarity.PAGE_NAME.fullmatch(target), (page.name, target)


def test_a_hostile_pair_page_is_escaped(tmp_path):
    from autograder.similarity_html import PageWriter

    text = (ROOT / "exercises" / "amp_update.py").read_text() + HOSTILE_CODE
    start = text.index("SCRIPT")
    pair = similarity.Pair(HOSTILE, "bob", 0.5, 0.4, 120, [[start], [start + 40]], [[0], [10]])
    name = PageWriter(tmp_path).pair("amp_update", 1, pair, text, "x = 1\n")
    page = (tmp_path / name).read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert '<mark class="a">SCRIPT = &quot;&lt;/pre&gt;&lt;script&gt;' in page
    assert "\u202e" not in page and "\\u202e" in page  # a bidi override is shown, not obeyed


def test_highlight_escapes_and_marks_only_the_given_regions():
    from autograder.similarity_html import highlighted

    text = "a = '<b>'\nb = 2\n\u202ec = 3\n"
    html = highlighted(text, [[4], [9]], "a")
    assert html.startswith("a = <mark class=\"a\">&#x27;&lt;b&gt;&#x27;</mark>")
    assert "\\u202ec = 3" in html and "<b>" not in html


def test_result_file_and_report_section(checked, tmp_path):
    data = json.loads((checked["out"] / "similarity" / "similarity.json").read_text(encoding="utf-8"))
    assert data["tool"].startswith("copydetect ") and set(data["modules"]) == set(MODULES)
    for module in MODULES:
        assert data["modules"][module]["why"] and data["modules"][module]["threshold"] == \
            similarity.POLICIES[module].threshold
    out = tmp_path / "out"
    shutil.copytree(checked["out"], out)
    manifest = {"seed": 1, "students": {name: {"status": "ok", "reason": "", "seed": 1}
                                        for name in ("bob", "dave", HOSTILE)}}
    data["modules"]["amp_update"]["pairs"][0]["a"] = HOSTILE + "\n## Injected | heading"
    (out / "similarity" / "similarity.json").write_text(json.dumps(data), encoding="utf-8")
    class_report.write_all(out, manifest)
    report = (out / "report.md").read_text(encoding="utf-8")
    section = report.split("## Similarity", 1)[1].split("\n## ", 1)[0]
    assert "### `amp_update`: 1 flagged pair(s)" in section
    assert "| 1 | \\<img src=x onerror=alert(1)\\>\\\\n## Injected \\| heading / dave |" in section
    assert "[side by side](similarity/amp_update-1.html)" in section and "| 1 | bob / dave |" in section
    assert "independent correct solutions look alike" in section  # amp_update's threshold explained
    assert "| frank |" in section and "**yes**" in section
    assert not re.search(r"(?<!\\)<img", report) and "\n## Injected" not in report


def test_skipped_without_copydetect(tmp_path, monkeypatch):
    monkeypatch.setattr(similarity, "copydetect_version", lambda: None)
    student = tmp_path / "class" / "ann"
    _write(student, "amp_update", "x = 1\n")
    result = similarity.run({"ann": student}, tmp_path / "out")
    assert "copydetect is not installed" in result["skipped"]
    class_report.write_all(tmp_path / "out", {"seed": 1, "students": {"ann": {"status": "ok"}}})
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "_Skipped: copydetect is not installed" in report


def test_similarity_command(checked, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"version": 1, "seed": 3, "students": {
        "bob": {"status": "ok", "reason": "", "seed": 3}}}))
    done = subprocess.run([sys.executable, "-m", "autograder", "similarity", str(checked["root"]), "--output-dir",
                           str(out), "--top", "3"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "bob / dave  FLAGGED" in done.stdout and "<img" not in done.stdout
    data = json.loads((out / "similarity" / "similarity.json").read_text(encoding="utf-8"))
    assert _pair(data["modules"]["loss_scaler"]["pairs"][0]) == {"bob", "dave"}
    assert "## Similarity" in (out / "report.md").read_text(encoding="utf-8")
    bad = subprocess.run([sys.executable, "-m", "autograder", "similarity", str(tmp_path / "missing"), "-o",
                          str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2
