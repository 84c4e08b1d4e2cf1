"""The similarity check (copydetect on canonical forms, what honest solutions write alike
left out): who it flags, who it never flags, groups of any size, the calibration, the
report.md section and the command. The pages: tests/engine/similarity/test_similarity_pages.py.

The class (no grading: the check only reads the modules):
  alice  the reference solutions, verbatim
  rita   the reference solutions, disguised (names, order, docstrings, comments, layout)
  bob    the independent variants of tests/variants/ (not in the honest set)
  carol  another independent amp_update (float64 arithmetic)
  dave   bob's three modules, disguised
  erin   the template stubs, untouched
  frank  torch/amp/grad_scaler.py renamed into loss_scaler.py
  <img…> a hostile folder name, code that tries to close the <pre> and run a script
  and five authors of the honest set (tests/support/honest.py)
"""
import json
import sys

import pytest
from support.helpers import ROOT

from support import honest  # noqa: E402
from support.cli import autograder_command, main_in_process  # noqa: E402
from support.disguise import disguise  # noqa: E402
from support.similarity_class import HOSTILE, HOSTILE_CODE, MODULES, read_file, variant, write_module  # noqa: E402

from autograder.similarity import fingerprints, groups, pairs as similarity  # noqa: E402
from autograder.class_reports import flags as class_flags, write as class_write  # noqa: E402
from autograder.class_reports.html_student import partners_of  # noqa: E402

pytest.importorskip("copydetect", reason="copydetect (requirements-dev.txt) runs the similarity check")

COMPARED = ("loss_scaler", "amp_training_step")    # amp_update's reference is public
HONEST = ("hana", "lena", "olga", "sven", "zane")


def build_class(root):
    grad_scaler, _ = similarity.framework_source()
    for module in MODULES:
        write_module(root / "alice" / "exercises", module, read_file("solutions", f"{module}.py"))
        write_module(root / "rita" / "exercises", module, disguise(read_file("solutions", f"{module}.py")))
        write_module(root / "bob" / "exercises", module, variant(module))
        copied = disguise(variant(module))
        compile(copied, module, "exec")  # still a Python module
        write_module(root / "dave" / "exercises", module, copied)
        write_module(root / "erin" / "exercises", module, read_file("exercises", f"{module}.py"))
    write_module(root / "carol", "amp_update", read_file("tests", "variants", "amp_update_float64.py"))
    write_module(root / "frank" / "exercises", "loss_scaler", disguise(grad_scaler.read_text(encoding="utf-8")))
    write_module(root / HOSTILE / "exercises", "amp_update", read_file("exercises", "amp_update.py") + HOSTILE_CODE)
    honest.write_class(root, HONEST)
    return {path.name: path / "exercises" if (path / "exercises").is_dir() else path for path in root.iterdir()}


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    base = tmp_path_factory.mktemp("similarity")
    submissions = build_class(base / "class")
    result = similarity.run(submissions, base / "out")
    return {"root": base / "class", "out": base / "out", "result": result, "submissions": submissions}


def flagged_groups(result, module):
    return [row["members"] for row in result["modules"][module]["pairs"] if row["flagged"]]


@pytest.mark.parametrize("module", MODULES)
def test_the_disguised_copy_of_a_classmate_is_a_high_group(checked, module):
    rows = checked["result"]["modules"][module]["pairs"]
    copy = next(row for row in rows if set(row["members"]) == {"bob", "dave"})
    assert copy["flagged"] is True and copy["severity"] == "high" and copy["score"] >= 0.9, copy
    assert rows.index(copy) == 0 or rows[0]["score"] >= copy["score"]


@pytest.mark.parametrize("module", MODULES)
def test_no_honest_student_is_flagged(checked, module):
    """Only copies are flagged: bob/dave everywhere, and alice/rita (both the reference)
    where the reference is not public."""
    expected = [["bob", "dave"]] + ([["alice", "rita"]] if module in COMPARED else [])
    assert sorted(flagged_groups(checked["result"], module)) == sorted(expected)
    for data in (checked["result"]["solution_reference"][module], checked["result"]["torch_reference"]):
        hits = {member for row in data.get("matches", []) if row["flagged"] for member in row["members"]}
        assert not hits & {"bob", "carol", "erin", *HONEST}, hits


