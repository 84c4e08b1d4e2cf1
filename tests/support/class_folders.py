"""A graded class written as grade-many leaves it (results files and run.json, no
grading), with a folder of every kind a TA's ROOT holds: students with work of
their own (right, wrong in the same way, wrong elsewhere), one who never
started, one whose grading crashed, a plain folder graded without a deadline
check, a notes folder and a repository without commits. Student names are
Chinese (so a Chinese page's English words are ours, not theirs).

With ``similarity=True`` the similarity check runs on code written for them (beside
``out``): 李华 and 张三 hand in disguised copies of 王小明's honest solution (one group
of three), 赵六 a disguised copy of the reference, 纯文件夹 an honest solution of
another author."""
import re

from autograder.batch import plan
from autograder.batch.jobs import add_extra_data, zero_report
from autograder.class_reports import write as class_write
from autograder.judging import results
from autograder.reports.gradescope import write_results

DEADLINE = "2026-12-15T23:59:00+08:00"
NORM_FEEDBACK = "先从 TODO 2 入手：范数实际 12，期望 13；12 是仅 [12] 的范数。"
GROWTH_FEEDBACK = "先从 TODO 4 入手：update_scale 返回 (4.0, 2)，期望 (8.0, 0)。"
# The counted students' totals: the mean is 85 over them (70.8 with the one who never started).
COUNTED = {"王小明": 100, "李华": 75, "张三": 75, "赵六": 75, "纯文件夹": 100}
LEFT_OUT = {"空白": "no work since the template", "孙七": "crashed", "notes": "no submission",
            "empty-repo": "no commit before deadline"}
FOLDERS_ONLY = ("empty-repo", "notes")
NOTES_REASON = ("no submission found: notes/ has no exercises/ folder and none of amp_update.py, loss_scaler.py, "
                "amp_training_step.py")
TIMEOUT_REASON = "grading did not finish within 900 s and was stopped"
PROBLEM = "Landlock unavailable on this kernel"   # the sandbox's own words, shown as they are
# A confined run's record, in the sandbox's own words (the reports translate the uid, quote the rest).
CONFINED = {"confined": True, "problems": [], "fs": "Landlock ABI 7: file system, TCP bind/connect",
            "network": "none (empty network namespace)", "uid": "uid 1934567890 of its own"}


def _test(module, ident, title, passed, output="通过。", visibility="visible"):
    return results.TestResult(name=f"{module}: {title}", module=module, max_score=25.0, score=25.0 if passed else 0.0,
                              passed=passed, output=output, visibility=visibility, test_id=f"test_{ident}")


def tests(norm=True, unscale=True, growth=True, backoff=True, output="通过。"):
    return [_test("amp_update", "norm", "全局范数是 13", norm, output if not norm else "通过。"),
            _test("amp_update", "unscale", "反缩放不修改输入", unscale, output if not unscale else "通过。", "hidden"),
            _test("loss_scaler", "growth", "间隔 2 后增长", growth, output if not growth else "通过。"),
            _test("loss_scaler", "backoff", "溢出时回退", backoff, output if not backoff else "通过。", "hidden")]


def _commit(sha):
    return {"deadline": DEADLINE, "source": "committed", "sha": sha * 20, "committed_at": "2026-12-14T20:00:00+08:00",
            "later_commits": 0}


def write_student(out, student, tests, diagnosis=None, flags=(), commit=None, isolation=None):
    report = results.GradeReport(tests=tests, seed=5, submission="x", flags=list(flags), lang="zh",
                                 isolation=isolation or CONFINED, diagnosis=diagnosis or {})
    path = out / student / "results.json"
    write_results(report, path)
    if commit:
        add_extra_data(path, {"submission_commit": commit})


OWN_HELPER = '''

def summarise(values, limit):
    """张三自己写的。"""
    kept = [value for value in values if value is not None and abs(value) < limit]
    return {"kept": kept, "mean": sum(kept) / max(1, len(kept)), "dropped": len(values) - len(kept)}
'''


