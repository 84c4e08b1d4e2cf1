"""``run.json``, the record of a grade-many run: read, written atomically,
and merged across shards. With each student's ``results.json`` it is all a
class report needs."""
import collections
import datetime
import json
import os
import pathlib

from autograder.batch.grade_class import UsageError, parse_shard

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
                merged["warnings"].append(f"{student} appears in more than one input; "
                                          f"kept the one from {source}")
            merged["students"][student] = dict(entry, source=str(source))
        for key in ("root", "visible_only", "class_size", "deadline", "lang", "report_lang"):
            merged.setdefault(key, manifest.get(key))
        if manifest.get("deadline") != merged.get("deadline"):
            merged["warnings"].append(f"{source} was graded with another deadline than the first input "
                                      "(each student's graded commit is in their results)")
        merged["warnings"] += [f"{source}: {w}" for w in manifest.get("warnings", [])]
    for n, found in sorted(shards.items()):
        missing = sorted(set(range(1, n + 1)) - found)
        if missing:
            merged["warnings"].append("shards missing: " + ", ".join(f"{k}/{n}" for k in missing))
    if len(shards) > 1:
        merged["warnings"].append("the inputs were sharded with different N: "
                                  + ", ".join(str(n) for n in sorted(shards)))
    seeds.discard(None)
    merged["seed"] = next(iter(seeds)) if len(seeds) == 1 else None
    if len(seeds) > 1:
        merged["warnings"].append("the inputs were graded with different seeds (each student's "
                                  "seed is in scores.csv)")
    merged["shard"] = None
    return merged
