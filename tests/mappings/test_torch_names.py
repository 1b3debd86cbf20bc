"""Check the tables' torch names against the installed torch (2.13)."""

from __future__ import annotations

import os
import tomllib
import warnings
from pathlib import Path

import pytest
from installed import exists  # mappings/build/installed.py: the one resolver

pytestmark = pytest.mark.torch

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")  # a real torch_npu must not load here
torch = pytest.importorskip("torch")

TABLES = Path(__file__).resolve().parents[2] / "mappings" / "torch_npu"

# replacements that torch_npu adds to torch's own namespaces (so plain torch lacks them)
ADDED_BY_TORCH_NPU = {
    "torch.distributed.is_hccl_available": "torch_npu adds it; transfer_to_npu points is_nccl_available at it",
}


def resolves(dotted: str) -> bool:
    assert dotted.startswith("torch.")
    return exists(dotted)


def api_entries() -> list[dict]:
    out = []
    for name in ("cuda.toml", "thirdparty.toml"):
        with (TABLES / name).open("rb") as f:
            out += [dict(e, table=name) for e in tomllib.load(f).get("api", [])]
    return out


def test_api_names_exist_in_torch():
    missing = [e["name"] for e in api_entries()
               if e["name"].startswith("torch.") and "absent-in-torch" not in e and not resolves(e["name"])]
    assert not missing, f"not in torch {torch.__version__} and not marked absent-in-torch: {missing}"


def test_deprecated_marks_are_torchs():
    def marked(name: str) -> bool:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obj = torch
            for part in name.split(".")[1:]:
                obj = getattr(obj, part)
        return any(isinstance(getattr(h, "__deprecated__", None), str) for h in (obj, getattr(obj, "__init__", None)))

    rows = [e for e in api_entries() if e["name"].startswith("torch.cuda.") and "absent-in-torch" not in e]
    wrong = [e["name"] for e in rows if e.get("deprecated", False) != marked(e["name"])]
    assert not wrong, wrong
    assert sum(e.get("deprecated", False) for e in rows) == 9


def test_method_parameters_are_torchs():
    with (TABLES / "cuda.toml").open("rb") as f:
        methods = [m for m in tomllib.load(f)["method"] if "parameters" in m]
    assert methods
    for method in methods:
        # "cuda(device=None, non_blocking=False, memory_format=torch.preserve_format) -> Tensor"
        head = getattr(torch.Tensor, method["name"]).__doc__.strip().splitlines()[0]
        inside = head[head.index("(") + 1:head.index(")")]
        names = [p.split("=")[0].strip() for p in inside.split(",") if p.strip() not in ("", "*")]
        assert method["parameters"] == names, head


def test_absent_names_are_absent():
    present = [e["name"] for e in api_entries() if "absent-in-torch" in e and resolves(e["name"])]
    assert not present, f"marked absent-in-torch but present in torch {torch.__version__}: {present}"


def test_replacements_exist_in_torch():
    missing = []
    for e in api_entries():
        repl = e.get("replacement", "")
        if not repl.startswith("torch.") or repl == "torch.npu" or repl.startswith(("torch.npu.", "torch_npu")):
            continue
        if repl in ADDED_BY_TORCH_NPU:
            continue
        if not resolves(repl):
            missing.append(repl)
    assert not missing, f"replacements not in torch {torch.__version__}: {missing}"


def test_added_by_torch_npu_really_absent():
    """The exemptions above stay honest: drop one once torch itself has the name."""
    for name, why in ADDED_BY_TORCH_NPU.items():
        assert not resolves(name), f"{name} now exists in torch; remove the exemption ({why})"


@pytest.mark.parametrize("name", ("support-2.13.0.toml", "support-2.7.1.toml"))
def test_support_names_report(name, record_property):
    """[[support]] names need not exist (the list covers torch's docs, not its namespace): only report."""
    with (TABLES / name).open("rb") as f:
        names = [e["name"] for e in tomllib.load(f)["support"]]
    found = sum(resolves(n) for n in names if n.startswith("torch."))
    record_property("support_names", len(names))
    record_property("support_names_in_torch", found)
    print(f"{name}: {found} of {len(names)} names resolve in torch {torch.__version__}")
    assert names
