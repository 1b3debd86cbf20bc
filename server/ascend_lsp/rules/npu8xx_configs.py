"""NPU8xx: run configurations — the settings a training framework or a container runtime reads.

The configs come from engine/config_files.py (accelerate, DeepSpeed, LLaMA-Factory, transformers'
TrainingArguments and fine-tuning YAMLs, recognised by their keys; compose files by their names),
`docker run` from launch scripts and Dockerfiles' RUN (engine/shell_script.py); the facts from
mappings/platform/configs.toml, one row per setting, read by one matcher.
"""

from __future__ import annotations

from ..engine.checker import Checker
from ..engine.config_files import ITEM, Config, Setting
from ..engine.model import Applicability, Edit, Fix, Range, Severity
from ..engine.registry import TableRef, handles, rule
from ..engine.shell_script import Assignment, Command, ShellScript
from ..engine.versions import overlap
from ..knowledge.platform import load_configs
from .chip_features import CHIP_TABLE, applies, chip_doc

TABLE = TableRef("mappings/platform/configs.toml", ("setting",))
RECOGNISED = ("A YAML or JSON file is read as a config when its top-level keys say whose it is (`[[framework]]` "
              "rows of mappings/platform/configs.toml): accelerate (`compute_environment`, or `distributed_type` with "
              "`mixed_precision`), DeepSpeed (`zero_optimization`, `train_batch_size` or "
              "`train_micro_batch_size_per_gpu`), LLaMA-Factory (`stage` with `finetuning_type`, or "
              "`model_name_or_path` with `template`), transformers' TrainingArguments (`output_dir` with a training "
              "key), fine-tuning YAMLs (`base_model` with a training key) and Hydra configs (a top-level `defaults` "
              "list); any other YAML or JSON is not read.")

rule(
    code="NPU801", name="config-setting-without-npu-path", severity=Severity.WARNING, fix="sometimes", table=TABLE,
    message="`{name}` does not carry over to an Ascend NPU as written.",
    doc=dict(
        what="Finds settings of training configs that fail, do nothing or fall back on an Ascend NPU: "
             "`mixed_precision: fp8` (accelerate), `fp8: true`, `flash_attn: fa3` and bitsandbytes quantisation "
             "(LLaMA-Factory), `tf32: true`, 8-bit and paged optimizers, `adamw_apex_fused`, "
             "`half_precision_backend: apex` (transformers' TrainingArguments, which LLaMA-Factory and fine-tuning "
             "YAMLs pass on), `load_in_8bit`/`load_in_4bit`, and as information settings that are harmless but "
             "say CUDA (`ddp_backend: nccl`) or need triton-ascend (inductor, Liger kernels); in Hydra configs, "
             "`device: cuda` at any depth (the project's code hands it to torch), as information under `trainer` "
             "(verl's key, which verl sets to `npu` itself). " + RECOGNISED,
        why="A config is read before any code runs: an fp8 mixed precision or `tf32: true` raises at start-up, "
            "a bitsandbytes 8-bit optimizer has no NPU kernel, an apex optimizer imports NVIDIA's build. "
            "Settings the facts show to work (`distributed_type: MULTI_GPU`, `gpu_ids`: accelerate maps them to "
            "the NPU) are not reported.",
        example="optim: paged_adamw_8bit  # NPU801\ntf32: true  # NPU801\n\n# becomes\n\noptim: adamw_torch\n"
                "tf32: false",
        fix="Safe: `tf32: true` → `false` (transformers then only leaves CUDA's flags alone), `ddp_backend: "
            "nccl` → `hccl` (accelerate runs HCCL anyway) and verl's `trainer.device: cuda` → `npu`. Unsafe: a Hydra "
            "config's `device: cuda` → `npu` (the code must import torch_npu), and as they change the numbers or "
            "the memory used, an 8-bit optimizer → `adamw_torch`, `adamw_apex_fused` → `adamw_torch_npu_fused`, "
            "`half_precision_backend: apex` → `auto`, `mixed_precision: fp8` → `bf16`, and LLaMA-Factory's 4-bit "
            "QLoRA gains `double_quantization: false`.",
        source="mappings/platform/configs.toml (each row's source: the transformers 4.56.0 and bitsandbytes 0.50.2 "
               "wheels, accelerate 1.15.0.dev0, LLaMA-Factory 0.9.6.dev0, audiocraft 1.3.0 and verl 0.9.1 sources, Hydra's "
               "documents, the torch_npu 2.13.0 wheel).",
    ),
)

rule(
    code="NPU802", name="config-bf16-on-chip", severity=Severity.ERROR, fix="sometimes", table=TABLE,
    message="`{name}` asks for bf16, which {chips} lack.",
    doc=dict(
        what="Finds bf16 switched on in a training config when the configured `chip` has no bf16: `bf16: true` "
             "(TrainingArguments, LLaMA-Factory, fine-tuning YAMLs), DeepSpeed's `\"bf16\": {\"enabled\": true}`, "
             "accelerate's `mixed_precision: bf16`. " + chip_doc("bf16"),
        why="transformers raises \"Your setup doesn't support bf16/gpu.\" where torch.npu.is_bf16_supported() is "
            "false, and DeepSpeed's NPU accelerator asks the same function.",
        example="# settings: chip=910A\nbf16: true  # NPU802\n\n# becomes\n\nfp16: true",
        fix="Unsafe (fp16 has a narrower range than bf16): `bf16` → `fp16`, accelerate's `bf16` → `fp16`.",
        source="transformers 4.56.0 wheel (training_args.py:1729-1739); DeepSpeed accelerator/npu_accelerator.py; "
               f"{CHIP_TABLE.path}.",
    ),
)