@pytest.mark.parametrize("module", COMPARED)
def test_a_copy_of_the_reference_disguised_or_not_is_caught_and_ranks_high(checked, module):
    matches = checked["result"]["solution_reference"][module]["matches"]
    hits = [row for row in matches if row["flagged"]]
    assert [row["members"] for row in hits] == [["alice", "rita"]], matches[:4]   # the same code: one row
    assert hits[0]["severity"] == "high" and hits[0]["score"] >= 0.9


def test_a_public_reference_is_said_to_be_public_and_never_flagged(checked):
    """The chapter prints amp_update's reference: a student who copied it from there
    (alice, rita) is not flagged, against the reference or as a pair."""
    entry = checked["result"]["solution_reference"]["amp_update"]
    assert entry["matches"] == [] and "chapter prints" in entry["public"]
    assert all("alice" not in group and "rita" not in group
               for group in flagged_groups(checked["result"], "amp_update"))


def test_a_renamed_copy_of_grad_scaler_is_flagged(checked):
    torch = checked["result"]["torch_reference"]
    assert "skipped" not in torch, torch
    assert [row["student"] for row in torch["matches"] if row["flagged"]] == ["frank"]
    assert torch["matches"][0]["score"] >= 0.9 and "torch/amp/grad_scaler.py (torch " in torch["reference"]


def test_the_template_code_is_never_evidence(checked):
    """erin handed in the stubs: nothing of hers counts, though every student's file holds
    the same given code (without leaving it out they would all match)."""
    for module in MODULES:
        assert all("erin" not in row["members"] for row in checked["result"]["modules"][module]["pairs"])
    texts = {name: similarity.read_module(checked["submissions"][name], "loss_scaler") for name in ("alice", "erin")}
    policy = similarity.policies()["loss_scaler"][0]
    found, _, _ = similarity.compare_module(texts, [], policy)
    assert [group.members for group in found] == [["alice", "erin"]]
    stub = read_file("exercises", "loss_scaler.py")
    found, pairs, _ = similarity.compare_module(texts, similarity.module_boilerplate("loss_scaler", stub, "", {}),
                                                policy)
    assert found == [] and pairs == []


@pytest.mark.slow
@pytest.mark.parametrize("copies", [3, 6, 10, 25])
def test_a_solution_passed_round_is_one_group_however_many_copied(tmp_path, copies):
    """n copies of one solution beside nine honest students: renamed and reordered, re-commented,
    or re-commented with a line of code of their own (so that they are distinct submissions,
    linked by their pairs). One flagged group per module with exactly the copies in it,
    whatever n (MOSS's rule of ignoring what many students share hid them from six copies on)."""
    honest.write_class(tmp_path, sorted(honest.authors())[:9])
    for index in range(copies):
        for module in MODULES:
            text = variant(module)
            if index % 3 == 0:
                text = disguise(text)
            else:
                text = text.replace("\n\n\n", f"\n\n# copy {index}, my own work\n\n")
            if index % 3 == 2:
                text += f"\nCHECKED_BY = 'student {index}'\nATTEMPTS = {index} * 2 + 1\n"
            write_module(tmp_path / f"copy{index:02d}", module, text)
    submissions = {path.name: path for path in tmp_path.iterdir()}
    result = similarity.run(submissions, tmp_path / "out")
    for module in MODULES:
        groups_found = flagged_groups(result, module)
        assert groups_found == [[f"copy{index:02d}" for index in range(copies)]], (module, groups_found)
    index_page = (tmp_path / "out" / "similarity" / "index.html").read_text(encoding="utf-8")
    assert f"{copies} students: copy00, copy01" in index_page


