"""A Chinese class's semester as git repositories made from the exported student template
(issue 48's walk), graded for real by tests/end_to_end/test_semester_walk.py: two weeks of
commits, module by module, around the deadline 2026-12-15T23:59+08:00.

  amp-backward-zhang  every module correct before the deadline (three commits, a module each)
  amp-backward-wang   a mistake in loss_scaler's TODO 4 at the deadline, fixed a day late
                      (the late policy counts it after its penalty)
  amp-backward-li     an extension to the 18th: the last modules on the 17th
  amp-backward-zhao   stuck: loss_scaler's TODO 4 wrong, three more attempts that fix nothing
  roster: the four, and chen, who never accepted the assignment

Correct code comes from the honest authors of tests/support/honest.py (held-out set); the
mistake is walk_class's (grows one step late).
"""
import pathlib

from support import walk_class
from support.git_class import commit

DEADLINE = walk_class.DEADLINE
EXTENDED = "2026-12-18T23:59+08:00"
POLICY = "penalty_per_day=0.1,max_days=3"
ROSTER = ("identifier,github_username,github_id,name\n"
          "2026001,zhang,9001,张伟\n2026002,wang,9002,王芳\n2026003,li,9003,李强\n"
          "2026004,zhao,9004,赵磊\n2026005,,,陈静\n")
MISTAKE = {4: walk_class.MISTAKES["lixiaolong"][1][4]}   # grows one step late
STUCK = "amp-backward-zhao"
LATE = "amp-backward-wang"
EXTENDED_STUDENT = "amp-backward-li"
FULL = "amp-backward-zhang"


def _day(day, hour=20):
    return f"2026-12-{day:02d}T{hour:02d}:00:00+08:00"


def build(root, template):
    """The class in ``root`` from the exported ``template``; returns ``{student: [shas]}``."""
    root, template = pathlib.Path(root), pathlib.Path(template)
    stubs = walk_class._stubs(template)
    good = {author: walk_class._modules(walk_class._space(author, "held_out"), stubs=stubs)
            for author in ("abe", "cai", "dov")}
    wrong = walk_class._modules(walk_class._space("pavel"), MISTAKE, stubs)
    right = walk_class._modules(walk_class._space("pavel"), stubs=stubs)
    paths = [f"exercises/{module}.py" for module in walk_class.MODULES]   # amp_update, loss_scaler, step
    shas = {}

    def student(name, steps):
        repo = walk_class._repo(root, name, template)
        shas[name] = [commit(repo, files, when, message) for when, files, message in steps]

    student(FULL, [(_day(3), {paths[0]: good["abe"][paths[0]]}, "amp_update"),
                   (_day(6), {paths[1]: good["abe"][paths[1]]}, "loss_scaler"),
                   (_day(10), {paths[2]: good["abe"][paths[2]]}, "训练步")])
    student(LATE, [(_day(4), {paths[0]: right[paths[0]]}, "amp_update"),
                   (_day(8), {paths[1]: wrong[paths[1]], paths[2]: right[paths[2]]}, "其余"),
                   ("2026-12-16T10:00:00+08:00", {paths[1]: right[paths[1]]}, "修好 TODO 4")])
    student(EXTENDED_STUDENT, [(_day(5), {paths[0]: good["cai"][paths[0]]}, "amp_update"),
                               (_day(17), {paths[1]: good["cai"][paths[1]], paths[2]: good["cai"][paths[2]]}, "延期")])
    attempts = [(_day(day), {paths[1]: wrong[paths[1]] + f"\n# 第 {n} 次尝试\n"}, f"尝试 {n}")
                for n, day in enumerate((7, 9, 11), start=1)]
    student(STUCK, [(_day(3), {paths[0]: good["dov"][paths[0]]}, "amp_update"),
                    (_day(5), {paths[1]: wrong[paths[1]]}, "loss_scaler"), *attempts])
    return shas