rule(
    code="NPU803", name="config-flash-attention-version", severity=Severity.WARNING, fix="sometimes", table=TABLE,
    message="`{name}` fails on the NPU with `{window}`, which the project's pin `{pin}` allows.",
    doc=dict(
        what="Finds FlashAttention-2 asked for in a config (`flash_attn: fa2` in LLaMA-Factory, "
             "`attn_implementation: flash_attention_2`) when the project pins transformers (requirements, "
             "pyproject.toml, setup.py, ...) to a range that allows a version where it fails on the NPU. Without a "
             "pin, or with one that excludes those versions, nothing is reported.",
        why="transformers routes FlashAttention-2 to torch_npu.npu_fusion_attention on the NPU, but before "
            "4.51.0 it raises ImportError and from 4.54.0 to 4.55.2 it looks up the flash_attn distribution and "
            "raises PackageNotFoundError (fixed by huggingface/transformers#39844 in 4.55.3).",
        example="# requirements.txt: transformers>=4.55.0\nflash_attn: fa2  # NPU803\n\n# becomes\n\n"
                "flash_attn: sdpa  # or pin transformers>=4.55.3",
        fix="Unsafe: the value becomes `sdpa` (another attention kernel); raising the pin keeps FlashAttention-2.",
        source="transformers 4.50.0–4.56.0 wheels (modeling_utils.py, _flash_attn_2_can_dispatch); "
               "mappings/platform/configs.toml.",
    ),
)

rule(
    code="NPU804", name="nvidia-container-runtime", severity=Severity.ERROR, fix="never",
    table=TableRef("mappings/platform/configs.toml", ("setting", "docker-option")),
    message="`{name}` asks the NVIDIA container runtime for GPUs.",
    doc=dict(
        what="Finds the NVIDIA runtime's requests: in compose files (`docker-compose*.yml`, `compose*.yaml`) "
             "`runtime: nvidia` and a device reservation with `capabilities: [gpu]`; in launch scripts and "
             "Dockerfiles' RUN, `docker run --gpus ...` and `--runtime=nvidia` (`docker create`, `docker container "
             "run` too; the options before the image only).",
        why="An Ascend host has no NVIDIA container runtime: the container does not start, or starts without "
            "its accelerators. Ascend's NPUs reach a container as devices with the driver mounted from the host.",
        example="docker run --gpus all -it img  # NPU804\n\n# on the NPU\n\ndocker run --device /dev/davinci0 "
                "--device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc \\\n"
                "  -v /usr/local/dcmi:/usr/local/dcmi -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi \\\n"
                "  -v /usr/local/Ascend/driver:/usr/local/Ascend/driver -v /etc/ascend_install.info:"
                "/etc/ascend_install.info -it img",
        fix="None automatic: the devices are one per NPU, and the mounts depend on the host.",
        source="hiyouga/LLaMA-Factory docker/docker-npu/docker-compose.yml (devices and mounts) against "
               "docker/docker-cuda/docker-compose.yml; vLLM-Ascend installation docs; mappings/platform/configs.toml.",
    ),
)

# docker run's boolean options (every other option takes a value, in its word or the next)
DOCKER_FLAGS = frozenset({"--rm", "--privileged", "--init", "--interactive", "--tty", "--detach", "--read-only",
                          "--publish-all", "--oom-kill-disable", "--no-healthcheck", "--quiet", "--help",
                          "--sig-proxy", "--use-api-socket"})
SHORT_FLAGS = frozenset("itdPq")
ANY_DEPTH = "**"  # a row's key that starts so names the key at any depth


def _key_matches(pattern: tuple[str, ...], keys: tuple[str, ...]) -> bool:
    """A row's key (`*`: any one key; a leading `**`: any keys above, or none) names these keys,
    or one item of the sequence they name."""
    if pattern[0] == ANY_DEPTH:
        return any(_key_matches(pattern[1:], keys[start:]) for start in range(len(keys)))
    if len(keys) == len(pattern) + 1 and keys[-1] == ITEM:
        keys = keys[:-1]
    return len(keys) == len(pattern) and all(p == "*" or p == k for p, k in zip(pattern, keys))


def _values(setting: Setting) -> list[str]:
    """The setting's value in lower case; a one-line flow sequence's items (`[gpu, utility]`)."""
    value = setting.value or ""
    if value.startswith("[") and not setting.quoted:
        return [item.strip().strip("'\"").lower() for item in value[1:-1].split(",")]
    return [value.lower()]


