"""platform/configs.toml: the training configs and container settings that behave differently on
an Ascend NPU. `[[framework]]` rows say how a YAML or JSON file is recognised as a framework's
config (a row matches when the file's top-level keys include all of `all` and, where given, one
of `any`); `[[setting]]` rows name a key of such a config (a dotted path: `*` stands for any one
key, `-` for a sequence's item, a leading `**` any keys above it or none), the values that matter,
the other keys' values it needs (`also`: an absent key has the value it defaults to), and what
happens on the NPU. Every fact was read in a package's own files (the torch_npu 2.13.0 wheel,
transformers 4.50–4.56, bitsandbytes 0.50.2, the sources of accelerate 1.15.0.dev0,
LLaMA-Factory 0.9.6.dev0, audiocraft 1.3.0 and verl 0.9.1), in a public repository at a commit,
or in a plain statement of a project's documents."""

from __future__ import annotations

TRANSFORMERS = "transformers 4.56.0 wheel"
ACCELERATE = "huggingface/accelerate 1.15.0.dev0"
LLAMA_FACTORY = "hiyouga/LLaMA-Factory 0.9.6.dev0"
BNB = ("bitsandbytes 0.50.2 wheel: no NPU kernel for optimizer_update_8bit_blockwise (backends/{cuda,cpu,xpu}/ops.py "
       "only), paged optimizers call lib.cget_managed_ptr, a symbol of libbitsandbytes_cuda*.so alone")
BNB_FALLBACK = ("bitsandbytes 0.50.2 wheel: `npu` in supported_torch_devices (__init__.py:26-33), no NPU kernels, "
                "`default` (pure PyTorch) kernels for the int8 and 4-bit ops (backends/default/ops.py:38-345)")
INDUCTOR = ("torch_npu-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl: torch_npu/_inductor/__init__.py:52-53, "
            "136-141 (inductor for the npu device registered only when triton-ascend is installed)")
CHIPS = "mappings/platform/chips.toml (feature bf16)"
# Hydra configs: a device named as a plain string, which the project's code hands to torch
HYDRA = ("facebookresearch/hydra docs 1.3 (hydra.cc/docs/1.3/advanced/defaults_list: the Defaults List, a list at "
         "a config's top level)")
AUDIOCRAFT = ("facebookresearch/audiocraft 1.3.0 sdist: config/config.yaml:9 (`device: cuda`, which every solver "
              "config inherits), audiocraft/solvers/base.py:43 (`self.device = cfg.device`, where models and batches "
              "go), config/solver/musicgen/musicgen_base_32khz.yaml:45 (`optim.ema.device: cuda`)")
VERL = ("verl 0.9.1 sdist: verl/utils/device.py:151-166 (auto_set_device: `trainer.device` becomes the detected "
        "platform's device, `npu` on Ascend), called first by verl/trainer/main_ppo.py:174 and sft_trainer.py:464; "
        "the same in volcengine/verl 0.8.0.dev (verl/utils/device.py:145-162, main_ppo.py:43, "
        "fsdp_sft_trainer.py:846)")
TRAINING_KEYS = ["per_device_train_batch_size", "gradient_accumulation_steps", "learning_rate", "num_train_epochs",
                 "max_steps", "lr_scheduler_type", "warmup_ratio", "warmup_steps", "logging_steps", "save_steps",
                 "optim", "bf16", "fp16", "tf32", "ddp_backend", "half_precision_backend", "torch_compile"]
EIGHT_BIT_OPTIMIZERS = ["adamw_bnb_8bit", "adamw_8bit", "paged_adamw_8bit", "paged_adamw_32bit", "paged_adamw",
                        "lion_8bit", "paged_lion_8bit", "paged_lion_32bit", "paged_lion", "rmsprop_bnb_8bit",
                        "rmsprop_8bit", "paged_ademamix_8bit", "paged_ademamix_32bit", "ademamix_8bit"]

FRAMEWORKS = [
    {"name": "accelerate", "all": ["compute_environment"],
     "source": f"{ACCELERATE} commands/config/config_args.py (ClusterConfig's fields:`accelerate config` writes them)"},
    {"name": "accelerate", "all": ["distributed_type", "mixed_precision"],
     "source": f"{ACCELERATE} commands/config/config_args.py (ClusterConfig's fields:`accelerate config` writes them)"},
    *({"name": "deepspeed", "all": [key],
       "source": "DeepSpeed configuration JSON reference (deepspeed.ai/docs/config-json: batch size and ZeRO keys)"}
      for key in ("zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu")),
    {"name": "llamafactory", "all": ["stage", "finetuning_type"],
     "source": f"{LLAMA_FACTORY} src/llamafactory/hparams/finetuning_args.py"},
    {"name": "llamafactory", "all": ["model_name_or_path", "template"],
     "source": f"{LLAMA_FACTORY} src/llamafactory/hparams/model_args.py, data_args.py"},
    {"name": "training-args", "all": ["output_dir"], "any": TRAINING_KEYS,
     "source": f"{TRANSFORMERS}: transformers/training_args.py (TrainingArguments fields)"},
    {"name": "fine-tuning", "all": ["base_model"], "any": ["micro_batch_size", "gradient_accumulation_steps",
                                                          "num_epochs", "learning_rate", "datasets"],
     "source": "axolotl-style fine-tuning YAMLs (issue26-facts §4.5: their generic keys map onto transformers "
               "and bitsandbytes)"},
    {"name": "hydra", "all": ["defaults"], "source": HYDRA},
]

