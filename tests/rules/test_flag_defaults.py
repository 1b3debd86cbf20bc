"""The boolean flags a project leaves off (flag_defaults.py, ProjectContext.flags): names its
Python files give only `False`, read from real files; what NPU106 and NPU111 lower under them,
and what a result cache keys on."""

from __future__ import annotations

from pathlib import Path

from ascend_lsp.analysis import analyze
from ascend_lsp.cli.cache import settings_key
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity
from ascend_lsp.project import ProjectContext

CONFIG = '''from dataclasses import dataclass


@dataclass
class Config:
    compile_model: bool = False
    use_torch_compile: bool = True
    use_tf32: bool = False


parser.add_argument("--fast-matmul", action="store_true")
parser.add_argument("--no-drq", action="store_false")
parser.add_argument("-c", "--cache_model", default=False)
if config.use_tf32:
    pass
parser.add_argument(
    "--torchcompile",
    default=False,
    action="store_true",
    help="torch.compile() the model (modes: %s)" % ", ".join(MODES),
)
parser.add_argument("--ds.packing_samples", action="store_true", default=False)
parser.add_argument("--write_profile", default=None, help="where to write a profile")
parser.add_argument("--max_steps", type=int)
parser.add_argument("--output_dir", required=True)
parser.add_argument("--trace_file", type=str)
parser.add_argument("--log_every", default=10)
'''
MODEL = '''import torch


def build(config, args, options, net):
    if config.compile_model:
        net = torch.compile(net)
    if config.use_torch_compile:
        net = torch.compile(net)
    if args.fast_matmul:
        torch.backends.cuda.matmul.allow_tf32 = True
    if options["fast_matmul"]:  # a dict of options, read by its key
        torch.backends.cuda.matmul.allow_tf32 = True
    if args.write_profile:
        torch.backends.cuda.matmul.allow_tf32 = True
    return net
'''


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_flags_given_only_false_are_off(tmp_path: Path) -> None:
    config = write(tmp_path / "pkg" / "config.py", CONFIG)
    write(tmp_path / "scripts" / "run.py", "Config(use_tf32=True)\nmain(trace_file=\"trace.json\")\n")
    flags = ProjectContext(str(tmp_path)).flags
    assert flags.default_off("compile_model") == (str(config), 5)
    assert flags.default_off("fast_matmul") == (str(config), 10)
    assert flags.default_off("cache_model") == (str(config), 12)
    assert flags.default_off("torchcompile") == (str(config), 16)  # brackets in a string, a call among the arguments
    assert flags.default_off("packing_samples") == (str(config), 21)  # `args.ds.packing_samples`: its last name
    assert flags.default_off("write_profile") == (str(config), 22)  # None unless the command line gives it
    assert flags.default_off("max_steps") == (str(config), 23)
    assert flags.default_off("output_dir") is None  # required: always given
    assert flags.default_off("trace_file") is None  # run.py gives it a string
    assert flags.default_off("log_every") is None  # a default of its own
    assert flags.default_off("use_torch_compile") is None  # True by default
    assert flags.default_off("no_drq") is None  # store_false: True unless given
    assert flags.default_off("use_tf32") is None  # a script turns it on
    assert flags.default_off("pass") is None  # `if config.use_tf32:\n    pass` gives nothing


def test_code_under_a_flag_left_off_is_info(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = \"p\"\n")
    write(tmp_path / "pkg" / "config.py", CONFIG)
    model = write(tmp_path / "pkg" / "model.py", MODEL)
    project = ProjectContext(str(tmp_path))
    findings = analyze(MODEL, Settings(select=("NPU106", "NPU111")), str(model), project=project).findings
    assert [(f.code, f.range.start_line + 1, f.severity) for f in findings] == [
        ("NPU111", 6, Severity.INFO), ("NPU111", 8, Severity.WARNING), ("NPU106", 10, Severity.INFO),
        ("NPU106", 12, Severity.INFO), ("NPU106", 14, Severity.INFO)]
    assert findings[0].message.endswith(
        "(Under `if config.compile_model:`, and the project gives `compile_model` no value but False "
        "(pkg/config.py:6): it runs only where the user turns that flag on; on an NPU host leave it off, "
        "or change this first.)")
    assert findings[-1].message.endswith(
        "(Under `if args.write_profile:`, and `write_profile` is an option None unless the command line gives it "
        "(pkg/config.py:23), and no file of the project gives it a value: it runs only where the user passes it; on "
        "an NPU host leave it out, or change this first.)")


TRAINER = '''import torch


class Trainer:
    def __init__(self, config, dist):
        self.use_amp = config.use_mixed_precision and dist.allow_mixed_precision()
        if self.use_amp:
            if torch.cuda.is_available():
                self.scaler = torch.amp.GradScaler("cuda")
            else:
                self.use_amp = False
'''


