"""Which tests of an environment variable are false where it is unset (rules/env_switches.py): the
variable's default, or None where the read gives none, against what the test asks."""

from __future__ import annotations

import ast

import pytest

from ascend_lsp.rules.env_switches import module_reads, unset_off


@pytest.mark.parametrize(("test", "variable"), [
    ('os.getenv("BUILD_EXT", "0") == "1"', "BUILD_EXT"),
    ('os.environ.get("FAST", "false").lower() in ("1", "true")', "FAST"),
    ('os.environ.get("FAST") in ["1", "true"]', "FAST"),
    ('int(os.getenv("FORCE", "0"))', "FORCE"),
    ('int(os.getenv("FORCE", "0")) == 1', "FORCE"),
    ('os.getenv("WITH_X")', "WITH_X"),
    ('os.getenv("WITH_X", "")', "WITH_X"),
    ('os.getenv("NO_X", "0") != "0"', "NO_X"),
    ('os.getenv("LEVEL", 0) == "1"', "LEVEL"),
    # on where unset, or not a read of the environment: no switch
    ('os.getenv("USE_X", "1") == "1"', None),
    ('os.getenv("USE_X", "0")', None),  # "0" is a true string
    ('int(os.getenv("USE_X", "1"))', None),
    ('int(os.getenv("USE_X"))', None),  # int(None) raises
    ('os.getenv("NO_X", "0") != "1"', None),
    ('os.environ["USE_X"] == "1"', None),  # KeyError where unset
    ('os.getenv("MODE", default) == "1"', None),
    ('os.getenv(name, "0") == "1"', None),
    ('os.getenv("MODE", "a") < "b"', None),
    ('config.get("USE_X", "0") == "1"', None),
    ('"1" == os.getenv("USE_X", "0")', None),
])
def test_a_switch_off_where_the_variable_is_unset(test: str, variable: str | None) -> None:
    assert unset_off(ast.parse(test, mode="eval").body) == variable


def test_a_name_that_holds_a_read() -> None:
    reads = {"cuda_ext": 'os.getenv("BASICSR_EXT")', "level": 'int(os.getenv("LEVEL", "1"))',
             "other": "compute()"}

    def held(name: str) -> ast.expr | None:
        return ast.parse(reads[name], mode="eval").body if name in reads else None

    def off(test: str) -> str | None:
        return unset_off(ast.parse(test, mode="eval").body, held)

    assert off('cuda_ext == "True"') == "BASICSR_EXT"
    assert off("cuda_ext") == "BASICSR_EXT"
    assert off("level") is None  # on where unset
    assert off('other == "1"') is None
    assert off('unknown == "1"') is None
    assert unset_off(ast.parse('cuda_ext == "True"', mode="eval").body) is None  # nothing held: not read


def test_the_module_globals_that_hold_a_read() -> None:
    text = ('import os\n'
            'BUILD_EXT = os.getenv("BUILD_EXT", "0")  # whether to build\n'
            'FAST = os.environ.get("FAST")\n'
            'FAST = FAST or "1"\n'
            'LEVEL: str = os.getenv("LEVEL")\n'
            'def f():\n'
            '    LOCAL = os.getenv("LOCAL")\n'
            'SAME = os.getenv("A") == os.getenv("B")\n')
    reads = {name: ast.unparse(value) for name, value in module_reads(text).items()}
    assert reads == {"BUILD_EXT": "os.getenv('BUILD_EXT', '0')", "SAME": "os.getenv('A') == os.getenv('B')"}
