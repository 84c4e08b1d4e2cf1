"""Nothing in the repository points outside it: a clone is all a reader has.

Checked on every file git knows (tracked, or untracked and not ignored): no
path into the machine the repository was written on, no path that climbs out
of the repository to a sibling folder, and every relative Markdown link lands
inside the repository on a file that exists.
"""
import os
import pathlib
import re
import shutil
import subprocess

import pytest
from support.helpers import ROOT

SKIPPED_DIRS = {".git", ".venv", "venv", "__pycache__", ".pytest_cache", "node_modules"}
# Built from pieces so that this file does not match itself.
OUTSIDE = [re.compile(pattern) for pattern in (
    r"(?<![\w.])/" + "work/",                       # the machine's work area
    r"\.\./+" + r"shared\b",                        # a sibling folder of the clone
    r"(?<![\w/.-])shared/" + r"(spec|notes|seed)/",  # the same, named without ../
)]
MARKDOWN_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def repository_files():
    if shutil.which("git") and (ROOT / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
        return [ROOT / name for name in listed if name and (ROOT / name).is_file()]
    found = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        found += [pathlib.Path(folder, name) for name in names]
    return found


def text_of(path):
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:4096]:
        return None
    return data.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def texts():
    return {path.relative_to(ROOT).as_posix(): text for path in repository_files()
            if (text := text_of(path)) is not None}


def test_no_file_names_a_path_outside_the_repository(texts):
    assert len(texts) > 50, "the repository's files were not found"
    hits = [f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
            for name, text in texts.items() for pattern in OUTSIDE for match in pattern.finditer(text)]
    assert not hits, "paths outside the repository:\n" + "\n".join(hits)


def test_relative_markdown_links_stay_inside_and_exist(texts):
    broken = []
    for name, text in texts.items():
        if not name.endswith(".md"):
            continue
        for target in MARKDOWN_LINK.findall(text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
                continue  # a URL (https:, mailto:), not a file of this repository
            resolved = (ROOT / name).parent.joinpath(target).resolve()
            if ROOT not in resolved.parents and resolved != ROOT:
                broken.append(f"{name}: {target} leaves the repository")
            elif not resolved.exists():
                broken.append(f"{name}: {target} does not exist")
    assert not broken, "\n".join(broken)


def test_the_check_can_fail():
    planted = ["open /" + "work/main/README.md", "see ../" + "shared/x.md", "in shared/" + "notes/a.md"]
    for sample, pattern in zip(planted, OUTSIDE):
        assert pattern.search(sample), sample
    assert not any(pattern.search("cd \"$(dirname \"$0\")/..\" && ls docs/assignment.md") for pattern in OUTSIDE)


def test_the_readme_commands_are_pasted_as_they_are_and_ci_runs_the_test_one():
    """README.md's two commands (set up and grade; set up and run the tests) are one line
    each: the Python check first (it runs on any Python 3), a venv, uv at the pin every
    workflow uses, the requirements (pyproject.toml sends torch to PyTorch's CPU index: on
    Linux plain PyPI serves a multi-GB CUDA build); the pip and Windows lines install the CPU
    build of torch before the requirements; .ci/run runs the README's test line itself."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import readme_command
    from autograder.toml_reader import tomllib

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = readme_command.commands(readme)
    assert list(found) == ["grade", "test"], found
    pin = re.search(r"^torch==\S+", (ROOT / "requirements.txt").read_text(encoding="utf-8"), re.M).group(0)
    cpu = f"pip install {pin} --index-url https://download.pytorch.org/whl/cpu"
    uv_pin = re.search(r"^uv==\S+", (ROOT / "requirements-dev.txt").read_text(encoding="utf-8"), re.M).group(0)
    for name, last in (("grade", "python -m autograder grade"), ("test", "python -m pytest -n auto --dist loadfile")):
        steps = found[name].split(" && ")
        assert "\n" not in found[name] and steps[-1] == last, found[name]
        assert steps[:4] == ["python3 -m autograder.python_range", "python3 -m venv .venv", ". .venv/bin/activate",
                             f"pip install {uv_pin}"], steps
        # compiled at install as pip does: the grader never writes Python's caches, so without them
        # every process would compile torch again (a grade about twice as long)
        assert steps[4].startswith("uv pip install --compile-bytecode -r requirements.txt"), steps
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["uv"]["pip"]["torch-backend"] == "cpu"
    before_students = readme.split("## Students")[0]
    pip_line = [block.strip() for block in re.findall(r"```bash\n(.*?)```", before_students, flags=re.S)
                if "readme-command" not in block and cpu in block]
    assert len(pip_line) == 1 and pip_line[0].split(" && ")[:4] == [
        "python3 -m autograder.python_range", "python3 -m venv .venv", ". .venv/bin/activate", cpu]
    windows = re.findall(r"```powershell\n(.*?)```", before_students, flags=re.S)
    assert len(windows) == 1 and windows[0].startswith("py -m autograder.python_range; if ($?) {")
    assert cpu in windows[0] and windows[0].strip().endswith("python -m autograder grade }")
    assert readme.index(found["grade"]) < readme.index(windows[0]) < readme.index(found["test"])
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'readme_test="$(python3 tools/readme_command.py test)"' in ci
    assert f"ci_test='{found['test']}'" in ci  # compared with the README's when CI runs
    run_line = ci.index("\n" + found["test"] + "\n")  # and run as it is written
    assert ci.index("export AUTOGRADER_REQUIRE_CONFINEMENT=1") < run_line
    assert ci.index('if [ "$readme_test" != "$ci_test" ]') < run_line
    # uv gets this machine's local wheels as pip's config gives them to pip, and nothing else
    assert ci.index('export UV_FIND_LINKS="$find_links" UV_NO_CONFIG=1') < run_line
    assert readme_command.main(["no-such-command"]) == 2
