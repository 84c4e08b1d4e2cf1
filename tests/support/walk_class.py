"""The class a TA of a Chinese course meets, as git repositories made from the exported
student template (issue 36's walk): 13 students and two folders that are no student.

  zhangwei, liuyang, chenjing   correct, three independent styles (chenjing writes the
                                shortest way, much as the reference does)
  wangfang, lixiaolong,         one or two mistakes each (EXPECTED says which tests fail)
  zhaolei, huangmin
  zhoujie                       never started: the template's commit only
  wuting                        late: half the work before the deadline, the rest after
  xuqiang                       a disguised copy of zhangwei
  sunli                         a disguised copy of the reference solutions
  maxin                         a syntax error in loss_scaler.py, the rest correct
  zhuhao                        correct, and an edited workflow
  notes/                        a plain folder of notes
  empty-repo/                   a repository without commits

Correct code comes from the honest authors (tests/support/honest.py); those of the held-out set
are never read by the similarity calibration. Built by ``build(root, template)``; used by
the walk (docs/ta-guide.md's check of a release) and by tests.
"""
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/, where the support package lives

from support import honest  # noqa: E402
from support.disguise import disguise  # noqa: E402
from support.git_class import commit, init  # noqa: E402

ROOT = HERE.parents[1]
MODULES = honest.MODULES
DEADLINE = "2026-12-15T23:59+08:00"
TEMPLATE_TIME = "2026-12-01T09:00:00+08:00"
BEFORE = "2026-12-14T21:00:00+08:00"
AFTER = "2026-12-16T08:30:00+08:00"

# student -> (author, set, {TODO: (old, new)} applied to that author's fills)
CORRECT = {"zhangwei": ("abe", "held_out"), "liuyang": ("cai", "held_out"), "chenjing": ("dov", "held_out")}
MISTAKES = {
    # squares in the gradients' own precision (TODO 2)
    "wangfang": ("lena", {2: ("torch.square(gradient.float())", "torch.square(gradient).float()")}),
    # grows one step late (TODO 4) and forgets the growth tracker in the state dict (TODO 9)
    "lixiaolong": ("pavel", {4: ("elif growth_tracker + 1 != growth_interval:", "elif growth_tracker != growth_interval:"),
                             9: ('"growth_interval", "_growth_tracker"]', '"growth_interval"]')}),
    # unscales the caller's tensors in place (TODO 1)
    "zhaolei": ("hana", {1: ("torch.div(item, scale)", "item.div_(scale)")}),
    # clips the still-scaled gradients: unscales after clipping (TODO 12)
    "huangmin": ("bea", {}),
}


# What each folder should come to: the modules that lose points (every other module full marks)
# and the TODO its diagnosis names; a whole module's problem where the module does not import.
LOSSES = {"wangfang": {"amp_update": 2}, "lixiaolong": {"loss_scaler": 4}, "zhaolei": {"amp_update": 1},
          "huangmin": {"amp_training_step": 12}, "maxin": {"loss_scaler": "import"},
          "wuting": {"amp_training_step": 10}}
FULL_MARKS = ("zhangwei", "liuyang", "chenjing", "xuqiang", "sunli", "zhuhao")
NEVER_STARTED, LATE, TAMPERED = "zhoujie", "wuting", "zhuhao"
NO_STUDENT = {"notes": "no submission", "empty-repo": "no commit before deadline"}
COPIES = {"xuqiang": "zhangwei"}          # a classmate copy: one group, flagged in every module
REFERENCE_COPY = "sunli"                   # flagged against the reference in every module not public
HONEST = ("zhangwei", "liuyang", "chenjing", "wangfang", "lixiaolong", "zhaolei", "huangmin", "wuting", "maxin",
          "zhuhao")


def _space(author, which="similarity"):
    folder = honest.HELD_OUT_DIR if which == "held_out" else honest.SET_DIR
    return dict(honest.authors(folder)[author])


def _modules(space, changes=None, stubs=None):
    fills = dict(space["FILLS"])
    for todo, (old, new) in (changes or {}).items():
        assert fills[todo].count(old) == 1, (todo, old)
        fills[todo] = fills[todo].replace(old, new)
    return {f"exercises/{module}.py": honest.module_text(dict(space, FILLS=fills), module, stubs[module])
            for module in MODULES}