def test_what_many_students_share_still_counts():
    """Four distinct files sharing a long passage are linked: the class's own frequency
    is not what makes code common (the calibration's honest set is)."""
    shared = "\n".join(f"value_{i} = compute(value_{i - 1}, {i}) * factor + offset" for i in range(1, 12))
    texts = {name: f"{shared}\n\ndef own_{name}():\n    return {index}\n" for index, name in enumerate("wxyz")}
    found, _, submissions = similarity.compare_module(texts, [], similarity.Policy(0.5, 100, ""))
    assert len(submissions) == 4 and [group.members for group in found] == [["w", "x", "y", "z"]]


def test_identical_code_is_one_submission_and_stubs_are_no_group():
    stub = read_file("exercises", "loss_scaler.py")
    code = variant("loss_scaler")
    texts = {"a": code, "b": code.replace("\n", "\r\n"), "c": disguise(code), "d": stub, "e": stub}
    submissions = groups.distinct(texts)
    assert submissions == {"a": ["a", "b", "c"], "d": ["d", "e"]}
    boilerplate = similarity.module_boilerplate("loss_scaler", stub, "", similarity.load_calibration())
    found, _, _ = similarity.compare_module(texts, boilerplate, similarity.policies()["loss_scaler"][0])
    assert [(group.members, group.identical) for group in found] == [(["a", "b", "c"], True)]


def test_the_canonical_form_sets_aside_what_a_disguise_changes():
    code = variant("amp_training_step")
    assert fingerprints.same_code_key(disguise(code)) == fingerprints.same_code_key(code)
    assert fingerprints.kgrams(disguise(code)) == fingerprints.kgrams(code)
    broken = "def f(:\n    return 1\n"
    assert fingerprints.canonical(broken) == broken          # not Python: fingerprinted as it is
    deep = "x = " + "(" * 2000 + "1" + ")" * 2000 + "\n"
    assert fingerprints.canonical(deep) == deep              # too deep to rewrite: as it is
    readable = fingerprints.readable(code)
    assert "pass\npass" not in readable and "\n\n" in readable


def test_fingerprints_are_copydetects_own_of_the_canonical_form():
    """The lexing is cached per text; a fingerprint must be the one copydetect builds from
    the canonical text, with or without boilerplate, and compare alike."""
    import io

    import numpy as np
    from copydetect import CodeFingerprint, compare_files

    stub = read_file("exercises", "loss_scaler.py")
    texts = [read_file("solutions", "loss_scaler.py"), variant("loss_scaler"), HOSTILE_CODE, ""]
    boilerplates = [None, similarity.module_boilerplate("loss_scaler", stub, "", similarity.load_calibration())]
    for text in texts:
        for boilerplate in boilerplates:
            ours = fingerprints.fingerprint(text, boilerplate)
            theirs = CodeFingerprint("module.py", fingerprints.K, 1, boilerplate, True, "python",
                                     fp=io.StringIO(fingerprints.canonical(text)))
            assert ours.filtered_code == theirs.filtered_code and np.array_equal(ours.offsets, theirs.offsets)
            assert np.array_equal(np.asarray(ours.hashes), np.asarray(theirs.hashes))
            assert ours.hash_idx == theirs.hash_idx and ours.token_coverage == theirs.token_coverage
    first, second = (fingerprints.fingerprint(text, boilerplates[1]) for text in texts[:2])
    copied = [CodeFingerprint("module.py", fingerprints.K, 1, boilerplates[1], True, "python",
                              fp=io.StringIO(fingerprints.canonical(text))) for text in texts[:2]]
    ours, theirs = compare_files(first, second), compare_files(*copied)
    assert ours[0] == theirs[0] and ours[1] == theirs[1]


