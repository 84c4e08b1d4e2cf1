"""The Pythons and machines the grader runs on, checked before pip and before torch.

torch==2.13.0 (requirements.txt) publishes wheels for CPython 3.10 to 3.14 on Linux
(x86-64, aarch64), Windows x86-64 and macOS arm64, and nothing else: elsewhere pip only
says "No matching distribution found for torch". So the first step of every set-up
command the READMEs give is ``python3 -m autograder.python_range``, which says, in Chinese
and English, which Python to install instead; ``python -m autograder grade`` (``watch``,
``conformance``) runs the same check first.

Written for any Python 3 (standard library only, no f-strings, nothing newer than 3.0's
syntax; tests/repository/test_python_versions.py runs vermin on it), because a Python
out of range is exactly where it runs. Why the range is 3.10-3.14, and when to raise the
floor: docs/maintaining.md, "The Python range".
"""
import os
import platform
import re
import struct
import sys

FLOOR = (3, 10)
CEILING = (3, 14)
RECOMMENDED = (3, 12)
# The machines torch's pinned release has wheels for: (platform.system(), platform.machine()).
MACHINES = {
    "Linux": ("x86_64", "aarch64"),
    "Windows": ("AMD64",),
    "Darwin": ("arm64",),
}
GLIBC_FLOOR = (2, 28)  # torch's Linux wheels are manylinux_2_28
# Import names of what ``grade`` needs first (requirements.txt); tomli only below 3.11.
NEEDED_MODULES = ("torch", "pytest", "pytest_timeout", "babel", "rich")
HERE = os.path.dirname(os.path.abspath(__file__))


def dotted(version):
    return ".".join(str(part) for part in version)


def torch_pin():
    """``torch==2.13.0`` from requirements.txt beside the grader (``torch`` where unreadable)."""
    try:
        with open(os.path.join(os.path.dirname(HERE), "requirements.txt"), encoding="utf-8") as handle:
            found = re.search(r"^torch==([^\s;#]+)", handle.read(), re.M)
    except (OSError, ValueError):
        found = None
    return "torch==" + found.group(1) if found else "torch"


def facts():
    """What the check looks at, in one place (the tests replace it)."""
    libc, libc_version = platform.libc_ver()
    return {
        "version": tuple(sys.version_info[:3]),
        "implementation": platform.python_implementation(),
        "system": platform.system(),
        "machine": platform.machine(),
        "bits": struct.calcsize("P") * 8,
        "glibc": libc_version if libc == "glibc" else "",
        "executable": sys.executable,
    }


def _version_tuple(text):
    return tuple(int(part) for part in re.findall(r"\d+", text)[:2])


def _how_to_install(system):
    """(zh, en): where to get the recommended Python on this system and how to use it."""
    want = dotted(RECOMMENDED)
    if system == "Windows":
        return ("从 https://www.python.org/downloads/ 安装 64 位的 Python {0}（Windows installer (64-bit)），"
                "然后把命令中的 py 换成 py -{0}。".format(want),
                "Install the 64-bit Python {0} from https://www.python.org/downloads/ (Windows installer "
                "(64-bit)), then use py -{0} in place of py in the commands.".format(want))
    if system == "Darwin":
        return ("从 https://www.python.org/downloads/ 安装 Python {0}（macOS 64-bit universal2 installer，"
                "或 brew install python@{0}），然后把命令中的 python3 换成 python{0}。".format(want),
                "Install Python {0} from https://www.python.org/downloads/ (the macOS 64-bit universal2 "
                "installer, or brew install python@{0}), then use python{0} in place of python3 in the "
                "commands.".format(want))
    return ("用系统的软件包安装 Python {0}（Ubuntu / Debian：sudo apt install python{0} python{0}-venv），"
            "或用 uv（pip install uv，再 uv python install {0}），然后把命令中的 python3 换成 python{0}。".format(want),
            "Install Python {0} from your system's packages (Ubuntu / Debian: sudo apt install python{0} "
            "python{0}-venv) or with uv (pip install uv, then uv python install {0}), then use python{0} in "
            "place of python3 in the commands.".format(want))