def _stubs(template):
    return {module: (template / "exercises" / f"{module}.py").read_text(encoding="utf-8") for module in MODULES}


def _copy_template(template, repo):
    subprocess.run(["cp", "-a", f"{template}/.", str(repo)], check=True)


def _repo(root, name, template):
    repo = init(root / name)
    _copy_template(template, repo)
    commit(repo, {}, TEMPLATE_TIME, "Initial commit")
    return repo


def build(root, template):
    """The class in ``root`` from the exported template ``template``; returns what each
    folder is (see EXPECTED_KIND)."""
    root, template = pathlib.Path(root), pathlib.Path(template)
    stubs = _stubs(template)
    solutions = {f"exercises/{module}.py": (ROOT / "solutions" / f"{module}.py").read_text(encoding="utf-8")
                 for module in MODULES}
    for student, (author, which) in CORRECT.items():
        commit(_repo(root, student, template), _modules(_space(author, which), stubs=stubs), BEFORE, "完成作业")
    for student, (author, changes) in MISTAKES.items():
        which = "held_out" if author in ("abe", "bea", "cai", "dov") else "similarity"
        space = _space(author, which)
        texts = _modules(space, changes, stubs) if student != "huangmin" else _clip_first(space, stubs)
        commit(_repo(root, student, template), texts, BEFORE, "作业")
    _repo(root, "zhoujie", template)                                         # never started
    late = _modules(_space("sven"), stubs=stubs)
    repo = _repo(root, "wuting", template)
    commit(repo, {key: late[key] for key in ("exercises/amp_update.py", "exercises/loss_scaler.py")}, BEFORE,
           "前两个模块")
    commit(repo, {"exercises/amp_training_step.py": late["exercises/amp_training_step.py"]}, AFTER, "补上训练步")
    original = _modules(_space("abe", "held_out"), stubs=stubs)
    keep = _public_names(stubs)
    commit(_repo(root, "xuqiang", template), {path: disguise(text, keep) for path, text in original.items()},
           BEFORE, "作业")
    commit(_repo(root, "sunli", template), {path: disguise(text, keep) for path, text in solutions.items()},
           BEFORE, "作业")
    broken = _modules(_space("qing"), stubs=stubs)
    text = broken["exercises/loss_scaler.py"]
    at = text.index("def update_scale")
    broken["exercises/loss_scaler.py"] = text[:at] + text[at:].replace("):", ")", 1)
    commit(_repo(root, "maxin", template), broken, BEFORE, "作业")
    repo = _repo(root, "zhuhao", template)
    workflow = (template / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8")
    commit(repo, dict(_modules(_space("tara"), stubs=stubs),
                      **{".github/workflows/classroom.yml": workflow.replace("runs-on: ubuntu-latest",
                                                                            "runs-on: ubuntu-22.04", 1)}),
           BEFORE, "作业，顺便改了 workflow")
    notes = root / "notes"
    notes.mkdir()
    (notes / "点名.md").write_text("# 点名\n\n助教的笔记，不是学生。\n", encoding="utf-8")
    init(root / "empty-repo")
    return root


def _clip_first(space, stubs):
    """bea with TODO 12's unscale moved after the clip: clipping sees the scaled gradients."""
    texts = _modules(space, stubs=stubs)
    fill = space["FILLS"][12]
    lines = fill.split("\n")
    first = [index for index, line in enumerate(lines) if "unscale_" in line]
    assert len(first) == 1 and lines[first[0] - 1].strip().startswith("if use_scaler"), fill
    unscale = lines[first[0] - 1:first[0] + 1]
    rest = lines[:first[0] - 1] + lines[first[0] + 1:]
    moved = "\n".join(rest + unscale)
    texts["exercises/amp_training_step.py"] = honest.module_text(
        dict(space, FILLS={**space["FILLS"], 12: moved}), "amp_training_step", stubs["amp_training_step"])
    return texts


def _public_names(stubs):
    """What a student hiding a copy keeps: every name the stubs use (the API the tests call)."""
    import re

    return {name for text in stubs.values() for name in re.findall(r"[A-Za-z_]\w*", text)}


if __name__ == "__main__":
    build(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
