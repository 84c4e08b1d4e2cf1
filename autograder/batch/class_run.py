"""One run of the class commands, as the command line asked for it: which
students (``--shard``, ``--only``), which seed and language (a re-grade keeps
what ``run.json`` recorded), which commit (``--deadline``), the similarity
check while the judge grades, and the outputs written whatever happened
(``run.json``, ``scores.csv``, ``report.md``, charts); ``merge-scores`` joins
the output folders of shards into one.

The options arrive as the command line parsed them (an ``argparse.Namespace``
of ``grade-many``, ``merge-scores`` or ``similarity``); what they may be is said
in :mod:`autograder.cli.grade_many`. A :class:`UsageError` is bad usage (exit 2).
"""
import collections
import contextlib
import os
import pathlib
import shutil
import sys
import tempfile
import time

from autograder import locations
from autograder.batch.grade_class import (BatchInterrupted, UsageError, discover, parse_shard, release_reserve,
                                          run_batch, select_shard)
from autograder.batch.manifest import (MANIFEST, _now, grader_identity, merge_manifests, read_manifest,
                                      write_manifest)
from autograder.batch.terms import options
from autograder.i18n import _, as_data, render_data, resolve_language
from autograder.judging.results import CLASS_STATUSES
from autograder.reports.safe_text import terminal_line
from autograder.sandbox import environment


def _compared(args, output_dir):
    """What run.json records of ``--compare OLD_DIR``: the folder, its seed and grader; None without it."""
    if not getattr(args, "compare", None):
        return None
    old = pathlib.Path(args.compare)
    if old.resolve() == output_dir.resolve():
        raise UsageError(f"--compare {old}: that is the output folder itself; compare with an earlier run's folder")
    recorded = read_manifest(old)
    if recorded is None:
        raise UsageError(f"--compare {old}: no {MANIFEST} (not a grade-many output folder)")
    return {"dir": str(old.resolve()), "seed": recorded.get("seed"), "grader": recorded.get("grader")}


def deadline_spec(args, recorded=None):
    """The :class:`~autograder.batch.terms.deadlines.DeadlineSpec` the options ask for, or None
    (:func:`autograder.batch.terms.options.deadline_spec`; a problem is bad usage)."""
    return _terms(args, options.deadline_spec, args, recorded)


def recorded_extensions(manifest):
    """``{student: deadline}`` of the extensions a run.json records (the unreadable left out)."""
    from autograder.batch.terms.times import TermsError, parse_deadline

    found = {}
    for student, entry in ((manifest or {}).get("extensions") or {}).items():
        try:
            found[student] = parse_deadline(entry["deadline"])
        except (TermsError, KeyError, TypeError):
            continue
    return found


def _terms(args, read, *params):
    """``read(*params)``, a :class:`~autograder.batch.terms.times.TermsError` said in the TA's language."""
    from autograder.batch.terms.times import TermsError

    try:
        return read(*params)
    except TermsError as exc:
        raise UsageError(exc.render(staff_language(args))) from None


def staff_language(args):
    """The language a TA reads this run's errors in: the class page's (--report-lang), else the
    students' (--lang), else $AUTOGRADER_LANG or the course repository's setting."""
    chosen = getattr(args, "report_lang", None) or getattr(args, "lang", None)
    return chosen or resolve_language(root=str(locations.REPO_ROOT))


def _chosen(args, root, students, shard):
    """The student folders to grade: ``--only``'s, in ``--shard``'s slice."""
    if args.only:
        unknown = sorted(set(args.only) - set(students))
        if unknown:
            raise UsageError(f"--only: no such student folder in {root}: {', '.join(unknown)}")
        chosen = sorted(set(args.only))
        return [s for s in chosen if s in select_shard(students, *shard)] if shard else chosen
    return select_shard(students, *shard) if shard else students


