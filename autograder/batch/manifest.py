"""``run.json``, the record of a grade-many run: read, written atomically,
and merged across shards. With each student's ``results.json`` it is all a
class report needs. Also which grader graded a run (:func:`grader_identity`),
recorded in run.json and in every results.json it writes."""
import collections
import datetime
import functools
import hashlib
import json
import os
import pathlib
import subprocess

from autograder.batch.grade_class import UsageError, parse_shard
from autograder.i18n import _, as_data

MANIFEST = "run.json"


def read_manifest(output_dir):
    path = pathlib.Path(output_dir) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("students"), dict):
        raise UsageError(f"{path}: not a grade-many manifest")
    return data


def write_manifest(output_dir, manifest):
    path = pathlib.Path(output_dir) / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{MANIFEST}.tmp")
    temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, path)


# Files of a package that say nothing about how it grades (caches, compiled catalogs).
_NOT_GRADER = ("__pycache__",)
_NOT_GRADER_SUFFIXES = (".pyc", ".mo")


def _digest(named):
    """sha256 over ``{name: path}``: each name and its file's bytes, in the names' order."""
    digest = hashlib.sha256()
    for name in sorted(named):
        digest.update(name.encode("utf-8") + b"\0" + named[name].read_bytes() + b"\0")
    return digest.hexdigest()


def _files(folder, skip=None):
    """``{name relative to folder: path}`` of the files that make a grader under ``folder``."""
    folder = pathlib.Path(folder)
    return {path.relative_to(folder).as_posix(): path for path in folder.rglob("*") if path.is_file()
            and not any(part in _NOT_GRADER for part in path.parts) and path.suffix not in _NOT_GRADER_SUFFIXES
            and (skip is None or skip not in path.parents)}


def _course_commit(root):
    """The course repository's commit (its HEAD), or None where it is no git checkout.
    The course repository is the TA's own: git runs in it as it would for them."""
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "--quiet", "HEAD"],
                              capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and len(sha) in (40, 64) else None


def grader_identity():
    """Which grader grades: ``{"commit", "suites", "engine"}``: the course repository's
    commit, a digest of the assignment's suites (every file of its package -- tests, checks,
    scenarios, catalogs -- and the files outside it its grader reads) and one of the engine
    (every other file of the package). Two runs with the same digests graded alike; the
    commit says where to look (a change not yet committed shows in the digests only)."""
    from autograder import active_assignment

    return dict(_identity(active_assignment.package_name()))


@functools.cache
def _identity(package):
    from autograder import active_assignment, locations

    assignment = active_assignment.load(package)
    suites = _files(assignment.folder)
    suites.update({f"../{name}": locations.REPO_ROOT / name for name in assignment.grader_files
                   if (locations.REPO_ROOT / name).is_file()})
    engine = _files(locations.PACKAGE_DIR, skip=assignment.folder)
    return {"commit": _course_commit(locations.REPO_ROOT), "suites": _digest(suites), "engine": _digest(engine)}


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def merge_manifests(manifests):
    """One manifest from several shard manifests: students joined, coverage checked."""
    merged = {"version": 1, "students": {}, "merged_from": [], "warnings": []}
    seeds, shards = set(), collections.defaultdict(set)
    for source, manifest in manifests:
        merged["merged_from"].append(str(source))
        seeds.add(manifest.get("seed"))
        if manifest.get("shard"):
            k, n = parse_shard(manifest["shard"])
            shards[n].add(k)
        for student, entry in manifest["students"].items():
            if student in merged["students"]:
                merged["warnings"].append(as_data(_("{student} appears in more than one input; kept the one "
                                                    "from {source}", student=student, source=str(source))))
            merged["students"][student] = dict(entry, source=str(source))
        for key in ("root", "visible_only", "class_size", "deadline", "lang", "report_lang", "grader", "late_policy",
                    "roster", "history", "compare"):
            merged.setdefault(key, manifest.get(key))
        if manifest.get("extensions"):
            merged.setdefault("extensions", {}).update(manifest["extensions"])
        if manifest.get("grader") != merged.get("grader"):
            merged["warnings"].append(as_data(_("{source} was graded by another grader than the first input "
                                                "(each student's grader is in their results.json)",
                                                source=str(source))))
        if manifest.get("deadline") != merged.get("deadline"):
            merged["warnings"].append(as_data(_("{source} was graded with another deadline than the first input "
                                                "(each student's graded commit is in their results)",
                                                source=str(source))))
        merged["warnings"] += [as_data(_("{source}: {warning}", source=str(source), warning=w))
                               for w in manifest.get("warnings", [])]
    for n, found in sorted(shards.items()):
        missing = sorted(set(range(1, n + 1)) - found)
        if missing:
            merged["warnings"].append(as_data(_("shards missing: {shards}",
                                                shards=", ".join(f"{k}/{n}" for k in missing))))
    if len(shards) > 1:
        merged["warnings"].append(as_data(_("the inputs were sharded with different N: {counts}",
                                            counts=", ".join(str(n) for n in sorted(shards)))))
    seeds.discard(None)
    merged["seed"] = next(iter(seeds)) if len(seeds) == 1 else None
    if len(seeds) > 1:
        merged["warnings"].append(as_data(_("the inputs were graded with different seeds (each student's "
                                            "seed is in scores.csv)")))
    merged["shard"] = None
    return merged