def _span(setting: Setting) -> Range:
    k, v = setting.key_range, setting.value_range or setting.key_range
    return Range(k.start_line, k.start_col, v.end_line, v.end_col)


def _inner(checker: Checker, where: Range) -> Range:
    """`where` without its quotes, if it is quoted."""
    if checker.source.line(where.start_line)[where.start_col:where.start_col + 1] in ("'", '"'):
        return Range(where.start_line, where.start_col + 1, where.end_line, where.end_col - 1)
    return where


def _fix(checker: Checker, row: dict, setting: Setting) -> Fix | None:
    if row.get("replacement") and setting.value_range is not None:
        edit = Edit(_inner(checker, setting.value_range), row["replacement"])
        title = f"Set `{setting.keys[-1]}` to `{row['replacement']}`"
    elif row.get("rename"):
        edit = Edit(_inner(checker, setting.key_range), row["rename"])
        title = f"Rename `{setting.keys[-1]}` to `{row['rename']}`"
    elif row.get("insert"):
        line = setting.key_range.end_line
        text = checker.source.lines[line]
        ending = text[len(text.rstrip("\r\n")):] or "\n"
        end = len(checker.source.line(line))
        indent = " " * setting.key_range.start_col
        edit = Edit(Range(line, end, line, end), ending + indent + row["insert"])
        title = f"Add `{row['insert']}`"
    else:
        return None
    return Fix(title, (edit,), Applicability(row["fix"]))


def _report(checker: Checker, row: dict, setting: Setting) -> None:
    code = row["rule"]
    pattern = row["key"].split(".")
    after = max((i for i, part in enumerate(pattern) if part in ("*", ITEM, ANY_DEPTH)), default=-1) + 1
    name = f"{'.'.join(pattern[after:])}: {setting.value}"  # the row's own keys (`bf16.enabled`, `runtime`)
    fmt: dict[str, str] = {"name": name}
    extra = {"note": row["note"], "source": row["source"]}
    if code == "NPU802":
        feature = applies(checker, "bf16")
        if feature is None:
            return
        fmt["chips"] = ", ".join(feature.chips)
        extra["chip"] = checker.settings.chip
    if row.get("pin"):
        pin = checker.project.pin(row["pin"]) if checker.project is not None else None
        window = overlap(pin, row["broken"]) if pin else None
        if window is None:
            return
        fmt.update(window=f"{row['pin']}{window}", pin=f"{row['pin']}{pin}")
    text = checker.rules[code].message.format(**fmt) + " " + row["note"]
    fix = _fix(checker, row, setting)
    checker.report(code, _span(setting), text, (fix,) if fix is not None else (), origin=TABLE.path,
                   severity=Severity.parse(row["severity"]), extra=extra)


def _also(config: Config, row: dict) -> bool:
    """The other keys have the values the row needs (an absent key has its default, the row's value)."""
    for key, wanted in row.get("also", {}).items():
        other = config.top(key)
        if other is not None and (other.value or "").lower() != wanted:
            return False
    return True


@handles("packaging", "NPU801", "NPU802", "NPU803", "NPU804")
def check_config(checker: Checker, item: object, items: list) -> None:
    """Each setting of a config against the rows of its frameworks, first row first."""
    if not isinstance(item, Config):
        return
    rows = [(tuple(row["key"].split(".")), row) for row in load_configs().settings
            if item.frameworks.intersection(row["frameworks"]) and row["rule"] in checker.active]
    for setting in item.settings:
        if setting.value is None:
            continue
        values = _values(setting)
        for pattern, row in rows:
            if _key_matches(pattern, setting.keys) and any(v in row["values"] for v in values) and _also(item, row):
                _report(checker, row, setting)
                break


@handles("launch", "NPU804")
def check_docker_run(checker: Checker, found: Assignment | Command, script: ShellScript) -> None:
    """`docker run` (`create`, `container run`) options before the image that ask for NVIDIA GPUs."""
    if not isinstance(found, Command) or found.program != "docker":
        return
    words = found.words[1:]
    if words and words[0].text == "container":
        words = words[1:]
    if not words or words[0].text not in ("run", "create"):
        return
    options = load_configs().docker_options
    index = 1
    while index < len(words):
        word = words[index].text
        if not word.startswith("-") or word == "--":
            return  # the image: what follows is the container's command
        option, sep, value = word.partition("=")
        takes_value = not sep and option not in DOCKER_FLAGS and not (
            not option.startswith("--") and set(option[1:]) <= SHORT_FLAGS)
        if takes_value and index + 1 < len(words):
            value = words[index + 1].text
        row = next((r for r in options if r["option"] == option and r.get("value", value) == value), None)
        if row is not None:
            end = words[index + 1] if takes_value and index + 1 < len(words) else words[index]
            start = words[index].range
            shown = f"{option} {value}" if takes_value else word
            checker.report("NPU804", Range(start.start_line, start.start_col, end.range.end_line, end.range.end_col),
                           checker.rules["NPU804"].message.format(name=shown) + " " + row["note"],
                           origin=TABLE.path, extra={"note": row["note"], "source": row["source"]})
        index += 2 if takes_value else 1