TRAINERS = ["training-args", "llamafactory", "fine-tuning"]

# FlashAttention-2 by the pinned transformers (NPU803), the same for LLaMA-Factory's key and transformers'
FLASH_ATTENTION_2 = {
    "note": "transformers routes FlashAttention-2 to torch_npu.npu_fusion_attention on the NPU from 4.51.0, "
            "but before 4.51.0 it raises ImportError (\"flash_attn seems to be not installed\") and from 4.54.0 "
            "to 4.55.2 it looks up the flash_attn distribution and raises PackageNotFoundError. Pin "
            "transformers>=4.55.3 (or 4.51–4.53), or use `sdpa`.",
    "replacement": "sdpa", "fix": "unsafe",
    "source": "transformers 4.50.0, 4.51.0, 4.53.0, 4.54.0, 4.55.0, 4.55.3 and 4.56.0 wheels: modeling_utils.py "
              "(_flash_attn_2_can_dispatch; 4.55.3: l.2487-2494); huggingface/transformers#39844"}

SETTINGS = [
    # accelerate (issue26-facts §4.1)
    {"frameworks": ["accelerate"], "key": "mixed_precision", "values": ["fp8"], "rule": "NPU801", "severity": "error",
     "note": "accelerate needs transformer_engine, MS-AMP or torchao for fp8 and raises \"Using fp8 precision "
             "requires transformer_engine or MS-AMP to be installed.\" otherwise; it has no NPU path, and no Ascend "
             "chip has FP8. Use bf16 (fp16 on 910A and 310P).",
     "replacement": "bf16", "fix": "unsafe",
     "source": f"{ACCELERATE} src/accelerate/state.py:930-934, utils/imports.py:187-189; mappings/platform/chips.toml "
               "(feature fp8)"},
    {"frameworks": ["accelerate"], "key": "enable_cpu_affinity", "values": ["true"], "rule": "NPU801",
     "severity": "info",
     "note": "accelerate sets the CPU affinity only under torch.cuda.is_available() (\"Currently only supported on "
             "NVIDIA hardware\"): on the NPU it does nothing.",
     "source": f"{ACCELERATE} src/accelerate/utils/environment.py:300-345, commands/config/cluster.py:706-713"},
    {"frameworks": ["accelerate"], "key": "dynamo_config.dynamo_backend", "values": ["inductor"], "rule": "NPU801",
     "severity": "info",
     "note": "torch_npu registers inductor for the NPU only when triton-ascend is installed (else it warns "
             "\"triton-ascend is not installed\"): install triton-ascend.", "source": INDUCTOR},
    # DeepSpeed (§4.2): bf16 on chips without it is NPU802; the accelerator maps the rest
    # LLaMA-Factory (§4.3)
    {"frameworks": ["llamafactory"], "key": "flash_attn", "values": ["fa3"], "rule": "NPU801", "severity": "warning",
     "note": "FlashAttention-3 has no NPU path: LLaMA-Factory warns \"FlashAttention-3 is not installed\" and falls "
             "back to the default attention. Use `fa2` (transformers routes it to torch_npu.npu_fusion_attention) "
             "or `sdpa`.",
     "source": f"{LLAMA_FACTORY} src/llamafactory/model/model_utils/attention.py:85-91"},
    {"frameworks": ["llamafactory"], "key": "quantization_bit", "values": ["4"], "rule": "NPU801",
     "severity": "warning", "also": {"double_quantization": "true", "quantization_method": "bnb"},
     "note": "LLaMA-Factory's NPU QLoRA recipe needs `double_quantization: false` (its default is true) and a "
             "bitsandbytes built from source.",
     "insert": "double_quantization: false", "fix": "unsafe",
     "source": f"{LLAMA_FACTORY} README.md:628-658, examples/train_qlora/qwen3_lora_sft_bnb_npu.yaml:3-5, "
               "src/llamafactory/hparams/model_args.py:279-294 (the defaults)"},
    {"frameworks": ["llamafactory"], "key": "quantization_bit", "values": ["8"], "rule": "NPU801",
     "severity": "warning", "also": {"quantization_method": "bnb"},
     "note": "bitsandbytes has no NPU kernel for int8: its generic PyTorch fallback runs instead, slowly.",
     "source": BNB_FALLBACK},
    {"frameworks": ["llamafactory"], "key": "fp8", "values": ["true"], "rule": "NPU801", "severity": "error",
     "note": "No Ascend chip has FP8, and its backends (torchao, Transformer Engine) are CUDA paths: use "
             "`bf16: true` instead.",
     "source": f"mappings/platform/chips.toml (feature fp8); {LLAMA_FACTORY} examples/extras/fp8/*.yaml"},
    {"frameworks": ["llamafactory"], "key": "enable_liger_kernel", "values": ["true"], "rule": "NPU801",
     "severity": "info",
     "note": "Liger kernels are Triton kernels: on the NPU they need triton-ascend, and LLaMA-Factory leaves out "
             "swiglu and fused_linear_cross_entropy unless the device is an Ascend910.",
     "source": f"{LLAMA_FACTORY} src/llamafactory/model/model_utils/liger_kernel.py:103-107"},
    # transformers TrainingArguments (§4.4), which LLaMA-Factory and the fine-tuning YAMLs pass on
    {"frameworks": TRAINERS, "key": "tf32", "values": ["true"], "rule": "NPU801", "severity": "error",
     "note": "transformers raises \"--tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7\" without "
             "CUDA. The NPU's counterpart is HF32 (torch.npu.matmul.allow_hf32).",
     "replacement": "false", "fix": "safe",
     "source": f"{TRANSFORMERS}: transformers/training_args.py:1853-1859, utils/import_utils.py:716-726"},
    {"frameworks": TRAINERS, "key": "optim", "values": EIGHT_BIT_OPTIMIZERS, "rule": "NPU801", "severity": "error",
     "note": "bitsandbytes' 8-bit and paged optimizers have no NPU path. Use `adamw_torch` "
             "(or `adamw_torch_fused`, `adamw_torch_npu_fused`).",
     "replacement": "adamw_torch", "fix": "unsafe", "source": BNB},
    {"frameworks": ["fine-tuning"], "key": "optimizer", "values": EIGHT_BIT_OPTIMIZERS, "rule": "NPU801",
     "severity": "error",
     "note": "bitsandbytes' 8-bit and paged optimizers have no NPU path. Use `adamw_torch`.",
     "replacement": "adamw_torch", "fix": "unsafe", "source": BNB},
    {"frameworks": TRAINERS, "key": "optim", "values": ["adamw_apex_fused"], "rule": "NPU801", "severity": "error",
     "note": "transformers imports apex.optimizers.FusedAdam, NVIDIA's CUDA build, for it. transformers 4.56 has "
             "`adamw_torch_npu_fused` (torch_npu.optim.NpuFusedAdamW).",
     "replacement": "adamw_torch_npu_fused", "fix": "unsafe",
     "source": f"{TRANSFORMERS}: transformers/trainer.py:1518-1529, training_args.py:154-155"},
    {"frameworks": TRAINERS, "key": "half_precision_backend", "values": ["apex"], "rule": "NPU801",
     "severity": "error", "note": "The apex backend needs NVIDIA's apex; `auto` uses torch.amp.",
     "replacement": "auto", "fix": "unsafe", "source": f"{TRANSFORMERS}: transformers/training_args.py:1094"},
    {"frameworks": TRAINERS, "key": "ddp_backend", "values": ["nccl"], "rule": "NPU801", "severity": "info",
     "note": "accelerate runs HCCL on the NPU whatever this says; `hccl` says so.",
     "replacement": "hccl", "fix": "safe",
     "source": f"{ACCELERATE} src/accelerate/state.py:779-783; {TRANSFORMERS}: transformers/training_args.py:1124-1128"},
    {"frameworks": TRAINERS, "key": "torch_compile", "values": ["true"], "rule": "NPU801", "severity": "info",
     "note": "torch.compile's default backend, inductor, works on the NPU only with triton-ascend installed.",
     "source": INDUCTOR},
    {"frameworks": ["fine-tuning"], "key": "load_in_8bit", "values": ["true"], "rule": "NPU801",
     "severity": "warning",
     "note": "bitsandbytes has no NPU kernel for int8: its generic PyTorch fallback runs instead, slowly.",
     "source": BNB_FALLBACK},
    {"frameworks": ["fine-tuning"], "key": "load_in_4bit", "values": ["true"], "rule": "NPU801",
     "severity": "warning",
     "note": "bitsandbytes has no NPU kernel for 4-bit: its generic PyTorch fallback runs instead, slowly.",
     "source": BNB_FALLBACK},
    # Hydra configs (the project's own training configs): `trainer.device` is verl's, which verl switches itself
    {"frameworks": ["hydra"], "key": "trainer.device", "values": ["cuda"], "rule": "NPU801", "severity": "info",
     "note": "verl sets `trainer.device` to the platform's device before it reads it (`npu` on an Ascend host, with a "
             "warning): `npu` says so.",
     "replacement": "npu", "fix": "safe", "source": VERL},
    {"frameworks": ["hydra"], "key": "**.device", "values": ["cuda"], "rule": "NPU801", "severity": "warning",
     "note": "The code that reads the config hands the device to torch, and on an NPU host (torch without CUDA) the "
             "first tensor moved there raises \"Torch not compiled with CUDA enabled\". Use `npu` (with torch_npu "
             "imported).",
     "replacement": "npu", "fix": "unsafe", "source": f"{AUDIOCRAFT}; {HYDRA}"},
    # bf16 on chips without it (NPU802)
    {"frameworks": TRAINERS, "key": "bf16", "values": ["true"], "rule": "NPU802", "severity": "error",
     "note": "transformers raises \"Your setup doesn't support bf16/gpu.\" where torch.npu.is_bf16_supported() is "
             "false. Use `fp16: true`.", "rename": "fp16", "fix": "unsafe",
     "source": f"{TRANSFORMERS}: transformers/training_args.py:1729-1739, utils/import_utils.py:637-638; {CHIPS}"},
    {"frameworks": ["deepspeed"], "key": "bf16.enabled", "values": ["true"], "rule": "NPU802", "severity": "error",
     "note": "DeepSpeed's NPU accelerator asks torch.npu.is_bf16_supported(), which is false on this chip. Use the "
             "`fp16` block.",
     "source": f"deepspeedai/DeepSpeed accelerator/npu_accelerator.py@8ba87d19 (is_bf16_supported); {CHIPS}"},
    {"frameworks": ["accelerate"], "key": "mixed_precision", "values": ["bf16"], "rule": "NPU802",
     "severity": "warning", "note": "This chip has no bf16. Use fp16.", "replacement": "fp16", "fix": "unsafe",
     "source": CHIPS},
    # flash attention 2 by the pinned transformers (NPU803)
    {"frameworks": ["llamafactory"], "key": "flash_attn", "values": ["fa2", "flash_attention_2"], "rule": "NPU803",
     "severity": "warning", "pin": "transformers", "broken": ["<4.51.0", ">=4.54.0,<=4.55.2"],
     **FLASH_ATTENTION_2},
    {"frameworks": TRAINERS, "key": "attn_implementation", "values": ["flash_attention_2"], "rule": "NPU803",
     "severity": "warning", "pin": "transformers", "broken": ["<4.51.0", ">=4.54.0,<=4.55.2"],
     **FLASH_ATTENTION_2},
]