def write_code(root):
    """The students' modules for the similarity check: ``{student: folder}``."""
    import pathlib

    from support import honest
    from support.disguise import disguise

    root = pathlib.Path(root)
    stubs = {module: (honest.ROOT / "exercises" / f"{module}.py").read_text(encoding="utf-8")
             for module in honest.MODULES}
    keep = {name for text in stubs.values() for name in re.findall(r"[A-Za-z_]\w*", text)}
    authors = honest.authors()
    texts = {"王小明": {m: honest.module_text(authors["ivo"], m, stubs[m]) for m in honest.MODULES},
             "纯文件夹": {m: honest.module_text(authors["pavel"], m, stubs[m]) for m in honest.MODULES},
             "赵六": {m: disguise((honest.ROOT / "solutions" / f"{m}.py").read_text(encoding="utf-8"), keep)
                    for m in honest.MODULES},
             "空白": stubs}
    texts["李华"] = {m: disguise(text, keep) for m, text in texts["王小明"].items()}
    texts["张三"] = {m: text + OWN_HELPER for m, text in texts["李华"].items()}   # a copy and a bit of his own
    for student, modules in texts.items():
        for module, text in modules.items():
            (root / student).mkdir(parents=True, exist_ok=True)
            (root / student / f"{module}.py").write_text(text, encoding="utf-8")
    return {student: root / student for student in texts}


def build(out, report_lang="zh", similarity=False):
    """Write the class's files into ``out`` and its report (after a similarity check of
    code written beside ``out`` with ``similarity``); returns the manifest."""
    norm = {"amp_update": {"todo": 2, "test": "amp_update: 全局范数是 13", "message": NORM_FEEDBACK}}
    growth = {"loss_scaler": {"todo": 4, "test": "loss_scaler: 间隔 2 后增长", "message": GROWTH_FEEDBACK}}
    write_student(out, "王小明", tests(), commit=_commit("a1"))
    write_student(out, "李华", tests(norm=False, output=NORM_FEEDBACK), norm, commit=dict(_commit("b2"), later_commits=2),
           flags=["protected file .github/workflows/classroom.yml differs from the template"])
    write_student(out, "张三", tests(norm=False, output=NORM_FEEDBACK), norm, commit=_commit("c3"))
    write_student(out, "赵六", tests(growth=False, output=GROWTH_FEEDBACK), growth, commit=_commit("d4"),
           isolation={"confined": False, "problems": [PROBLEM]})
    write_student(out, "纯文件夹", tests(), commit={"deadline": DEADLINE, "source": "working tree"})
    stubs = {"amp_update": {"todo": 1, "test": "amp_update: 全局范数是 13", "message": "TODO 1 还没有实现。"}}
    write_student(out, "空白", tests(False, False, False, False, "TODO 1 还没有实现。"), stubs, commit=_commit("e5"))
    entries = {name: {"status": "ok", "reason": ""} for name in COUNTED}
    entries["纯文件夹"]["submission_commit"] = {"deadline": DEADLINE, "source": "working tree"}
    entries["空白"] = {"status": "ok", "reason": "", "unchanged_stubs": True}
    entries["孙七"] = {"status": "crashed", "reason": TIMEOUT_REASON}
    entries["notes"] = {"status": "no submission", "reason": NOTES_REASON}
    entries["empty-repo"] = {"status": "no commit before deadline", "reason": "the repository has no commit",
                             "submission_commit": {"deadline": DEADLINE, "source": "committed", "sha": None,
                                                   "later_commits": 0}}
    for student in ("孙七", "notes", "empty-repo"):
        write_results(zero_report(student, 5, entries[student]["status"], entries[student]["reason"]),
                      out / student / "results.json")
    add_extra_data(out / "empty-repo" / "results.json", {"submission_commit": entries["empty-repo"]["submission_commit"]})
    plan.settle_entries(entries)   # what a finished batch records in run.json
    manifest = {"seed": 5, "report_lang": report_lang, "students": entries, "isolation": CONFINED,
                "deadline": {"deadline": DEADLINE, "source": "committed", "also_latest": False}}
    if similarity:
        from autograder.similarity import pairs

        pairs.run(write_code(out.parent / f"{out.name}-code"), out, lang=report_lang)
    class_write.write_all(out, manifest)
    return manifest