def grade_many(args, judge_process=True):
    """Grade the class as ``args`` (grade-many's options) ask, write its outputs and
    return the exit code: 0, or 130 when interrupted (the outputs are written all the
    same). ``judge_process``: grade in a judge process of its own
    (:mod:`autograder.batch.clean_process`); tests that stand in for parts of the judge
    in this process switch it off."""
    from autograder.judging.seeds import new_seed

    root, output_dir = pathlib.Path(args.root), pathlib.Path(args.output_dir)
    students = [s for s in discover(root) if (root / s).resolve() != output_dir.resolve()]
    shard = parse_shard(args.shard) if args.shard else None
    previous = read_manifest(output_dir)
    chosen = _chosen(args, root, students, shard)
    compared = _compared(args, output_dir)
    seed = args.seed
    if seed is None and args.only and previous:
        seed = previous.get("seed")
    if seed is None and compared:   # the old run's inputs: what changes is the grader
        seed = compared.get("seed")
    seed = new_seed() if seed is None else int(seed)
    lang = args.lang or ((previous or {}).get("lang") if args.only else None)

    keep = previous if (args.only and previous) else None
    terms = _terms(args, options.resolve, args, keep, chosen, students)
    spec, extensions, policy, roster = terms.spec, terms.extensions, terms.policy, terms.roster
    grader = grader_identity()
    regraded = _regrade_warnings(keep, chosen, seed, grader)   # before the record takes this run's facts
    # a re-grade keeps the run's history going (its mode as recorded)
    history_mode = getattr(args, "history", None) or ((keep or {}).get("history") or {}).get("mode")
    manifest = keep or {"students": {}}
    manifest.update({
        "version": 1, "seed": manifest.get("seed", seed) if keep else seed, "grader": grader,
        "root": str(root.resolve()), "visible_only": bool(args.visible_only),
        "shard": f"{shard[0]}/{shard[1]}" if shard else manifest.get("shard"),
        "class_size": len(students), "started": _now(), "lang": lang,
        "report_lang": args.report_lang or (manifest.get("report_lang") if keep else None) or "en",
    })
    if not keep and shard:
        manifest["shard_students"] = chosen
    if spec is not None:
        manifest["deadline"] = dict(spec.describe(), also_latest=bool(args.also_latest))
    elif not keep:
        manifest.pop("deadline", None)
    for key, value in (("extensions", extensions), ("late_policy", policy.describe() if policy else None),
                       ("roster", roster), ("compare", compared or (manifest.get("compare") if keep else None))):
        if value:
            manifest[key] = value
        else:
            manifest.pop(key, None)
    own = [f"{student} {extensions[student]['deadline']}" for student in chosen if student in extensions]
    print(f"grade-many: {len(chosen)} of {len(students)} folder(s) in {root}"
          + (f", shard {shard[0]}/{shard[1]}" if shard else "") + f"; seed {seed}"
          + (f"; deadline {manifest['deadline']['deadline']} ({spec.source})" if spec else "")
          + (f"; extension: {', '.join(own)}" if own else "")
          + (f"; late policy {policy.penalty_per_day:g} a day, at most {policy.max_days} day(s)" if policy else ""),
          file=sys.stderr)
    started = time.monotonic()
    warnings = regraded
    info = {}
    interrupted = False
    # Exported commits live here until similarity has read them (never in the student's folder).
    def meanwhile():  # while the judge process grades (after it, where there is none)
        environment.one_blas_thread(os.environ)  # before the similarity check imports numpy
        run_similarity(args, output_dir, info.get("submissions", {}), shard, warnings)
        for module in ("autograder.class_reports.write", "autograder.class_reports.charts", "matplotlib.pyplot"):
            with contextlib.suppress(ImportError):  # the class report's, ready when the grades are
                __import__(module)
        with contextlib.suppress(ImportError):
            from autograder.class_reports import charts

            charts.warm()

    with tempfile.TemporaryDirectory(prefix="autograder-deadline-") as workdir:
        try:
            entries = run_batch(root, output_dir, chosen, seed, jobs=args.jobs, timeout=args.timeout,
                                include_hidden=not args.visible_only, isolation=args.isolation,
                                progress=not args.no_progress, manifest_entries=manifest["students"],
                                warnings=warnings, allow_unconfined=args.allow_unconfined, info=info,
                                deadline=spec, also_latest=args.also_latest, workdir=workdir, lang=lang,
                                grader=grader, roster=roster_of(roster), history=history_mode,
                                clean_process=judge_process, meanwhile=meanwhile)
        except BatchInterrupted as exc:
            entries, interrupted = exc.entries, True
            warnings.append(as_data(_("the batch was interrupted: students marked 'crashed' with reason "
                                      "'interrupted' were not graded (re-grade them with --only)")))
    manifest["warnings"] = (manifest.get("warnings", []) if keep else []) + warnings
    for warning in warnings:  # may name students: shown escaped
        print(terminal_line(f"grade-many: warning: {render_data(warning)}"), file=sys.stderr)
    manifest["students"] = entries
    manifest["finished"] = _now()
    if "isolation" in info:
        manifest["isolation"] = info["isolation"]
    if "history" in info:
        manifest["history"] = info["history"]
    outputs = write_class_outputs(output_dir, manifest)
    wall = time.monotonic() - started
    counts = collections.Counter(entries[s]["status"] for s in chosen)
    problems = ", ".join(f"{counts[s]} {s}" for s in CLASS_STATUSES[1:] if counts[s])
    per = wall / len(chosen) if chosen else 0.0
    # a notes/ folder or a repository without commits is no student: say who had work of their own
    print(f"grade-many: {len(chosen)} folder(s) in {wall:.1f} s ({per:.2f} s each): {counts[CLASS_STATUSES[0]]} "
          "graded with work of their own" + (f"; {problems}" if problems else ""), file=sys.stderr)
    for path in outputs:
        print(f"wrote {path}")
    return 130 if interrupted else 0


