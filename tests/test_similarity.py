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
  hana, ivo, jun  independent correct solutions written on the current template (tests/honest.py)
"""
import html
import json
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import honest  # noqa: E402
from disguise import disguise  # noqa: E402

from autograder.similarity import pairs as similarity  # noqa: E402
from autograder.class_reports import write as class_write  # noqa: E402

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
    grad_scaler, _ = similarity.framework_source()
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
    honest.write_class(root)
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
                   if _pair(row) <= {"alice", "bob", "carol", *honest.fills()}]
    assert independent and all(row["score"] < 0.5 for row in independent)


def test_the_calibration_is_current_and_no_honest_pair_reaches_a_threshold():
    """tools/calibrate_similarity.py, re-run here: the stored figures (quoted in the
    report) are those of the current stubs, and honest pairs stay well below."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "calibrate_similarity.py"), "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    for module, data in similarity.load_calibration().items():
        assert data["solutions"] >= 3 and data["reached"] == 0, module
        assert data["max_score"] <= similarity.POLICIES[module].threshold - 0.2, module


def test_honest_solutions_score_full_marks_on_the_template(tmp_path):
    """The calibration set is correct code: one of them, graded for real."""
    folder = honest.write_class(tmp_path)["ivo"]
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", "--submission", str(folder), "--seed", "5",
                           "--quiet", "--results", str(tmp_path / "r.json")], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["score"] == data["max_score"] == 100, done.stdout[-2000:]


def test_identical_submissions_are_one_group_and_shared_passages_do_not_count():
    variant = (ROOT / "tests" / "variants" / "loss_scaler_tensor.py").read_text(encoding="utf-8")
    stub = (ROOT / "exercises" / "loss_scaler.py").read_text(encoding="utf-8")
    texts = {"a": variant, "b": variant + "\n\n", "c": variant.replace("\n", "\r\n"), "d": stub, "e": stub}
    pairs = similarity.compare_module(texts, stub)
    groups = [pair for pair in pairs if pair.identical]
    assert [pair.members for pair in groups] == [["a", "b", "c"], ["d", "e"]]
    policy = similarity.POLICIES["loss_scaler"]
    assert similarity.flagged(groups[0], policy) and not similarity.flagged(groups[1], policy)  # stubs: nothing
    # Four distinct files sharing one passage: with FEW_MIN = 3 it is common, and ignored.
    shared = "\n".join(f"value_{i} = compute(value_{i - 1}, {i}) * factor + offset" for i in range(1, 12))
    many = {name: f"{shared}\n\ndef own_{name}():\n    return {index}\n" for index, name in enumerate("wxyz")}
    assert all(pair.overlap == 0 for pair in similarity.compare_module(many, ""))
    assert all(pair.overlap > 0 for pair in similarity.compare_module(dict(list(many.items())[:2]), ""))


def test_fingerprints_read_once_equal_copydetects_own():
    """The lexing is cached per text; the fingerprint must be the one copydetect
    builds from the file itself, with or without boilerplate, and compare alike."""
    import io

    import numpy as np
    from copydetect import CodeFingerprint, compare_files

    stub = (ROOT / "exercises" / "loss_scaler.py").read_text(encoding="utf-8")
    texts = [(ROOT / "solutions" / "loss_scaler.py").read_text(encoding="utf-8"),
             (ROOT / "tests" / "variants" / "loss_scaler_tensor.py").read_text(encoding="utf-8"),
             HOSTILE_CODE, ""]
    boilerplates = [None, similarity._boilerplate(stub)]
    for text in texts:
        for boilerplate in boilerplates:
            ours = similarity._fingerprint(text, boilerplate)
            theirs = CodeFingerprint("module.py", similarity.K, 1, boilerplate, True, "python", fp=io.StringIO(text))
            assert ours.raw_code == theirs.raw_code and ours.filtered_code == theirs.filtered_code
            assert np.array_equal(ours.offsets, theirs.offsets)
            assert np.array_equal(np.asarray(ours.hashes), np.asarray(theirs.hashes))
            assert ours.hash_idx == theirs.hash_idx and ours.token_coverage == theirs.token_coverage
    first, second = (similarity._fingerprint(text, boilerplates[1]) for text in texts[:2])
    copied = [CodeFingerprint("module.py", similarity.K, 1, boilerplates[1], True, "python", fp=io.StringIO(text))
              for text in texts[:2]]
    ours, theirs = compare_files(first, second), compare_files(*copied)
    assert ours[0] == theirs[0] and ours[1] == theirs[1]
    assert all(np.array_equal(a, b) for a, b in zip(ours[2], theirs[2]))


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
            target = target.split("#")[0]
            assert target in ("", "index.html") or similarity.PAGE_NAME.fullmatch(target), (page.name, target)