def test_a_flag_the_file_computes_is_not_left_off(tmp_path: Path) -> None:
    """`self.use_amp = False` is the only literal, but the file computes the flag from the
    user's config: what it holds is not known, and the findings under it stay warnings."""
    trainer = write(tmp_path / "trainer.py", TRAINER)
    project = ProjectContext(str(tmp_path))
    assert project.flags.default_off("use_amp") == (str(trainer), 10)
    findings = analyze(TRAINER, Settings(select=("NPU1",)), str(trainer), project=project).findings
    assert [(f.code, f.range.start_line + 1, f.severity) for f in findings] == [
        ("NPU103", 8, Severity.WARNING)]  # and the GradScaler inside, lowered for its test
    passed_on = TRAINER.replace("config.use_mixed_precision and dist.allow_mixed_precision()", "config.use_amp")
    findings = analyze(passed_on, Settings(select=("NPU1",)), str(trainer), project=project).findings
    assert findings[0].severity is Severity.INFO and "no value but False" in findings[0].message


def test_a_flag_turned_on_changes_the_cache_key_and_is_read_again(tmp_path: Path) -> None:
    write(tmp_path / "config.py", CONFIG)
    project = ProjectContext(str(tmp_path))
    assert not project.reread_python()  # never read: nothing depended on them
    key = settings_key(Settings(), project)
    assert not project.reread_python()  # read, and unchanged
    write(tmp_path / "train.py", "build(Config(compile_model=True))\n")
    assert project.reread_python()
    assert project.flags.default_off("compile_model") is None
    assert settings_key(Settings(), project) != key


FIELDS = '''from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ModelArguments:
    use_flash_attn: bool = field(default=False, metadata={"help": "FlashAttention-2"})
    packing: Optional[bool] = field(
        default=False, metadata={"help": "pack sequences"}
    )
    use_liger: bool = dataclasses.field(default=True)
    bf16: bool = field(default=False)


class Config(BaseModel):  # its values come from a YAML file
    flash_attention: bool | None = None
    sample_packing: Optional[bool] = field(default=None)
'''
LOADER = '''from transformers import AutoModelForCausalLM


def load(model_args, args):
    AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2" if model_args.use_flash_attn else None)
    AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2" if args.bf16 else "sdpa")
    if model_args.use_flash_attn:
        AutoModelForCausalLM.from_pretrained("m", use_flash_attention_2=True)
    try:
        import flash_attn
        AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_3")
    except ImportError:
        pass
'''


def test_dataclass_fields_give_their_default(tmp_path: Path) -> None:
    arguments = write(tmp_path / "arguments.py", FIELDS)
    write(tmp_path / "launch.py", "ModelArguments(bf16=True)\n")
    write(tmp_path / "merge.py", "cfg = load(path, flash_attention=False, sample_packing=False)\n")
    flags = ProjectContext(str(tmp_path)).flags
    assert flags.default_off("use_flash_attn") == (str(arguments), 6)
    assert flags.default_off("packing") == (str(arguments), 7)  # `default=False` on the next line
    assert flags.default_off("use_liger") is None  # True by default
    assert flags.default_off("bf16") is None  # the launcher turns it on
    assert flags.default_off("flash_attention") is None  # None by default: the YAML file may turn it on
    assert flags.default_off("sample_packing") is None


def test_flash_attention_chosen_by_a_flag_left_off_or_after_its_import_is_info(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = \"p\"\n")
    write(tmp_path / "arguments.py", FIELDS)
    write(tmp_path / "launch.py", "ModelArguments(bf16=True)\n")
    loader = write(tmp_path / "loader.py", LOADER)
    project = ProjectContext(str(tmp_path))
    findings = analyze(LOADER, Settings(select=("NPU307",)), str(loader), project=project).findings
    assert [(f.range.start_line + 1, f.severity) for f in findings] == [
        (5, Severity.INFO), (6, Severity.WARNING), (8, Severity.INFO), (11, Severity.INFO)]
    assert findings[0].message.endswith(
        "(Under `... if model_args.use_flash_attn else ...`, and the project gives `use_flash_attn` no value but "
        "False (arguments.py:7): it runs only where the user turns that flag on; on an NPU host leave it off, "
        "or change this first.)")
    assert [(r.range.start_line + 1, r.message) for r in findings[3].related] == [
        (10, "`flash_attn` imported here, opt-in")]


OPTIONS = '''import argparse
from dataclasses import dataclass, field


@dataclass
class ModelArgs:
    optimizer: str = "AdamW"
    scheduler: str = field(default="linear", metadata={"help": "linear or cosine"})
    attention: str = field(
        default="torch", metadata={"help": "torch or xformers"})


parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "fp8"])
if args.precision == "fp8" or args.optimizer != "Adafactor":
    pass
'''