@pytest.mark.slow
def test_the_calibration_is_current_and_holds_on_held_out_authors(capsys):
    """tools/calibrate_similarity.py --check, re-run here (its main, in this process: copydetect
    is imported already): the stored figures and passages are those of the current stubs and
    honest set; at least a dozen authors; no honest pair, nor any honest author against the
    reference, reaches a threshold, held-out authors included."""
    saved = list(sys.path)  # the tool puts the root and tests/ first on the path when imported
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import calibrate_similarity
    finally:
        sys.path[:] = saved
    assert calibrate_similarity.main(["--check"]) == 0, capsys.readouterr().out
    calibration = similarity.load_calibration()
    assert set(calibration) == set(MODULES)
    for module, data in calibration.items():
        assert data["authors"] >= 12 and len(data["held_out_authors"]) >= 4, module
        assert data["reached"] == 0 and data["held_out_reached"] == 0, module
        assert data["held_out_max_score"] < data["threshold"] and data["max_score"] < data["threshold"], module
        assert data["passages"], module
        if module in COMPARED:
            assert data["reference_reached"] == 0 and data["reference_held_out_reached"] == 0, module
            assert data["reference_held_out_max_score"] < data["reference_threshold"], module
    assert calibration["amp_update"]["reference"] == "public"


def test_the_thresholds_are_the_calibrations():
    calibration = similarity.load_calibration()
    for module, (pairs, reference) in similarity.policies().items():
        assert pairs.threshold == calibration[module]["threshold"]
        assert (reference is None) == (module == "amp_update")
        if reference:
            assert reference.threshold == calibration[module]["reference_threshold"]
    assert similarity.policies({})["loss_scaler"][0].threshold == similarity.DEFAULT_THRESHOLD


def test_honest_students_the_calibration_never_saw_are_not_flagged(tmp_path):
    """A class of new honest students (tests/data/honest_held_out: never read by the
    calibration; dov writes much as the reference does), the independent variants and
    three authors of the set: nothing flagged, against each other or the reference."""
    honest.write_class(tmp_path, folder=honest.HELD_OUT_DIR)
    honest.write_class(tmp_path, ("hana", "olga", "ravi"))
    for module in MODULES:
        write_module(tmp_path / "bob", module, variant(module))
    result = similarity.run({path.name: path for path in tmp_path.iterdir()}, tmp_path / "out")
    for module in MODULES:
        assert flagged_groups(result, module) == [], module
        assert not [row for row in result["solution_reference"][module]["matches"] if row["flagged"]], module
    assert not [row for row in result["torch_reference"]["matches"] if row["flagged"]]


@pytest.mark.slow
def test_the_honest_set_scores_full_marks_at_two_seeds(tmp_path):
    """Every author of the calibration set, and of the held-out one, is correct code, graded for real."""
    folders = honest.write_class(tmp_path / "class")
    folders.update(honest.write_class(tmp_path / "class", folder=honest.HELD_OUT_DIR))
    for seed in (3, 8):  # graded in this process (torch imported once); the command line is tested below
        out = tmp_path / f"out{seed}"
        assert main_in_process("grade-many", tmp_path / "class", "-o", out, "--seed", seed, "--jobs", "2",
                               "--no-similarity", "--no-progress") == 0
        for author in folders:
            data = json.loads((out / author / "results.json").read_text(encoding="utf-8"))
            assert data["score"] == data["max_score"] == 100, (seed, author, data["score"])


def test_scores_are_never_rounded_onto_a_threshold():
    assert similarity.shown_score(0.8967) == "0.89" and similarity.shown_score(0.9) == "0.90"
    assert similarity.shown_score(0.29) == "0.29" and similarity.shown_score(1.0) == "1.00"
    assert similarity.shown_score(None) == "?" and similarity.shown_score(float("nan")) == "?"
    policy = similarity.Policy(0.9, 100, "")
    assert not similarity.flagged(0.8967, 500, policy) and similarity.flagged(0.9, 500, policy)
    assert not similarity.flagged(0.95, 99, policy)


