"""The student's own environment for an exported template: the venv its README's set-up lines
make, run verbatim in a copy of the template, so nothing of the development venv goes in.

Building one takes a minute or more (torch, the lab's transformers), so it is kept as
tests/support/export_envs.py keeps the exports' environments: under a key made of the
requirement files the README installs, its set-up lines and the Python that ``python`` names
on a PATH without this venv. A README command
then runs in a fresh copy of the template whose ``.venv`` links to that venv, as the README says:
``source .venv/bin/activate``, then the command line as written.
"""
import re
import shutil
import subprocess

from support import export_envs

VENV = ".venv"


INSTALLS_A_FILE = re.compile(r"pip install -r (\S+)(?:\s+#.*)?$")


def setup_script(readme):
    """``(script, requirement files)``: the README's first ```bash block that makes a venv (what a
    student runs once), then each other line of its blocks that installs a requirements file of
    the template (the GPU lab's own), as a student following the README runs them; a mirror's
    line (``pip install -i ...``) or ``pip config`` is an alternative, not a step."""
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    setup = next((block for block in blocks if "-m venv" in block), None)
    if setup is None:
        raise AssertionError("the README has no ```bash block that makes a venv")
    installs = list(dict.fromkeys(re.sub(r"\s+#.*$", "", line).strip() for block in blocks if "-m venv" not in block
                                  for line in block.splitlines() if INSTALLS_A_FILE.match(line.strip())))
    files = ["requirements.txt"] + [INSTALLS_A_FILE.match(line).group(1) for line in installs]
    return setup + "".join(f"{line}\n" for line in installs), list(dict.fromkeys(files))


def python():
    """The ``python`` a student's shell finds (the README's first command runs it), or None."""
    return shutil.which("python", path=export_envs.clean_environ()["PATH"]) or export_envs.base_python()


def build(template):
    """The folder of the venv built by ``template``'s README set-up, from its own files only."""
    script, requirements = setup_script((template / "README.md").read_text(encoding="utf-8"))
    files = {name: (template / name).read_bytes() for name in requirements}
    files["readme-setup.sh"] = script.encode()

    def make(folder):
        # the whole template: a set-up line may run one of its files before pip
        shutil.copytree(template, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns(VENV))
        export_envs.run_logged(["bash", "-e", "readme-setup.sh"], folder / "readme-setup.log", cwd=folder,
                               env=export_envs.clean_environ(), timeout=1800)
        if not (folder / VENV / "bin" / "python").is_file():
            raise RuntimeError(f"the README's set-up made no {VENV}/ in {folder}")

    return export_envs.cached("student", files, make, python()) / VENV


def link(folder, venv):
    """Give the template copy ``folder`` the student's ``.venv`` (a link to the built one)."""
    (folder / VENV).symlink_to(venv, target_is_directory=True)
    return folder


def run(command, folder, env, timeout=600):
    """``command`` as the README writes it, in ``folder`` with its venv activated."""
    return subprocess.run(["bash", "-c", f"source {VENV}/bin/activate && {command}"], cwd=folder,
                          capture_output=True, text=True, timeout=timeout, env=env)
