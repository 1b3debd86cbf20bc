"""Hypothesis strategies shared by the engine and fix properties: text built from code
that the rules fire on, mixed with noise and every line break and near-break there is."""

from __future__ import annotations

from hypothesis import strategies as st

FRAGMENTS = (
    "import torch", "import torch_npu", "import os", "import torch.distributed as dist",
    "from torch.cuda.amp import autocast, GradScaler", "import apex", "from flash_attn import flash_attn_func",
    "x = torch.ones(2).cuda()", "torch.cuda.synchronize()", 'device = torch.device("cuda:0")', 'y = x.to("cuda")',
    'if x.device.type == "cuda":\n    pass', "torch.backends.cudnn.benchmark = True",
    "torch.backends.cuda.matmul.allow_tf32 = True", 'os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
    'dist.init_process_group(backend="nccl")', "model = torch.nn.DataParallel(model)", '__all__ = ["cuda"]',
    "def f(x):\n    return x.cuda(non_blocking=True)", 'class A:\n    CUDA = "cuda"\n    CPU = "cpu"',
    'label = "中文🚀"; dev = "cuda"  # 设备 🚀', "scaler = torch.cuda.amp.GradScaler()", "x = x.double()",
    "n = torch.cuda.device_count()  # noqa: NPU103", 'kernels = {"cuda": 1, "rocm": 2}',
    "if x.is_cuda:\n    x = x.cpu()",
    'torch.load("m.pt", map_location="cuda:0")', "with torch.autocast(device_type='cuda'):\n    pass",
    'f"cuda:{rank}"', '"""doc with cuda\n and a second line"""', "x = (", ")", "def g(:", "    return 1",
    "\tif True:", "lambda: torch.cuda.current_device()", "@torch.jit.script\ndef h(x):\n    return x",
)
BREAKS = ("\n", "\n", "\n", "\r\n", "\r", "\x0c", "\x0b", "\u2028", "\u2029", "\x85", "\x1c", "\0", " ", "\t", "")
NOISE = st.text(st.sampled_from("abcx_(): =.,'\"#\\[]{}0123456789中🚀\r\n\x0c\t\0\u2028é"), max_size=12)

texts = st.lists(st.tuples(st.one_of(st.sampled_from(FRAGMENTS), NOISE), st.sampled_from(BREAKS)), max_size=14).map(
    lambda parts: "".join(a + b for a, b in parts))
programs = st.lists(st.sampled_from(FRAGMENTS[:30]), min_size=1, max_size=12).map(lambda lines: "\n".join(lines) + "\n")

# Launch scripts: the shell that engine/shell_script.py reads, and what breaks it mid-typing.
SHELL_FRAGMENTS = (
    "#!/bin/bash", "export CUDA_VISIBLE_DEVICES=0,1 NCCL_DEBUG=INFO", 'CUDA_VISIBLE_DEVICES="" python t.py',
    "env -u HOME NCCL_SOCKET_IFNAME=eth0 torchrun \\", "  --nproc_per_node=8 train.py", "N=$(nvidia-smi -L | wc -l)",
    "`nvcc -V`", "cat <<EOF", "cat <<-'END'", "EOF", "\tEND", "pip install 'flash-attn==2.5.8' torch==2.1.0+cu121",
    "sudo -u me nvidia-smi --query-gpu=name --format=csv", "export DS_ACCELERATOR=cuda  # noqa: NPU127",
    "if [ -n \"$X\" ]; then nvidia-smi; fi", "echo '中文🚀' \"$(", ")", "'", '"', "\\", "${X:-", "<<",
)
shell_texts = st.lists(st.tuples(st.one_of(st.sampled_from(SHELL_FRAGMENTS), NOISE), st.sampled_from(BREAKS)),
                       max_size=14).map(lambda parts: "".join(a + b for a, b in parts))