def test_string_options_give_the_values_read(tmp_path: Path) -> None:
    arguments = write(tmp_path / "arguments.py", OPTIONS)
    write(tmp_path / "examples.py", 'model = Model(args={"scheduler": "cosine"})\ncfg["attention"] = "xformers"\n'
                                    'settings = {"use_tf32": True}\nsample = Sample(kind="text")\n')
    flags = ProjectContext(str(tmp_path)).flags
    assert flags.never_given("optimizer", ["Adam8bit"]) == ("AdamW", str(arguments), 6)
    assert flags.never_given("optimizer", ["Adam8bit", "AdamW"]) is None
    assert flags.never_given("optimizer", ["Adafactor"]) == ("AdamW", str(arguments), 6)  # compared, not given
    assert flags.never_given("precision", ["fp8"]) == ("fp32", str(arguments), 13)  # a choice is the user's
    assert flags.never_given("scheduler", ["cosine"]) is None  # a dict's key gives it
    assert flags.never_given("attention", ["xformers"]) is None  # a key stored gives it
    assert flags.never_given("attention", ["flash"]) == ("torch", str(arguments), 8)  # `default=` on the next line
    assert flags.never_given("unknown", ["a"]) is None  # no value read: nothing known
    assert flags.never_given("kind", ["image"]) is None  # given (`kind="text"`), never declared: data, no option
    write(tmp_path / "config.py", "FLAGS = dict(use_tf32=False)\n")
    assert ProjectContext(str(tmp_path)).flags.default_off("use_tf32") is None  # a dict's key turns it on


def test_a_parameter_default_declares_no_option(tmp_path: Path) -> None:
    write(tmp_path / "patch.py", 'def patch(model_type: str = "llama",\n          kind: str = "dense") -> None:\n'
                                 '    pass\n\n\nclass Loader:\n    backend: str = "torch"  # the default\n')
    flags = ProjectContext(str(tmp_path)).flags
    assert flags.never_given("model_type", ["mamba"]) is None
    assert flags.never_given("kind", ["moe"]) is None
    assert flags.never_given("backend", ["xformers"]) == ("torch", str(tmp_path / "patch.py"), 6)


def test_a_value_read_is_the_whole_value_and_lines_may_end_in_crlf(tmp_path: Path) -> None:
    write(tmp_path / "eval.py", "log_probs = False if task == 'needle' else True\r\nuse_cache = False\r\n\r\n\r\n"
                                "class Args:\r\n    mode: str = \"fast\"\r\n")
    flags = ProjectContext(str(tmp_path)).flags
    assert flags.default_off("log_probs") is None  # its other value is True
    assert flags.never_given("mode", ["fast"]) is None
    assert flags.default_off("use_cache") == (str(tmp_path / "eval.py"), 1)
    assert flags.never_given("mode", ["slow"]) == ("fast", str(tmp_path / "eval.py"), 5)


def test_a_flag_set_from_a_flag_left_off_is_off(tmp_path: Path) -> None:
    """`self.is_vllm = use_vllm`: off where `use_vllm` is, even named for a fact; the literals decide for a name given
    one, and a name set from a flag that may be on is not off."""
    model = write(tmp_path / "model.py", '''class Model:
    def __init__(self, use_vllm=False, fast=True, plain=False, is_ready=False):
        self.is_vllm = use_vllm
        self.speedy = fast
        self.plain_copy = plain
        self.plain_copy = True
        self.ready = is_ready
''')
    flags = ProjectContext(str(tmp_path)).flags
    assert flags.alias_off("is_vllm") == ("use_vllm", (str(model), 1))
    assert flags.sources("is_vllm") == {"use_vllm"}
    assert flags.default_off("is_vllm") is None  # no literal of its own
    assert flags.alias_off("speedy") is None  # `fast` defaults to True
    assert flags.alias_off("plain_copy") is None  # given a literal: the literals decide
    assert flags.alias_off("ready") is None  # set from a name for a fact


def test_a_provisional_project_s_analyses_do_not_wait_for_its_python_facts(tmp_path: Path) -> None:
    """The language server's projects: an analysis before the read sees nothing that would lower
    a finding (every one the facts lower stays a warning); read_python reads them, and the next
    analysis sees them, as lsp-check's first analysis does."""
    write(tmp_path / "pkg" / "config.py", CONFIG)
    model = str(tmp_path / "pkg" / "model.py")

    def severities(project: ProjectContext) -> list[Severity]:
        return [f.severity for f in analyze(MODEL, Settings(select=("NPU106", "NPU111")), model,
                                            project=project).findings]

    provisional = ProjectContext(str(tmp_path), provisional=True)
    assert severities(provisional) == [Severity.WARNING] * 5
    assert provisional.seen_unread and not provisional.python_read
    provisional.read_python()
    waiting = ProjectContext(str(tmp_path))  # lsp-check's: the first analysis reads them
    assert severities(provisional) == severities(waiting) == [Severity.INFO, Severity.WARNING] + [Severity.INFO] * 3
    assert not waiting.seen_unread
