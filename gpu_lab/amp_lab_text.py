"""The lab's words, in English and Chinese, chosen by the grader's switch.

The lab is standalone (a student may copy ``gpu_lab/`` to a GPU machine without the grader), so it
keeps this small table instead of importing the grader's catalogs. The language is chosen as
the grader chooses it: ``--lang``, else the ``AUTOGRADER_LANG`` environment variable, else
``[tool.autograder] lang`` in the ``pyproject.toml`` of the folder the lab runs from (or of the
repository that holds ``gpu_lab/``), else English.

Record contents stay English whatever the language: a record is data that staff and the
checker read.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

ENV_VAR = "AUTOGRADER_LANG"
DEFAULT_LANGUAGE = "en"
_current = [DEFAULT_LANGUAGE]

# key: (English, Chinese). Placeholders are str.format fields, the same in both.
MESSAGES = {
    # ---- errors (one line on stderr, no traceback)
    "error_prefix": ("amp_backward_lab: error: {message}", "amp_backward_lab：错误：{message}"),
    "seq_len_too_small": ("--seq-len must be at least 2 (a causal LM loss needs a next token)",
                          "--seq-len 至少为 2（因果语言模型的损失需要下一个词元）"),
    "repeats_too_small": ("--repeats must be at least 1", "--repeats 至少为 1"),
    "unsafe_label": ("--run-label {label} is not a safe file name part; use letters, digits, '.', '_' "
                     "or '-'",
                     "--run-label {label} 不能用作文件名的一部分：只能用字母、数字、“.”、“_”或“-”"),
    "torch_missing": ("PyTorch is not installed; run: pip install -r requirements.txt",
                      "没有安装 PyTorch；请运行：pip install -r requirements.txt"),
    "transformers_missing": (
        "the lab needs the transformers package, which the grader does not install; install the "
        "lab's own requirements: pip install -r gpu_lab/requirements.txt",
        "实验需要 transformers 包，评分器不会安装它；请安装实验自己的依赖："
        "pip install -r gpu_lab/requirements.txt"),
    "cuda_missing": (
        "CUDA is not available (torch {torch}, CUDA build {cuda}); real_gpu needs an NVIDIA GPU. "
        "Without one use --run-mode cpu_smoke or dry_run.",
        "CUDA 不可用（torch {torch}，CUDA 版本 {cuda}）；real_gpu 需要 NVIDIA GPU。"
        "没有 GPU 时请用 --run-mode cpu_smoke 或 dry_run。"),
    "no_bf16": ("this GPU does not support bfloat16; run the candidate with --candidate-dtype float16",
                "这块 GPU 不支持 bfloat16；请用 --candidate-dtype float16 运行候选路径"),
    "oom_fallback": ("CUDA ran out of memory in the {path} path at seq_len {seq_len}; re-run with "
                     "--seq-len {fallback} (the chapter's fallback) and a new --run-label",
                     "{path} 路径在 seq_len {seq_len} 时显存不足；请用 --seq-len {fallback}"
                     "（本章的降级方案）和新的 --run-label 重新运行"),
    "oom_too_small": ("CUDA ran out of memory in the {path} path at seq_len {seq_len}; this GPU is too "
                      "small for the lab even at the fallback length; use a larger GPU",
                      "{path} 路径在 seq_len {seq_len} 时显存不足；即使用降级长度，这块 GPU 也放不下"
                      "本实验，请换一块显存更大的 GPU"),
    "folder_hint": (
        "point --model-path at the folder holding config.json, the weights (*.safetensors) and the "
        "tokenizer files, as `modelscope download --model Qwen/Qwen2.5-0.5B --local_dir DIR` or "
        "`hf download Qwen/Qwen2.5-0.5B --local-dir DIR` writes it",
        "--model-path 应指向含有 config.json、权重（*.safetensors）和分词器文件的文件夹，即 "
        "`modelscope download --model Qwen/Qwen2.5-0.5B --local_dir DIR` 或 "
        "`hf download Qwen/Qwen2.5-0.5B --local-dir DIR` 写出的文件夹"),
    "hint_offline": ("--local-files-only needs the model in the Hugging Face cache: run once online first",
                     "--local-files-only 要求模型已在 Hugging Face 缓存中：请先联网运行一次"),
    "hint_online": (
        "check the network, the revision and HF_ENDPOINT/HF_TOKEN (a mirror: "
        "HF_ENDPOINT=https://hf-mirror.com), use --local-files-only after a first download, or "
        "download the checkpoint elsewhere and pass --model-path DIR",
        "请检查网络、版本号以及 HF_ENDPOINT/HF_TOKEN（镜像：HF_ENDPOINT=https://hf-mirror.com）；"
        "首次下载后可用 --local-files-only；也可以在别处下载检查点，再传 --model-path DIR"),
    "load_failed": ("could not load {model}: {error} ({hint})", "无法加载 {model}：{error}（{hint}）"),
    "local_load_failed": ("could not load the checkpoint in {path}: {error} ({hint})",
                          "无法加载 {path} 中的检查点：{error}（{hint}）"),
    "package_missing": ("a required package is missing ({error}); install the lab's requirements: "
                        "pip install -r gpu_lab/requirements.txt",
                        "缺少必需的包（{error}）；请安装实验的依赖：pip install -r gpu_lab/requirements.txt"),
    "path_no_folder": ("--model-path {path}: no such folder ({hint})",
                       "--model-path {path}：没有这个文件夹（{hint}）"),
    "path_no_config": ("--model-path {path}: no config.json in it ({hint})",
                       "--model-path {path}：其中没有 config.json（{hint}）"),
    "config_unreadable": ("{path}: config.json is not readable JSON ({error})",
                          "{path}：config.json 不是可读的 JSON（{error}）"),
    "config_not_object": ("{path}: config.json is not a JSON object", "{path}：config.json 不是 JSON 对象"),
    "path_no_weights": ("--model-path {path}: no weight files (*.safetensors, *.bin) in it ({hint})",
                        "--model-path {path}：其中没有权重文件（*.safetensors、*.bin）（{hint}）"),
    "empty_tokenizer": ("--model-path {path}: its tokenizer encodes the prompt to zero tokens, so the "
                        "tokenizer files are missing ({hint})",
                        "--model-path {path}：它的分词器把提示词编码成零个词元，说明缺少分词器文件（{hint}）"),
    "empty_prompt": ("a prompt encodes to zero tokens; the workload prompts must not be empty",
                     "有提示词被编码成零个词元；工作负载的提示词不能为空"),
    "no_probe": ("the model has no trainable parameter ending in {suffix}",
                 "模型中没有名字以 {suffix} 结尾的可训练参数"),
    "record_exists": ("{path} already exists; keep old evidence and pick a new --run-label (or pass "
                      "--overwrite)",
                      "{path} 已经存在；请保留旧的证据，换一个新的 --run-label（或加 --overwrite）"),
    "revision_with_path": ("--model-revision selects a version of the hub model; a --model-path folder "
                           "has only the version it holds: drop one of the two",
                           "--model-revision 用来选择模型仓库中的版本，而 --model-path 文件夹只有它自己"
                           "那一个版本：两者只能留一个"),
    "config_only_conflict": ("--config-only builds the model from its architecture alone; it takes no "
                             "{option}: drop one of the two",
                             "--config-only 只用架构构建模型，不接受 {option}：两者只能留一个"),
    "config_only_unknown": ("--config-only {value}: expected {builtin} or a config.json file",
                            "--config-only {value}：应为 {builtin} 或一个 config.json 文件"),
    "config_only_not_qwen2": ("{path}: config.json has model_type {value}; --config-only builds Qwen2 "
                              "models",
                              "{path}：config.json 的 model_type 是 {value}；--config-only 只构建 Qwen2 模型"),
    "record_not_found": ("record not found: {path} (run the lab first, e.g. --run-mode cpu_smoke)",
                         "找不到记录：{path}（请先运行实验，例如 --run-mode cpu_smoke）"),
    "record_not_json": ("cannot read {path} as JSON: {error}", "无法把 {path} 读成 JSON：{error}"),
    "record_not_lab": ("{path} is not a lab record (metrics.baseline/candidate/overflow missing)",
                       "{path} 不是实验记录（缺少 metrics.baseline/candidate/overflow）"),
    "record_incomplete": ("{path} is not a complete lab record (missing {key})",
                          "{path} 不是完整的实验记录（缺少 {key}）"),
    "chart_unwritable": ("cannot write the chart {path}: {error}", "无法写出图表 {path}：{error}"),
    # ---- progress and results
    "running_path": ("running {path} path ...", "正在运行 {path} 路径……"),
    "full_model_on_cpu": ("note: the full-size model on the CPU takes minutes; a tiny config.json "
                          "(--config-only FILE) rehearses the same code in seconds",
                          "提示：在 CPU 上跑完整大小的模型需要几分钟；用一个小的 config.json"
                          "（--config-only FILE）几秒钟就能演练同一段代码"),
    "record_written": ("record written: {path}", "记录已写入：{path}"),
    "config_only_notice": ("this record benchmarks the architecture with random weights: it is valid "
                           "evidence of time, memory and the update semantics, and earns no credit",
                           "这份记录用随机权重测的是模型架构：它是步时、显存和更新语义的有效证据，"
                           "但不计入加分"),
    "summary_fp32": ("FP32: median={median}, p95={p95}, {peak}, update={applied}",
                     "FP32：中位数={median}，p95={p95}，峰值显存 {peak}，更新={applied}"),
    "summary_amp": ("AMP:  median={median}, p95={p95}, {peak}, update={applied}, backoff={backoffs}",
                    "AMP：中位数={median}，p95={p95}，峰值显存 {peak}，更新={applied}，回退={backoffs}"),
    "summary_overflow": ("overflow: step={applied}, scale={before} -> {after}",
                         "溢出注入：更新={applied}，损失缩放 {before} -> {after}"),
    "summary_probe": ("probe={probe} | delta={delta}", "探针参数={probe} | 变化量={delta}"),
    "summary_decision": ("decision={decision} | evidence={evidence}", "结论={decision} | 证据={evidence}"),
    "summary_memory": ("peak memory change AMP vs FP32: {change}", "AMP 相对 FP32 的峰值显存变化：{change}"),
    "summary_throughput": ("throughput: {items}", "吞吐量：{items}"),
    "summary_mfu": ("MFU (model FLOPs incl. attention / {gpu} dense peak): {items}",
                    "MFU（含注意力的模型 FLOPs / {gpu} 的稠密峰值）：{items}"),
    "not_completed": ("not completed", "未完成"),
    "chart_skipped": ("chart skipped: matplotlib is not installed (pip install matplotlib)",
                      "未画图：没有安装 matplotlib（pip install matplotlib）"),
    "chart_written": ("chart written: {path}", "图表已写入：{path}"),
    # ---- dry run (the plan)
    "plan_title": ("AMP backward lab -- dry run: nothing is loaded, nothing is written.",
                   "混合精度反向传播实验：试运行，不加载任何东西，也不写任何文件。"),
    "plan_model_local": ("  model      local folder {path}, recorded as {model} (no download; weights: "
                         "{weights})",
                         "  模型       本地文件夹 {path}，记录为 {model}（不下载；权重：{weights}）"),
    "plan_model_hub": ("  model      {model} @ {revision} (resolved to an immutable commit at run time; "
                       "offline: {offline})",
                       "  模型       {model} @ {revision}（运行时解析为不可变的提交；离线：{offline}）"),
    "plan_hub": ("  hub        {endpoint}; or --model-path DIR for a checkpoint downloaded elsewhere",
                 "  模型仓库   {endpoint}；也可以用 --model-path DIR 指向在别处下载的检查点"),
    "plan_hub_default": ("https://huggingface.co (set HF_ENDPOINT for a mirror)",
                         "https://huggingface.co（用 HF_ENDPOINT 设置镜像）"),
    "plan_model_config": ("  model      architecture of {model} from {source}, random weights (seed "
                          "{seed}), token ids drawn from the seed: no download, no tokenizer, no credit",
                          "  模型       {model} 的架构（来自 {source}），随机权重（种子 {seed}），"
                          "词元 id 由种子随机生成：不下载、不用分词器、不计入加分"),
    "plan_batch": ("  batch      batch {batch} x seq_len {seq_len} tokens, prompt repeated to fill; "
                   "seed {seed}",
                   "  批次       batch {batch} x seq_len {seq_len} 个词元，重复提示词填满；种子 {seed}"),
    "plan_updates": ("  updates    SGD lr {lr}, clip_grad_norm_ {clip}, {warmup} warm-up + {repeats} "
                     "measured, up to {backoffs} backoff attempts",
                     "  更新       SGD lr {lr}，clip_grad_norm_ {clip}，预热 {warmup} 次 + 计时 {repeats} "
                     "次，最多回退 {backoffs} 次"),
    "plan_scaler_fp16": ("GradScaler(init {init}, backoff {backoff}, growth interval {interval})",
                         "GradScaler（初始缩放 {init}，回退因子 {backoff}，增长间隔 {interval}）"),
    "plan_scaler_bf16": ("no GradScaler (BF16 keeps FP32's exponent range)",
                         "不用 GradScaler（BF16 保留了 FP32 的指数范围）"),
    "plan_paths": ("  paths      fp32 baseline | amp {dtype} with {scaler} | overflow: float16 + "
                   "GradScaler, loss * inf, 1 attempt",
                   "  路径       fp32 基线 | amp {dtype}，{scaler} | 溢出注入：float16 + GradScaler，"
                   "loss * inf，尝试 1 次"),
    "plan_gate": ("  gate       FP32 and AMP measured, finite and applied; overflow not applied and "
                  "scale backed off",
                  "  门槛       FP32 和 AMP 都完成计时、梯度有限并已更新；溢出注入跳过更新且损失缩放回退"),
    "plan_record": ("  record     {path} (exists: {exists})", "  记录       {path}（已存在：{exists}）"),
    "plan_packages": ("  packages   torch {torch}, transformers {transformers} (neither is imported in "
                      "dry_run)",
                      "  依赖包     torch {torch}，transformers {transformers}（试运行不导入它们）"),
    "plan_next": ("  next       --run-mode real_gpu --run-label <unique label>   (no GPU: --run-mode "
                  "cpu_smoke)",
                  "  下一步     --run-mode real_gpu --run-label <唯一标签>   （没有 GPU：--run-mode "
                  "cpu_smoke）"),
    "installed": ("installed", "已安装"),
    "not_installed": ("NOT installed (pip install -r gpu_lab/requirements.txt)",
                      "未安装（pip install -r gpu_lab/requirements.txt）"),
    "yes": ("yes", "是"),
    "no": ("no", "否"),
}


def check_language(value):
    value = (value or "").strip().lower().replace("_", "-")
    if value.startswith("zh"):
        return "zh"
    if value.startswith("en"):
        return "en"
    return None


def configured_language(folder) -> str | None:
    """``[tool.autograder] lang`` of ``folder/pyproject.toml``; None if unset or unreadable."""
    try:
        content = Path(folder, "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    # A scan instead of tomllib: Python 3.10 has no tomllib, and one key is all the lab reads.
    section = re.search(r"^\[tool\.autograder\]\s*$(.*?)(?=^\[|\Z)", content, re.MULTILINE | re.DOTALL)
    found = section and re.search(r"^\s*lang\s*=\s*[\"']([^\"']+)", section.group(1), re.MULTILINE)
    return check_language(found.group(1)) if found else None


def resolve_language(option=None, environ=None) -> str:
    environ = os.environ if environ is None else environ
    for candidate in (option, environ.get(ENV_VAR)):
        chosen = check_language(candidate)
        if chosen:
            return chosen
    for folder in (Path.cwd(), Path(__file__).resolve().parent.parent):
        chosen = configured_language(folder)
        if chosen:
            return chosen
    return DEFAULT_LANGUAGE


def set_language(lang) -> None:
    _current[0] = check_language(lang) or DEFAULT_LANGUAGE


def language() -> str:
    return _current[0]


def text(key: str, **values) -> str:
    """The message ``key`` in the current language, its placeholders filled in."""
    english, chinese = MESSAGES[key]
    return (chinese if _current[0] == "zh" else english).format(**values)
