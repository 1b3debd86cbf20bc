"""Related locations in every output format of lsp-check, and through its result cache: the
CUDA calls inside a reported guard (on a line with Chinese text and an emoji before the call)
and an operator's CUDA registration in another file."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import jsonschema

from ascend_lsp.cli.cache import Cache
from ascend_lsp.cli.main import main

from .test_sarif import official_schema

GUARDED = 'import torch\n\nif torch.cuda.is_available():\n    note = "注释 🚀"; torch.cuda.synchronize()\n'
GUARD = "g.py:3:4: NPU103 [*] `torch.cuda.is_available` is a CUDA API. Use `torch.npu.is_available`."
INSIDE = "inside the guard: NPU103 `torch.cuda.synchronize` is a CUDA API. Use `torch.npu.synchronize`."
NOTE = f"note: {INSIDE} (g.py:4:20)"  # 19 code points before the call
CUDA_OP = 'TORCH_LIBRARY_IMPL(proj, CUDA, m) {\n  m.impl("gelu", &gelu_cuda);\n}\n'


def run(capsys, *args: str) -> str:
    main(list(args))
    return capsys.readouterr().out


def write_guarded(project: Path) -> None:
    (project / "g.py").write_text(GUARDED, encoding="utf-8")


def write_operator(project: Path) -> None:
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
    (project / "csrc").mkdir()
    (project / "csrc" / "ops.cu").write_text(CUDA_OP, encoding="utf-8")
    (project / "model.py").write_text("import torch\n\ny = torch.ops.proj.gelu(x)\n", encoding="utf-8")


def test_text_formats_show_notes_under_the_finding(project: Path, capsys) -> None:
    write_guarded(project)
    assert run(capsys, "g.py", "--output-format", "concise", "-q", "--no-cache").splitlines() == [
        GUARD, "    " + NOTE]
    assert run(capsys, "g.py", "-q", "--no-cache").splitlines() == [
        GUARD,
        "  |",
        "3 | if torch.cuda.is_available():",
        "  |    ^^^^^^^^^^^^^^^^^^^^^^^ warning",
        "  = fix: Replace `torch.cuda.is_available` with `torch.npu.is_available`",
        "  = " + NOTE,
        "  = docs: https://github.com/ascend-lsp/ascend-lsp/blob/main/docs/rules/NPU103.md",
        "",
    ]


def test_another_file_is_named_from_the_current_folder(project: Path, capsys) -> None:
    write_operator(project)
    out = run(capsys, "model.py", "--output-format", "concise", "-q", "--no-cache").splitlines()
    assert out[1:] == ["    note: `proj::gelu` registered with a CUDA kernel (csrc/ops.cu:2:1)"]


def test_json_has_a_related_list(project: Path, capsys) -> None:
    write_guarded(project)
    write_operator(project)
    data = json.loads(run(capsys, "g.py", "model.py", "--output-format", "json", "--no-cache"))
    assert [d["related"] for d in data] == [
        [{"message": INSIDE, "filename": "g.py", "cell": None, "location": {"row": 4, "column": 20},
          "end_location": {"row": 4, "column": 42}}],
        [{"message": "`proj::gelu` registered with a CUDA kernel", "filename": "csrc/ops.cu", "cell": None,
          "location": {"row": 2, "column": 1}, "end_location": {"row": 2, "column": 1}}],
    ]


def test_sarif_related_locations_validate(project: Path, capsys) -> None:
    write_guarded(project)
    write_operator(project)
    log = json.loads(run(capsys, "g.py", "model.py", "--output-format", "sarif", "--no-cache"))
    validator = jsonschema.Draft7Validator(official_schema())
    errors = list(validator.iter_errors(log))
    assert not errors, [e.message for e in errors[:5]]
    guard, operator = log["runs"][0]["results"]
    assert guard["message"]["text"] == ("`torch.cuda.is_available` is a CUDA API. Use `torch.npu.is_available`. "
                                        "Related: [g.py:4:20](0).")  # GitHub code scanning links only these
    assert guard["relatedLocations"] == [{
        "id": 0, "message": {"text": INSIDE},
        "physicalLocation": {"artifactLocation": {"uri": "g.py", "uriBaseId": "%SRCROOT%"},
                             "region": {"startLine": 4, "startColumn": 20, "endLine": 4, "endColumn": 42}}}]
    assert operator["relatedLocations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "csrc/ops.cu", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 1}}


def test_ci_formats_carry_the_notes(project: Path, capsys) -> None:
    write_guarded(project)
    github = run(capsys, "g.py", "--output-format", "github", "--no-cache")
    assert github.endswith("::NPU103 `torch.cuda.is_available` is a CUDA API. Use `torch.npu.is_available`.%0A"
                           + NOTE + "\n")
    [issue] = json.loads(run(capsys, "g.py", "--output-format", "gitlab", "--no-cache"))
    assert issue["description"] == ("NPU103 `torch.cuda.is_available` is a CUDA API. Use `torch.npu.is_available`."
                                    "; " + NOTE)
    junit = ElementTree.fromstring(run(capsys, "g.py", "--output-format", "junit", "--no-cache"))
    assert junit.find(".//failure").text.splitlines()[2] == NOTE


def test_the_cache_keeps_them(project: Path, capsys) -> None:
    write_guarded(project)
    (project / "pyproject.toml").write_text("[tool.ascend-lsp]\n", encoding="utf-8")
    cold = run(capsys, "g.py", "--output-format", "json")
    entry = Cache(project).entries["g.py"]
    records = Cache(project).get("g.py", entry[1])
    assert records is not None and records.records[0].related == [
        ("", "", 3, 3, 19, 3, 41, INSIDE)]
    assert run(capsys, "g.py", "--output-format", "json") == cold


def test_a_notebook_names_the_cell(project: Path, capsys) -> None:
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": []}
    notebook = {"cells": [{**cell, "source": ["import torch"]},
                          {**cell, "source": ["x = 1\n", "if torch.cuda.is_available():\n", "    torch.cuda.synchronize()"]}],
                "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    (project / "nb.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    assert run(capsys, "nb.ipynb", "--output-format", "concise", "-q", "--no-cache").splitlines()[1] == (
        f"    note: {INSIDE} (nb.ipynb:cell 2:3:5)")