def test_severity_is_one_rule_for_classmates_and_references(checked):
    """A reference match never outranks a classmate pair unless its score says more."""
    policy = similarity.Policy(0.6, 100, "")
    assert similarity.severity(0.79, policy) == "medium" and similarity.severity(0.8, policy) == "high"
    partners = partners_of(checked["result"])
    kinds = {(partner["other"].startswith("solutions/"), partner["severity"]) for partner in partners["rita"]}
    assert kinds == {(False, "high"), (True, "high")}
    row = type("Row", (), {"flags": [], "isolation": {}, "no_work": False, "commit": {}, "lab": {}})()
    weak_reference = {"module": "m", "other": "solutions/m.py", "score": 0.7, "severity": "medium"}
    strong_pair = {"module": "m", "other": "bob", "score": 0.99, "severity": "high"}
    found = class_flags.row_flags(row, [weak_reference, strong_pair])
    assert [flag.severity for flag in found] == ["high", "medium"]
    assert "bob" in class_flags.detail_text(found[0], "en")


def test_result_file_and_report_section(checked, tmp_path):
    import re
    import shutil

    data = json.loads((checked["out"] / "similarity" / "similarity.json").read_text(encoding="utf-8"))
    assert data["tool"].startswith("copydetect ") and set(data["modules"]) == set(MODULES)
    for module in MODULES:
        assert data["modules"][module]["why"]
        assert data["modules"][module]["threshold"] == similarity.policies()[module][0].threshold
        assert "passages" not in data["modules"][module]["calibration"]
    out = tmp_path / "out"
    shutil.copytree(checked["out"], out)
    manifest = {"seed": 1, "students": {name: {"status": "ok", "reason": "", "seed": 1}
                                        for name in ("bob", "dave", HOSTILE)}}
    row = data["modules"]["amp_update"]["pairs"][0]
    row["a"] = row["members"][0] = HOSTILE + "\n## Injected | heading"
    (out / "similarity" / "similarity.json").write_text(json.dumps(data), encoding="utf-8")
    class_write.write_all(out, manifest)
    report = (out / "report.md").read_text(encoding="utf-8")
    section = report.split("## Similarity", 1)[1].split("\n## ", 1)[0]
    assert "### `amp_update`: 1 flagged group(s) among" in section
    assert "| 1 | 2 students: \\<img src=x onerror=alert(1)\\>\\\\n## Injected \\| heading, dave |" in section
    assert "[side by side](similarity/amp_update-1.html#m1)" in section and "**yes (high)**" in section
    assert "all but dictate" in section and "held out of the calibration: highest" in section
    assert "`amp_update`: not compared (The chapter prints" in section
    # two students with one file matching the reference: one group, both named
    assert re.search(r"`loss_scaler` \(threshold 0\.\d\d\): \*\*2 students: alice, rita\*\* 1\.00 \(high\)", section)
    assert "| frank |" in section
    assert not re.search(r"(?<!\\)<img", report) and "\n## Injected" not in report


def test_skipped_without_copydetect(tmp_path, monkeypatch):
    monkeypatch.setattr(similarity, "copydetect_version", lambda: None)
    student = tmp_path / "class" / "ann"
    write_module(student, "amp_update", "x = 1\n")
    result = similarity.run({"ann": student}, tmp_path / "out")
    assert "copydetect is not installed" in result["skipped"]
    class_write.write_all(tmp_path / "out", {"seed": 1, "students": {"ann": {"status": "ok"}}})
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "_Skipped: copydetect is not installed" in report


@pytest.mark.slow
def test_similarity_command(checked, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"version": 1, "seed": 3, "report_lang": "zh", "students": {
        "bob": {"status": "ok", "reason": "", "seed": 3}}}))
    done = autograder_command("similarity", checked["root"], "--output-dir", out, "--top", "3", timeout=300)
    assert done.returncode == 0, done.stderr
    assert "bob / dave  FLAGGED (high)" in done.stdout and "<img" not in done.stdout
    assert "amp_update against the reference: not compared (the reference is public)" in done.stdout
    data = json.loads((out / "similarity" / "similarity.json").read_text(encoding="utf-8"))
    assert data["lang"] == "zh"      # what run.json recorded for the class page
    assert "## 相似度" in (out / "report.md").read_text(encoding="utf-8")   # the class page's language
    bad = autograder_command("similarity", tmp_path / "missing", "-o", out, timeout=120)
    assert bad.returncode == 2
