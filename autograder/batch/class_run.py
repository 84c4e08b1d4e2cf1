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
from autograder.i18n import resolve_language
from autograder.judging.results import CLASS_STATUSES
from autograder.reports.safe_text import terminal_line
from autograder.sandbox import environment


def deadline_spec(args, recorded=None):
    """The :class:`~autograder.batch.deadline.DeadlineSpec` the options ask for (or the
    one ``recorded`` in run.json when re-grading without them), or None."""
    from autograder.batch import deadline

    if args.deadline is None:
        if recorded and getattr(args, "only", None):
            args.deadline = recorded.get("deadline")
            args.deadline_source = recorded.get("source", "committed")
            args.pushes = args.pushes or recorded.get("pushes_file")
            args.also_latest = args.also_latest or bool(recorded.get("also_latest"))
        if args.deadline is None:
            if args.deadline_source != "committed" or args.pushes or getattr(args, "also_latest", False):
                raise UsageError("--deadline-source, --pushes and --also-latest need --deadline")
            return None
    try:
        when = deadline.parse_deadline(args.deadline)
        if args.deadline_source == "pushed":
            if not args.pushes:
                raise UsageError("--deadline-source pushed needs --pushes FILE (see docs/ta-guide.md)")
            return deadline.DeadlineSpec(when, deadline.PUSHED, deadline.load_pushes(args.pushes),
                                         str(pathlib.Path(args.pushes).resolve()))
        if args.pushes:
            raise UsageError("--pushes is only read with --deadline-source pushed")
        return deadline.DeadlineSpec(when)
    except deadline.DeadlineError as exc:
        raise UsageError(exc.render(staff_language(args))) from None


ONLY_EXTENSION = "--only --deadline"   # where an extension came from: a re-grade that gave one


def run_deadline(args, keep, chosen, students):
    """``(spec, extensions)``: the :class:`~autograder.batch.deadline.DeadlineSpec` of this run
    and the extensions run.json records (``{student: {"deadline", "source"}}``). A re-grade
    (``keep``: the recorded run) keeps the class's recorded deadline and extensions; a
    ``--deadline`` given with ``--only`` is the deadline of the students re-graded (an
    extension, recorded as theirs), never the class's. ``--extensions FILE`` gives the
    extensions of the students graded (checked whole against ``students``, ROOT's folders)."""
    from autograder.batch import deadline
    from autograder.batch.terms import extensions as extension_file

    recorded = (keep or {}).get("deadline") if keep else None
    extensions = dict((keep or {}).get("extensions") or {}) if keep else {}
    if getattr(args, "extensions", None):
        if args.deadline is None and not recorded:
            raise UsageError("--extensions needs --deadline: the class's deadline, which the extensions move "
                             "for the students they list")
        try:
            listed = extension_file.recorded(extension_file.load_extensions(args.extensions, students))
        except deadline.DeadlineError as exc:
            raise UsageError(exc.render(staff_language(args))) from None
        for student in chosen:   # a re-grade changes the extensions of those it grades, no one else's
            extensions.pop(student, None)
            if student in listed:
                extensions[student] = listed[student]
    own = None
    if keep and args.deadline is not None:
        if not recorded:
            raise UsageError("--deadline with --only: this class was graded without a deadline; grade the "
                             "whole class with --deadline first (a re-grade never changes the class's deadline)")
        try:
            own = deadline.parse_deadline(args.deadline)
        except deadline.DeadlineError as exc:
            raise UsageError(exc.render(staff_language(args))) from None
        args.deadline = None
    spec = deadline_spec(args, recorded)
    if own is not None:
        for student in chosen:
            if own == spec.when:
                extensions.pop(student, None)   # graded at the class's deadline again
            else:
                extensions[student] = {"deadline": deadline.iso(own, own), "source": ONLY_EXTENSION}
    if spec is not None:
        try:
            spec.extensions = {student: deadline.parse_deadline(entry["deadline"])
                               for student, entry in extensions.items()}
        except (deadline.DeadlineError, KeyError, TypeError):
            raise UsageError(f"{MANIFEST}: an extension it records is not readable: {extensions!r:.200}") from None
    return spec, (extensions if spec is not None else {})


def run_late_policy(args, keep, spec):
    """The :class:`~autograder.batch.terms.late_policy.LatePolicy` of this run, or None:
    ``--late-policy``, else what a re-grade's run.json recorded, else the course repository's
    ``[tool.autograder.late]``. It needs a deadline to be late for."""
    from autograder.batch.terms import late_policy
    from autograder.batch.terms.times import TermsError

    try:
        if getattr(args, "late_policy", None):
            policy = late_policy.from_option(args.late_policy)
            if policy is not None and spec is None:
                raise UsageError("--late-policy needs --deadline: late is after a deadline")
        elif keep:
            recorded = keep.get("late_policy")
            policy = late_policy.from_table({key: recorded[key] for key in late_policy.KEYS},
                                            recorded.get("source", "run.json")) if recorded else None
        else:
            policy = late_policy.from_pyproject(locations.REPO_ROOT / "pyproject.toml")
    except TermsError as exc:
        raise UsageError(exc.render(staff_language(args))) from None
    return policy if spec is not None else None


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
    seed = args.seed
    if seed is None and args.only and previous:
        seed = previous.get("seed")
    seed = new_seed() if seed is None else int(seed)
    lang = args.lang or ((previous or {}).get("lang") if args.only else None)

    keep = previous if (args.only and previous) else None
    spec, extensions = run_deadline(args, keep, chosen, students)
    policy = run_late_policy(args, keep, spec)
    if spec is not None:
        spec.late = policy
    grader = grader_identity()
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
    for key, value in (("extensions", extensions), ("late_policy", policy.describe() if policy else None)):
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
    warnings = []
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
                                grader=grader,
                                clean_process=judge_process, meanwhile=meanwhile)
        except BatchInterrupted as exc:
            entries, interrupted = exc.entries, True
            warnings.append("the batch was interrupted: students marked 'crashed' with reason "
                            "'interrupted' were not graded (re-grade them with --only)")
    manifest["warnings"] = (manifest.get("warnings", []) if keep else []) + warnings
    for warning in warnings:  # may name students: shown escaped
        print(terminal_line(f"grade-many: warning: {warning}"), file=sys.stderr)
    manifest["students"] = entries
    manifest["finished"] = _now()
    if "isolation" in info:
        manifest["isolation"] = info["isolation"]
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
        warnings.append(f"the similarity check failed: {type(exc).__name__}: {exc}")
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
        print(terminal_line(f"merge-scores: warning: {warning}"), file=sys.stderr)
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
