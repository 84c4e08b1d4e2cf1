"""Print a command of README.md by its name: ``python3 tools/readme_command.py test``.

README.md marks each command a reader pastes as it is with ``<!-- readme-command: NAME -->``
on the line before its ```bash block: ``grade`` sets up and grades exercises/, ``test``
sets up and runs this repository's test suite. ``.ci/run`` runs the ``test`` command it
prints, so the README's line is what CI runs (tests/repository/test_repository_paths.py checks the
commands stay one line each, in order, with the CPU build of torch first).
"""
import pathlib
import re
import sys

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def commands(text=None):
    """{name: command} of the README's marked blocks."""
    text = README.read_text(encoding="utf-8") if text is None else text
    return {name: block.strip() for name, block in
            re.findall(r"^<!-- readme-command: (\w+) -->\n```bash\n(.*?)```", text, flags=re.M | re.S)}


def main(argv):
    found = commands()
    if len(argv) != 1 or argv[0] not in found:
        print(f"usage: {sys.argv[0]} {{{','.join(found)}}}", file=sys.stderr)
        return 2
    print(found[argv[0]])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