def test_a_hostile_pair_page_is_escaped(tmp_path):
    from autograder.similarity.side_by_side import PageWriter

    text = (ROOT / "exercises" / "amp_update.py").read_text() + HOSTILE_CODE
    start = text.index("SCRIPT")
    pair = similarity.Pair(HOSTILE, "bob", 0.5, 0.4, 120, [[start], [start + 40]], [[0], [10]])
    name = PageWriter(tmp_path, fingerprints=similarity.fingerprint_hashes).pair("amp_update", 1, pair, text, "x = 1\n")
    page = (tmp_path / name).read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert '<mark class="a">SCRIPT = &quot;&lt;/pre&gt;&lt;script&gt;' in page
    assert "\u202e" not in page and "\\u202e" in page  # a bidi override is shown, not obeyed


def test_highlight_escapes_and_marks_only_the_given_regions():
    from autograder.similarity.side_by_side import highlighted

    text = "a = '<b>'\nb = 2\n\u202ec = 3\n"
    html = highlighted(text, [[4], [9]], "a")
    assert html.startswith("a = <mark class=\"a\">&#x27;&lt;b&gt;&#x27;</mark>")
    assert "\\u202ec = 3" in html and "<b>" not in html


def test_given_code_is_cut_out_of_the_matched_regions():
    from autograder.similarity.side_by_side import regions

    text = "import torch\nx = 1\n\ndef f(a):\n    return a * 2\n"
    template = "import torch\n\ndef f(a):\n"
    # one match over everything: only the student's own lines stay highlighted
    assert [text[s:e] for s, e in regions(text, [[0], [len(text)]], template)] == ["x = 1", "return a * 2"]
    # two matches, the second inside a given line: nothing of it is left
    assert [text[s:e] for s, e in regions(text, [[13, 22], [18, 25]], template)] == ["x = 1"]
    assert regions(text, [[0], [len(text)]], text) == []


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
    data["modules"]["amp_update"]["pairs"][0]["members"][0] = HOSTILE + "\n## Injected | heading"
    (out / "similarity" / "similarity.json").write_text(json.dumps(data), encoding="utf-8")
    class_write.write_all(out, manifest)
    report = (out / "report.md").read_text(encoding="utf-8")
    section = report.split("## Similarity", 1)[1].split("\n## ", 1)[0]
    assert "### `amp_update`: 1 flagged pair(s)" in section
    assert "| 1 | \\<img src=x onerror=alert(1)\\>\\\\n## Injected \\| heading / dave |" in section
    assert "[side by side](similarity/amp_update-1.html#m1)" in section and "| 1 | bob / dave |" in section
    assert "all but dictate" in section and "0 of 6 pairs reach it" in section  # threshold explained, calibrated
    assert "| frank |" in section and "**yes**" in section
    assert not re.search(r"(?<!\\)<img", report) and "\n## Injected" not in report


def test_skipped_without_copydetect(tmp_path, monkeypatch):
    monkeypatch.setattr(similarity, "copydetect_version", lambda: None)
    student = tmp_path / "class" / "ann"
    _write(student, "amp_update", "x = 1\n")
    result = similarity.run({"ann": student}, tmp_path / "out")
    assert "copydetect is not installed" in result["skipped"]
    class_write.write_all(tmp_path / "out", {"seed": 1, "students": {"ann": {"status": "ok"}}})
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


def test_a_pair_page_numbers_and_links_its_regions_and_never_marks_given_code(checked):
    page = (checked["out"] / "similarity" / "loss_scaler-1.html").read_text(encoding="utf-8")
    assert 'id="m1"' in page
    ids = set(re.findall(r'id="([ab]\d+)"', page))
    targets = re.findall(r'class="n" id="[ab]\d+(?:-\d+)?" href="#([ab]\d+)"', page)
    assert targets and all(target in ids for target in targets)       # every number has its partner
    assert {t[1:] for t in targets if t[0] == "a"} & {t[1:] for t in targets if t[0] == "b"}
    given = {line.strip() for line in (ROOT / "exercises" / "loss_scaler.py").read_text().split("\n") if line.strip()}
    for marked in re.findall(r'<mark class="[ab]">(.*?)</mark>', page, re.DOTALL):
        for line in html.unescape(marked).split("\n"):
            assert not line.strip() or line.strip() not in given, line


def test_pages_fit_1280_px_in_chromium(checked):
    from browser import find_chromium, measure

    chromium = find_chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium fonts-noto-cjk)")
    for name in ("loss_scaler-1.html", "amp_update-1.html", "loss_scaler-torch-1.html", "index.html"):
        found = measure(chromium, str(checked["out"] / "similarity" / name), fragment="#m1")
        assert found["wide"] == [] and found["scroll_width"] <= found["window"], (name, found)


def test_a_copy_of_the_reference_is_caught_against_the_reference(checked):
    """Student pairs leave the reference answers out; alice, who handed in the reference,
    is found by the comparison with solutions/ instead, and no honest student is."""
    for module in MODULES:
        matches = checked["result"]["solution_reference"][module]["matches"]
        hits = [row["student"] for row in matches if row["flagged"]]
        assert hits == ["alice"], (module, hits)
    for module, data in similarity.load_calibration().items():
        assert data["reference_reached"] == 0 and data["reference_max_score"] <= data["reference_threshold"] - 0.2