def roster_of(recorded):
    """``{folder: the roster's record of its student}`` from what run.json records of a roster."""
    students = (recorded or {}).get("students") or []
    return {student["folder"]: {key: student.get(key) for key in ("identifier", "github_username", "name")}
            for student in students if isinstance(student, dict) and student.get("folder")}


def _regrade_warnings(keep, chosen, seed, grader):
    """What a re-grade does not share with the run it re-grades (each results.json says its own)."""
    if not keep:
        return []
    who, said = ", ".join(chosen), []
    if keep.get("seed") not in (None, seed):
        said.append(as_data(_("{who} re-graded with seed {seed}, not the run's {kept}", who=who, seed=seed,
                              kept=keep["seed"])))
    if keep.get("grader") not in (None, grader):
        said.append(as_data(_("{who} re-graded by another grader than the run's (course commit {commit}, suites "
                              "{suites}); each results.json names the grader that graded it", who=who,
                              commit=str(grader.get("commit"))[:12], suites=str(grader.get("suites"))[:12])))
    return said


def run_similarity(args, output_dir, submissions, shard, warnings):
    """The similarity check over the whole class just graded (same folders, same commits)."""
    from autograder.similarity import pairs as similarity

    if args.no_similarity:
        return
    if shard or args.only:
        what = "a shard" if shard else "a re-grade with --only"
        print(f"grade-many: similarity not run on {what}: run `python -m autograder similarity` on the "
              "whole class (the grade-class workflow's merge job does)", file=sys.stderr)
        return
    try:
        result = similarity.run(submissions, output_dir, lang=args.report_lang or "en")  # the class page's
    except Exception as exc:  # noqa: BLE001 - an integrity check must not cost the grades
        warnings.append(as_data(_("the similarity check failed: {error}", error=f"{type(exc).__name__}: {exc}")))
        return
    if result.get("skipped"):
        print(f"grade-many: {result['skipped']}", file=sys.stderr)


def write_class_outputs(output_dir, manifest):
    """run.json, scores.csv, report.md (and charts), whatever happened meanwhile:
    the room kept at the start of the batch is given back for them first."""
    from autograder.class_reports import write as class_write

    release_reserve(output_dir)
    outputs = []
    try:
        write_manifest(output_dir, manifest)
        outputs.append(pathlib.Path(output_dir) / MANIFEST)
    except OSError as exc:
        print(f"grade-many: error: {MANIFEST} could not be written: {exc}", file=sys.stderr)
    try:
        outputs += class_write.write_all(output_dir, manifest)
    except OSError as exc:
        print(f"grade-many: error: the class report could not be written: {exc}", file=sys.stderr)
    return outputs


def merge_scores(inputs, output_dir, report_lang=None):
    """Join the grade-many output folders ``inputs`` into ``output_dir``; returns 0."""
    from autograder.class_reports import write as class_write

    output_dir = pathlib.Path(output_dir)
    manifests = []
    for name in inputs:
        source = pathlib.Path(name)
        manifest = read_manifest(source)
        if manifest is None:
            raise UsageError(f"{source}: no {MANIFEST} (not a grade-many output folder)")
        manifests.append((source, manifest))
    merged = merge_manifests(manifests)
    merged["finished"] = _now()
    if report_lang:
        merged["report_lang"] = report_lang
    output_dir.mkdir(parents=True, exist_ok=True)
    for source, manifest in manifests:
        if source.resolve() == output_dir.resolve():
            continue
        for student in manifest["students"]:
            if merged["students"][student]["source"] != str(source):
                continue
            if (source / student).is_dir():
                shutil.copytree(source / student, output_dir / student, dirs_exist_ok=True)
    write_manifest(output_dir, merged)
    outputs = class_write.write_all(output_dir, merged)
    for warning in merged["warnings"]:
        print(terminal_line(f"merge-scores: warning: {render_data(warning)}"), file=sys.stderr)
    print(f"merge-scores: {len(merged['students'])} student(s) from {len(manifests)} input(s)",
          file=sys.stderr)
    for path in outputs:
        print(f"wrote {path}")
    return 0


def class_submissions(root, students, spec, workdir):
    """``{student: folder}`` as grade-many would grade them (at the deadline ``spec`` when
    given, its commits exported under ``workdir``)."""
    from autograder.batch.deadline import take_snapshot
    from autograder.batch.plan import locate_submission

    found = {}
    for index, student in enumerate(students):
        folder = root / student
        if spec is not None:
            snapshot = take_snapshot(folder, student, spec, pathlib.Path(workdir) / f"{index:05d}")
            if snapshot.status:
                continue
            folder = snapshot.tree or folder
        submission, _, _ = locate_submission(folder)
        if submission is not None:
            found[student] = submission
    return found
