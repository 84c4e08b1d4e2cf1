#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image; the
# zip is unpacked in /autograder/source. It builds the grader's environment from
# the files beside it and nothing else: a venv on a CPython @MIN_PYTHON@ to @MAX_PYTHON@ (those
# torch's pinned release has wheels for; python3 first, then the newest in range), torch's
# CPU build (the default Linux wheel pulls several GB of CUDA libraries), then
# requirements.txt. Written by `python -m autograder export-gradescope`.
# AUTOGRADER_ROOT (default /autograder) and AUTOGRADER_NO_APT (set: never run
# apt-get) exist so that the export can be tried and tested outside Gradescope.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
VENV="$ROOT/venv"
MIN_PYTHON="@MIN_PYTHON@"
MAX_PYTHON="@MAX_PYTHON@"
TORCH="@TORCH@"
TORCH_INDEX="@TORCH_INDEX@"
IMAGE_ADVICE="On the assignment's Configure Autograder page choose the base image Ubuntu 22.04 (its python3 is 3.10) and upload the zip again; see the TA guide (docs/ta-guide.md, section Gradescope)."

may_apt() {
  [ -z "${AUTOGRADER_NO_APT:-}" ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]
}

fail() {
  printf '\nsetup.sh: ERROR: %s\n' "$*" >&2
  exit 1
}

# A Python in the range, with venv and ensurepip (Ubuntu ships them in python3-venv).
usable_python() {
  "$1" -c "import sys, venv, ensurepip; sys.exit(not (@MIN_PYTHON_TUPLE@) <= sys.version_info[:2] <= (@MAX_PYTHON_TUPLE@))" >/dev/null 2>&1
}

find_python() {
  local candidate
  for candidate in python3 python3.14 python3.13 python3.12 python3.11 python3.10; do
    if command -v "$candidate" >/dev/null 2>&1 && usable_python "$candidate"; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

describe_python() {
  if command -v python3 >/dev/null 2>&1; then
    python3 --version 2>&1
  else
    echo "no python3"
  fi
}

if ! PYTHON="$(find_python)"; then
  if may_apt; then
    echo "setup.sh: no Python $MIN_PYTHON-$MAX_PYTHON with venv on this image ($(describe_python)): installing python3 and python3-venv"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends python3 python3-venv libseccomp2
  fi
  PYTHON="$(find_python)" || fail "the grader needs a Python $MIN_PYTHON to $MAX_PYTHON with its venv module, and this image has $(describe_python). $IMAGE_ADVICE"
fi
echo "setup.sh: using $PYTHON ($("$PYTHON" --version 2>&1))"

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV" || fail "could not create a virtual environment with $PYTHON"
"$VENV/bin/python" -m pip install --index-url "$TORCH_INDEX" "$TORCH" \
  || fail "could not install $TORCH (CPU build) for $("$VENV/bin/python" --version 2>&1) on this image: its wheels need Python $MIN_PYTHON to $MAX_PYTHON and glibc >= 2.28. $IMAGE_ADVICE"
"$VENV/bin/python" -m pip install -r "$SOURCE/requirements.txt" \
  || fail "could not install $SOURCE/requirements.txt"

# Student code runs under a uid of its own when the grader can drop root: it
# must be able to read the interpreter; nothing of ours needs to be writable.
chmod a+rx "$ROOT"
chmod -R a+rX "$VENV" "$SOURCE"

# The syscall filter needs the system's libseccomp: add it where apt can.
cd "$SOURCE"
if ! "$VENV/bin/python" -m autograder.cli.gradescope_run check --quiet --need-filter && may_apt; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libseccomp2 || true
fi
# Fails (and so does the build) if the grader still lacks a package; says what confinement it gets.
"$VENV/bin/python" -m autograder.cli.gradescope_run check