def problems(found=None):
    """[(zh, en), ...]: why torch's pinned release cannot be installed for this Python on this
    machine, each with what to do instead; [] when it can."""
    found = facts() if found is None else found
    pin, low, high = torch_pin(), dotted(FLOOR), dotted(CEILING)
    version, system, machine = found["version"], found["system"], found["machine"]
    shown = "Python {0} ({1}, {2} {3})".format(dotted(version), found["executable"], system, machine)
    zh_fix, en_fix = _how_to_install(system)
    out = []
    if tuple(version[:2]) < FLOOR or tuple(version[:2]) > CEILING or found["implementation"] != "CPython":
        why_zh = "太旧" if tuple(version[:2]) < FLOOR else "太新，{0} 还没有它的版本".format(pin)
        why_en = "too old" if tuple(version[:2]) < FLOOR else "too new: {0} has no build for it yet".format(pin)
        if found["implementation"] != "CPython":
            why_zh = why_en = found["implementation"]
        out.append(("{0}：{1}。本课程需要 CPython {2}–{3}（推荐 {4}）。{5}".format(
            shown, why_zh, low, high, dotted(RECOMMENDED), zh_fix),
            "{0}: {1}. This course needs CPython {2}-{3} ({4} recommended). {5}".format(
            shown, why_en, low, high, dotted(RECOMMENDED), en_fix)))
    if system == "Darwin" and machine != "arm64":
        out.append(("{0} 没有 Intel 芯片（x86-64）Mac 的版本。Apple 芯片（M1 及更新）的 Mac 上出现这一条，说明这个 Python "
                    "运行在 Rosetta 下：从 python.org 安装 universal2 版的 Python {1}。Intel Mac 请改用一台 Linux 或 "
                    "Windows 电脑，或在浏览器里用 GitHub Codespaces 打开这个仓库。".format(pin, dotted(RECOMMENDED)),
                    "{0} has no build for Intel (x86-64) Macs. On an Apple-silicon Mac (M1 and later) this Python "
                    "runs under Rosetta: install the universal2 Python {1} from python.org. On an Intel Mac use a "
                    "Linux or Windows computer, or open this repository in GitHub Codespaces in the "
                    "browser.".format(pin, dotted(RECOMMENDED))))
    elif system == "Windows" and (found["bits"] != 64 or machine not in MACHINES["Windows"]):
        kind = "32 位" if found["bits"] != 64 else machine
        out.append(("这个 Python 是 {0} 的，而 {1} 只有 64 位 x86（AMD64）的 Windows 版本（ARM 电脑也能运行它）。{2}".format(
            kind, pin, zh_fix),
            "This Python is {0}, and {1} has Windows builds for 64-bit x86 (AMD64) only (ARM computers run it "
            "too). {2}".format("32-bit" if found["bits"] != 64 else machine, pin, en_fix)))
    elif system == "Linux" and (machine not in MACHINES["Linux"] or found["bits"] != 64):
        out.append(("{0} 只有 64 位 x86-64 与 aarch64（ARM64）的 Linux 版本，这个 Python 是 {1}（{2} 位）：请换一台 64 位的"
                    "电脑，或在浏览器里用 GitHub Codespaces 打开这个仓库。".format(pin, machine, found["bits"]),
                    "{0} has Linux builds for 64-bit x86-64 and aarch64 (ARM64) only, and this Python is {1} "
                    "({2}-bit): use a 64-bit computer, or open this repository in GitHub Codespaces in the "
                    "browser.".format(pin, machine, found["bits"])))
    elif system == "Linux" and found["glibc"] and _version_tuple(found["glibc"]) < GLIBC_FLOOR:
        out.append(("这台 Linux 的 glibc 是 {0}，{1} 需要 {2} 或更新（Ubuntu 20.04、Debian 10、RHEL 8 及以后）。".format(
            found["glibc"], pin, dotted(GLIBC_FLOOR)),
            "This Linux has glibc {0}; {1} needs {2} or newer (Ubuntu 20.04, Debian 10, RHEL 8 and "
            "later).".format(found["glibc"], pin, dotted(GLIBC_FLOOR))))
    elif system not in MACHINES:
        out.append(("{0} 没有 {1} 的版本：请用 Linux、Windows 或 Apple 芯片的 Mac。".format(pin, system),
                    "{0} has no build for {1}: use Linux, Windows or an Apple-silicon Mac.".format(pin, system)))
    return out


def missing_modules(found=None, find=None):
    """Import names of the requirements this Python lacks (found without importing them)."""
    import importlib.util

    version = (facts() if found is None else found)["version"]
    find = importlib.util.find_spec if find is None else find
    wanted = NEEDED_MODULES + (("tomli",) if tuple(version[:2]) < (3, 11) else ())
    return [name for name in wanted if find(name) is None]


def missing_text(missing, found=None):
    """Both languages, Chinese first: what to do when a Python in range lacks requirements
    (no catalogs: babel may be among what is missing)."""
    found = facts() if found is None else found
    activate = ".venv\\Scripts\\Activate.ps1" if found["system"] == "Windows" else "source .venv/bin/activate"
    torch = "pip install {0} --index-url https://download.pytorch.org/whl/cpu".format(torch_pin())
    return ("这个 Python（{0}）里没有安装：{1}。先在仓库根目录激活虚拟环境：{2}；还没有虚拟环境时，按 README 的"
            "准备环境一节创建它，再先装 CPU 版 torch：{3}，然后 pip install -r requirements.txt。\n"
            "Not installed in this Python ({0}): {4}. Activate the virtual environment from the repository root "
            "first: {2}; without one, create it as the README's set-up says, then install the CPU build of torch "
            "first: {3}, then pip install -r requirements.txt.".format(
                found["executable"], "、".join(missing), activate, torch, ", ".join(missing)))


def report(messages, stream=None):
    """Print each (zh, en) message, Chinese then English."""
    stream = sys.stderr if stream is None else stream
    for zh, en in messages:
        stream.write("\n" + zh + "\n" + en + "\n")
    stream.write("\n")
    stream.flush()


def check_grader(argv, found=None):
    """Before ``python -m autograder grade|watch|conformance``: 0 when torch's pin has a build for
    this Python and machine, else 1 after saying which Python to install (before any import the
    grader needs fails; what a Python in range lacks, judge_process/preflight.py says, with
    :func:`missing_modules`, and the grade still writes its results)."""
    if not argv or argv[0] not in ("grade", "watch", "conformance"):
        return 0
    trouble = problems(found)
    if trouble:
        report(trouble)
        return 1
    return 0


def main():
    """``python3 -m autograder.python_range``: exit 0 in silence, or 1 saying what to install."""
    trouble = problems()
    if trouble:
        report(trouble)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
