#!/usr/bin/env bash
# One prepared run of the lab on a GPU machine without network (staff; see gpu_lab/STAFF.md).
#
#   bash gpu_lab/gpu_run.sh OUTDIR              # on the GPU machine, from the repository root
#   bash gpu_lab/gpu_run.sh OUTDIR --rehearse   # the same steps on the CPU, in seconds
#
# It installs nothing from the network. transformers must import; where the machine's Python
# lacks it, wheels in LAB_WHEELS (default: .whl/ at the repository root, 64 MiB at most with the
# rest of the carried tree) are installed offline into a temporary folder. torch with CUDA is
# assumed present.
#
# Two lab runs, both --config-only qwen2.5-0.5b (the architecture with random weights: no hub
# is reachable), each with the chapter's workload (batch 1, seq 128, 20 repeats, seed 2026):
#   <prefix>-fp16: FP32 baseline, FP16 AMP candidate with GradScaler, injected overflow;
#   <prefix>-bf16: FP32 baseline, BF16 AMP candidate, injected overflow.
# Each run is bounded by LAB_RUN_TIMEOUT seconds (default 240), so the whole script ends well
# inside 10 minutes. OUTDIR receives the records, their charts, check-lab's verdicts and
# gpu_run.log (everything this script and the lab print).
#
# Environment: LAB_PYTHON (default python3), LAB_WHEELS, LAB_LABEL_PREFIX (default
# arch-<UTC date and time>), LAB_RUN_TIMEOUT.
set -uo pipefail

usage() { echo "usage: bash gpu_lab/gpu_run.sh OUTDIR [--rehearse]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
OUTDIR=$1
MODE=real_gpu
if [ $# -eq 2 ]; then
  [ "$2" = "--rehearse" ] || usage
  MODE=cpu_smoke
fi

REPO=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${LAB_PYTHON:-python3}
WHEELS=${LAB_WHEELS:-$REPO/.whl}
PREFIX=${LAB_LABEL_PREFIX:-arch-$(date -u +%Y%m%d-%H%M)}
RUN_TIMEOUT=${LAB_RUN_TIMEOUT:-240}
mkdir -p "$OUTDIR" || exit 2
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG="$OUTDIR/gpu_run.log"
exec > >(tee -a "$LOG") 2>&1
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

echo "== gpu_run.sh $MODE, $(date -u +%Y-%m-%dT%H:%M:%SZ), labels $PREFIX-fp16 / $PREFIX-bf16"
cd "$REPO" || exit 2

if ! "$PYTHON" -c "import transformers" 2>/dev/null; then
  shopt -s nullglob
  wheels=("$WHEELS"/*.whl)
  if [ ${#wheels[@]} -eq 0 ]; then
    echo "transformers does not import and no wheels are in $WHEELS: carry them (gpu_lab/STAFF.md)"
    exit 2
  fi
  echo "== installing ${#wheels[@]} carried wheel(s) offline into a temporary folder"
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SCRATCH/site" \
    "${wheels[@]}" || exit 2
  export PYTHONPATH="$SCRATCH/site${PYTHONPATH:+:$PYTHONPATH}"
fi

echo "== environment"
"$PYTHON" - <<'EOF'
import platform, torch, transformers
print("python", platform.python_version(), "| torch", torch.__version__, "| CUDA build", torch.version.cuda,
      "| transformers", transformers.__version__)
if torch.cuda.is_available():
    print("GPU", torch.cuda.get_device_name(0), "| capability", torch.cuda.get_device_capability(0),
          "| total MiB", round(torch.cuda.get_device_properties(0).total_memory / 2**20))
else:
    print("no CUDA device")
EOF
if [ "$MODE" = real_gpu ] && command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
fi

# The model: Qwen2.5-0.5B's architecture on the GPU; a tiny Qwen2 config in the rehearsal, so the
# same options and code run on a CPU in seconds.
workload=()
CONFIG=qwen2.5-0.5b
if [ "$MODE" = cpu_smoke ]; then
  CONFIG="$SCRATCH/tiny-qwen2.json"
  cat > "$CONFIG" <<'EOF'
{"model_type": "qwen2", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
 "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
 "max_position_embeddings": 128, "tie_word_embeddings": true, "rope_theta": 1000000.0,
 "rms_norm_eps": 1e-06}
EOF
  workload=(--seq-len 16 --repeats 2)
fi

status=0
for dtype in float16 bfloat16; do
  case $dtype in float16) label="$PREFIX-fp16" ;; *) label="$PREFIX-bf16" ;; esac
  echo "== lab: $MODE, candidate $dtype, label $label"
  timeout --kill-after=10 "$RUN_TIMEOUT" env PYTHONUNBUFFERED=1 "$PYTHON" gpu_lab/amp_backward_lab.py \
    --run-mode "$MODE" --config-only "$CONFIG" --candidate-dtype "$dtype" --run-label "$label" \
    --output-dir "$OUTDIR" --lang en "${workload[@]}"
  code=$?
  echo "== lab exit code $code ($label)"
  [ $code -eq 0 ] || status=1
  record="$OUTDIR/train-amp-backward_$label.json"
  if [ -f "$record" ]; then
    "$PYTHON" gpu_lab/amp_backward_lab.py --show "$record" --lang en || true
    # check-lab needs only the standard library in English; a failure here is logged, not fatal.
    "$PYTHON" -m autograder check-lab "$record" --lang en > "$OUTDIR/check-lab_$label.txt" 2>&1
    echo "== check-lab exit code $? ($label):"
    cat "$OUTDIR/check-lab_$label.txt"
  fi
done
echo "== done, status $status; files in $OUTDIR:"
ls -l "$OUTDIR"
exit $status
