"""Reading a record back (``--show``): the chapter's 5.3 summary lines, which a run also prints,
and a PNG chart of step times and peak memory beside the record (when matplotlib is installed)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from amp_lab_common import EXIT_OK, LabError
from amp_lab_layout import PATH_NAMES
from amp_lab_text import text


def format_ms(value) -> str:
    return text("not_completed") if value is None else f"{value:.2f} ms"


def format_mb(value) -> str:
    return "n/a MB" if value is None else f"{value:.1f} MB"


def summary_lines(record: dict) -> list[str]:
    """The chapter's 5.3 read-out, plus memory change, throughput and MFU."""
    base, cand, over = (record["metrics"][key] for key in PATH_NAMES)
    delta = cand["parameter_delta_max"]
    lines = [
        text("summary_fp32", median=format_ms(base["step_median_ms"]), p95=format_ms(base["step_p95_ms"]),
             peak=format_mb(base["peak_allocated_mb"]), applied=base["step_applied"]),
        text("summary_amp", median=format_ms(cand["step_median_ms"]), p95=format_ms(cand["step_p95_ms"]),
             peak=format_mb(cand["peak_allocated_mb"]), applied=cand["step_applied"],
             backoffs=cand["scale_backoff_steps"]),
        text("summary_overflow", applied=over["step_applied"], before=over["scale_before"],
             after=over["scale_after"]),
        text("summary_probe", probe=cand["probe_parameter"], delta="n/a" if delta is None else format(delta, ".3e")),
        text("summary_decision", decision=record["decision"], evidence=record["evidence_level"]),
    ]
    if base["peak_allocated_mb"] and cand["peak_allocated_mb"] is not None:
        change = (cand["peak_allocated_mb"] - base["peak_allocated_mb"]) / base["peak_allocated_mb"]
        lines.append(text("summary_memory", change=f"{change:+.1%}"))
    throughput = [
        f"{name} {path['tokens_per_second']:.0f} tok/s"
        + (f" ({path['achieved_tflops']:.3g} TFLOP/s)" if path.get("achieved_tflops") is not None else "")
        for name, path in (("FP32", base), ("AMP", cand))
        if path.get("tokens_per_second") is not None
    ]
    if throughput:
        lines.append(text("summary_throughput", items=", ".join(throughput)))
    mfu = [f"{name} {path['mfu']:.2%} ({path['model_tflops']:.3g} / {path['peak_tflops']:g} TFLOP/s"
           f" {path['peak_kind']})"
           for name, path in (("FP32", base), ("AMP", cand)) if path.get("mfu") is not None]
    if mfu:
        gpu = (record.get("measurement") or {}).get("peak_gpu") or record["hardware"].get("name")
        lines.append(text("summary_mfu", gpu=gpu, items=", ".join(mfu)))
    return lines


def load_record_for_show(path: Path) -> dict:
    if not path.is_file():
        raise LabError(text("record_not_found", path=path))
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        for key in PATH_NAMES:
            record["metrics"][key]["step_median_ms"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabError(text("record_not_json", path=path, error=exc)) from None
    except (KeyError, TypeError):
        raise LabError(text("record_not_lab", path=path)) from None
    return record


def render_chart(record: dict, png_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base, cand = record["metrics"]["baseline"], record["metrics"]["candidate"]
    names = ["FP32", f"AMP ({record['workload'].get('candidate_dtype', '?')})"]
    fig, (time_ax, memory_ax) = plt.subplots(1, 2, figsize=(10, 4.2))

    samples = [base.get("step_times_ms") or [], cand.get("step_times_ms") or []]
    if all(samples):
        time_ax.boxplot(samples, whis=(0, 100), showfliers=False)
        for position, (values, path) in enumerate(zip(samples, (base, cand)), start=1):
            offsets = [position + 0.06 * ((index % 5) - 2) for index in range(len(values))]
            time_ax.scatter(offsets, values, s=10, alpha=0.6, color="tab:gray", zorder=3)
            time_ax.scatter([position + 0.3], [path["step_p95_ms"]], marker="<", color="tab:red",
                            zorder=4, label="P95 (nearest rank)" if position == 1 else None)
        time_ax.set_xticks([1, 2], names)
        time_ax.legend(loc="best")  # wherever it hides the fewest points
        time_ax.set_title("step time per measured update\n(box: quartiles, whiskers: min-max)")
    else:  # records without per-step times (e.g. the chapter's) still show median and P95
        xs = range(len(names))
        medians = [path["step_median_ms"] or 0.0 for path in (base, cand)]
        p95s = [path["step_p95_ms"] or 0.0 for path in (base, cand)]
        time_ax.bar([x - 0.2 for x in xs], medians, width=0.4, label="median")
        time_ax.bar([x + 0.2 for x in xs], p95s, width=0.4, label="P95")
        time_ax.set_xticks(list(xs), names)
        time_ax.legend(loc="lower center")
        time_ax.set_title("step time (median and P95)")
    time_ax.set_ylabel("ms")

    peaks = [base["peak_allocated_mb"], cand["peak_allocated_mb"]]
    if None in peaks:
        memory_ax.text(0.5, 0.5, "peak memory not measured\n(no CUDA allocator on this run)",
                       ha="center", va="center", transform=memory_ax.transAxes)
        memory_ax.set_xticks([])
        memory_ax.set_yticks([])
    else:
        bars = memory_ax.bar(names, peaks, color=["tab:blue", "tab:orange"])
        memory_ax.bar_label(bars, fmt="%.0f MB")
        memory_ax.margins(y=0.1)  # room above the tallest bar for its label
        memory_ax.set_ylabel("MiB (max_memory_allocated)")
    memory_ax.set_title("peak allocated memory")

    hardware = record.get("hardware", {})
    fig.suptitle(
        f"{record.get('run_label')} on {hardware.get('name')} ({hardware.get('device')}) -- "
        f"decision {record.get('decision')}"
    )
    fig.tight_layout()
    fig.savefig(png_path, dpi=120)
    plt.close(fig)


def show_record(path: Path) -> int:
    record = load_record_for_show(path)
    try:
        lines = summary_lines(record)
    except (KeyError, TypeError) as exc:
        raise LabError(text("record_incomplete", path=path, key=exc)) from None
    print("\n".join(lines))
    if importlib.util.find_spec("matplotlib") is None:
        print(text("chart_skipped"))
        return EXIT_OK
    png_path = path.with_suffix(".png")
    try:
        render_chart(record, png_path)
    except OSError as exc:
        raise LabError(text("chart_unwritable", path=png_path, error=exc)) from None
    print(text("chart_written", path=png_path))
    return EXIT_OK
