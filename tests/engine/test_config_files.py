"""Configs as documents: the YAML subset reader and the JSON scanner give exact ranges and skip
what they do not read; a YAML or JSON file is a config only when its keys say whose."""

from __future__ import annotations

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.config_files import ITEM, read_config, read_settings
from ascend_lsp.engine.model import Range
from ascend_lsp.engine.text import SourceText

CODES = ("NPU801", "NPU802", "NPU803", "NPU804")


def found(text: str, path: str, **settings) -> list[tuple[str, int, int, int, int]]:
    result = analyze(text, Settings(select=CODES, **settings), path).findings
    return [(f.code, f.range.start_line, f.range.start_col, f.range.end_line, f.range.end_col) for f in result]


def test_yaml_reader_ranges_nesting_and_skipped_forms() -> None:
    text = ("a: 1  # note\r\n"
            "b:\r"
            "  c: 'x # y'\n"
            "  d: &anchor !!str two\n"
            "e: |\n"
            "  f: inside a block scalar\n"
            "g:\n"
            "- h: 3\n"
            "  i: [gpu, util]\n"
            "- plain\n"
            "j: *anchor\n"
            "k: a plain\n"
            "   l: continued scalar\n"
            "\tm: tab\n")
    got = {s.keys: (s.value, s.key_range, s.value_range) for s in read_settings(SourceText(text), False)}
    assert got[("a",)] == ("1", Range(0, 0, 0, 1), Range(0, 3, 0, 4))
    assert got[("b",)] == (None, Range(1, 0, 1, 1), None)
    assert got[("b", "c")] == ("x # y", Range(2, 2, 2, 3), Range(2, 5, 2, 12))
    assert got[("b", "d")] == ("two", Range(3, 2, 3, 3), Range(3, 19, 3, 22))
    assert got[("g", ITEM, "h")] == ("3", Range(7, 2, 7, 3), Range(7, 5, 7, 6))
    assert got[("g", ITEM, "i")][0] == "[gpu, util]"
    assert got[("g", ITEM)][0] == "plain"
    assert got[("k",)][0] == "a plain"
    assert ("e",) not in got and ("f",) not in got and ("e", "f") not in got  # a block scalar is skipped
    assert ("j",) not in got  # an alias is not read
    assert ("l",) not in got and ("k", "l") not in got  # a plain scalar's continuation
    assert ("m",) not in got  # tabs


def test_yaml_flow_collections_over_lines_are_skipped() -> None:
    text = "a: [1,\n  2]\nb: {x: 1,\n  y: [2,\n    3], z: tf32}\nd: true\n"
    assert [(s.keys, s.value) for s in read_settings(SourceText(text), False)] == [(("d",), "true")]


def test_json_scanner_ranges_comments_and_errors() -> None:
    text = '{\n  // a comment\n  "bf16": {"enabled": true},\n  "x": "a\\"b", "list": [1, {"k": null},],\n}\n'
    got = {s.keys: (s.value, s.key_range, s.value_range) for s in read_settings(SourceText(text), True)}
    assert got[("bf16",)] == (None, Range(2, 2, 2, 8), None)
    assert got[("bf16", "enabled")] == ("true", Range(2, 11, 2, 20), Range(2, 22, 2, 26))
    assert got[("x",)] == ('a"b', Range(3, 2, 3, 5), Range(3, 7, 3, 13))
    assert got[("list", ITEM, "k")][0] == "null"
    assert read_settings(SourceText('{"a": tru}'), True) == []
    assert read_settings(SourceText('[{"a": 1}]'), True) == []  # a list at the top is no config


def test_only_a_frameworks_config_is_read() -> None:
    assert read_config(SourceText("name: ci\non: push\ntf32: true\n"), "config") is None
    assert read_config(SourceText('{"compilerOptions": {"tf32": true}}'), "config") is None
    # the key alone is not enough: output_dir needs a training key beside it
    assert read_config(SourceText("output_dir: x\noptim: paged_adamw_8bit\n"), "config").frameworks == \
        frozenset({"training-args"})
    assert read_config(SourceText("output_dir: x\nname: y\n"), "config") is None
    assert found("name: ci\noptim: paged_adamw_8bit\ntf32: true\n", "ci.yml") == []
    assert found('{"output_dir": "o", "tf32": true}', "args.json") == [("NPU801", 0, 20, 0, 32)]


def test_a_device_in_a_hydra_config_at_any_depth() -> None:
    """A Hydra config (its top-level `defaults` list) is read for `device: cuda` at any depth;
    an OmegaConf YAML without one is not a config; an item `cuda` of a list of devices is one."""
    text = "defaults:\n  - _self_\ndevice: cuda\nmodel:\n  ema:\n    device: 'cuda'\n"
    assert found(text, "conf/config.yaml") == [("NPU801", 2, 0, 2, 12), ("NPU801", 5, 4, 5, 18)]
    assert found(text.replace("defaults:\n  - _self_\n", ""), "conf/config.yaml") == []
    assert found("defaults:\n  - _self_\nworkers:\n  device:\n    - cuda\n    - cpu\n", "c.yaml") == \
        [("NPU801", 4, 6, 4, 10)]


def test_deepspeed_bf16_on_a_chip_without_it() -> None:
    text = '{"train_micro_batch_size_per_gpu": 1,\n "bf16": {"enabled": true}, "fp16": {"enabled": true}}\n'
    assert found(text, "ds_config.json", chip="910A") == [("NPU802", 1, 10, 1, 25)]
    assert found(text, "ds_config.json", chip="A2") == []
    assert found(text.replace("true}, ", '"auto"}, '), "ds_config.json", chip="910A") == []


def test_no_pin_no_flash_attention_finding() -> None:
    assert found("model_name_or_path: m\ntemplate: t\nflash_attn: fa2\n", "sft.yaml") == []


def test_compose_environment_goes_through_the_launch_rules() -> None:
    text = ("services:\n  app:\n    image: nvcr.io/nvidia/pytorch:24.07-py3\n    environment:\n"
            "      CUDA_VISIBLE_DEVICES: \"0\"\n      NCCL_SOCKET_IFNAME: eth0\n")
    result = analyze(text, Settings(select=("NPU108", "NPU504")), "docker-compose.yml").findings
    assert [(f.code, f.range.start_line, f.range.start_col, f.range.end_col) for f in result] == [
        ("NPU504", 2, 11, 43), ("NPU108", 4, 6, 26), ("NPU108", 5, 6, 24)]
    assert result[1].fix is not None and result[1].fix.edits[0].new_text == "ASCEND_RT_VISIBLE_DEVICES"


def test_json_takes_no_noqa_comment() -> None:
    analysis = analyze('{"output_dir": "o",\n "tf32": true}\n', Settings(select=CODES), "args.json")
    assert analysis.no_comment == frozenset({0, 1, 2})