# Compose files (recognised by their names) and `docker run`: the NVIDIA runtime's requests (NPU804)
ASCEND_DEVICES = ("An Ascend container gets its NPUs as devices instead: `/dev/davinci<N>` (one per NPU), "
                  "`/dev/davinci_manager`, `/dev/devmm_svm`, `/dev/hisi_hdc`, with the driver mounted from the host "
                  "(`/usr/local/dcmi`, `/usr/local/bin/npu-smi`, `/usr/local/Ascend/driver`, "
                  "`/etc/ascend_install.info`); or Ascend Docker Runtime with ASCEND_VISIBLE_DEVICES.")
DEVICES_SOURCE = (f"{LLAMA_FACTORY} docker/docker-npu/docker-compose.yml:8-24 (devices and mounts) against "
                  "docker/docker-cuda/docker-compose.yml:17-23; vLLM-Ascend installation docs (docker run --device)")
CONTAINER = [
    {"frameworks": ["compose"], "key": "services.*.runtime", "values": ["nvidia"], "rule": "NPU804",
     "severity": "error", "note": ASCEND_DEVICES, "source": DEVICES_SOURCE},
    {"frameworks": ["compose"], "key": "services.*.deploy.resources.reservations.devices.-.capabilities",
     "values": ["gpu"], "rule": "NPU804", "severity": "error", "note": ASCEND_DEVICES, "source": DEVICES_SOURCE},
]
SETTINGS += CONTAINER

# `docker run` (`docker container run`, `docker create`) options: `value` when only that value asks for it
DOCKER_OPTIONS = [
    {"option": "--gpus", "rule": "NPU804", "note": ASCEND_DEVICES, "source": DEVICES_SOURCE},
    {"option": "--runtime", "value": "nvidia", "rule": "NPU804", "note": ASCEND_DEVICES, "source": DEVICES_SOURCE},
]
