"""The port's API table (mappings/mindspore/port-api.toml): every row's executed equivalence test
(tests/port/api_cases.py) passes exactly when the table ships the row as proven; torch's own
signatures where torch can tell them; the one mechanism that applies a row; the port using the
table for what the hand-written specs do not cover, and leaving an unproven row's calls to a
person with the reason."""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import pytest

from ascend_lsp.knowledge.port_api import ApiRow, PortApi, load_port_api
from ascend_lsp.port import port_source
from ascend_lsp.port.api_table import counterpart, signature
from ascend_lsp.port.rewrite import port
from ascend_lsp.port.specs import HELPERS, Manual

from .api_cases import load_rows, verdicts
from .harness import load_module

pytestmark = [pytest.mark.torch, pytest.mark.mindspore]
torch = pytest.importorskip("torch", reason="torch is not installed")
mindspore = pytest.importorskip("mindspore", reason="mindspore is not installed")
numpy = pytest.importorskip("numpy")
cst = pytest.importorskip("libcst")

ROWS = load_rows()


@pytest.fixture(scope="module")
def found(tmp_path_factory) -> dict[str, str | None]:
    """Every row's verdict, run once (two processes: torch, then MindSpore on the CPU)."""
    return verdicts(tmp_path_factory.mktemp("api_cases"))


@pytest.mark.parametrize("row", ROWS, ids=[row["torch"] for row in ROWS])
def test_a_row_ships_as_proven_exactly_when_its_executed_test_passes(row, found):
    why = found[row["torch"]]
    if row["proven"]:
        assert why is None, f"{row['torch']} is shipped as proven but its test fails: {why}"
    else:
        assert why is not None, (f"{row['torch']} now passes: record the proofs again "
                                 "(python -m tests.port.api_cases --record; python mappings/build mindspore)")


def test_the_table_is_at_the_scale_the_issue_asks_for():
    table = load_port_api()
    assert len(table.proven_apis()) >= 600
    assert [row.calls for row in table.rows] == sorted((row.calls for row in table.rows), reverse=True)


def _inspectable(name: str):
    module, _, attribute = name.rpartition(".")
    target = getattr(importlib.import_module(module), attribute, None) if not name.startswith("torch.Tensor.") \
        else getattr(torch.Tensor, attribute, None)
    try:
        found = inspect.signature(target)
    except (TypeError, ValueError):
        return None  # a builtin: torch's argument parser checks the names when the test calls it by keyword
    named = any(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in found.parameters.values())
    return found if named else None  # (*args, **kwargs): a wrapper that says nothing


INSPECTABLE = [(row, sig) for row in ROWS if row["kind"] == "function" and (sig := _inspectable(row["torch"]))]


@pytest.mark.parametrize("row,torch_signature", INSPECTABLE, ids=[row["torch"] for row, _ in INSPECTABLE])
def test_a_row_has_torchs_parameters_and_defaults(row, torch_signature):
    ours = signature(row["params"])
    theirs = [p for p in torch_signature.parameters.values()]
    assert list(ours.names) == [p.name for p in theirs]
    # a row may ask for an argument torch defaults to None (nn.Buffer's data): a call without it
    # then needs a person, which is never wrong
    defaults = {p.name: repr(p.default) for p in theirs if p.default is not inspect.Parameter.empty}
    assert ours.defaults == {name: value for name, value in defaults.items()
                             if name in ours.defaults or value != "None"}


def _row(params: str, template: str, drop: tuple[str, ...] = ()) -> ApiRow:
    return ApiRow(torch="torch.f", kind="function", params=params, mindspore=template, also=(), drop=drop, calls=0,
                  source="composition: a test row", proven=True, left="", random=False)


def _port(row: ApiRow, call: str, receiver: str | None = None) -> str:
    node = cst.parse_expression(call)
    new = counterpart(row, node, cst.parse_expression(receiver) if receiver else None)
    return cst.Module([]).code_for_node(new)


def test_a_keyword_the_call_leaves_out_is_left_out_and_a_forced_one_gets_torchs_default():
    row = _row("input, dim=None, keepdim=False", "ops.f({input}, axis={dim}, keep={keepdim!})")
    assert _port(row, "f(x)") == "ops.f(x, keep=False)"
    assert _port(row, "f(x, 1, keepdim=True)") == "ops.f(x, axis=1, keep=True)"


def test_a_method_binds_its_receiver_to_the_first_parameter_and_parenthesizes_it():
    row = _row("input, other", "{input} * {other}")
    assert _port(row, "x.mul(y + 1)", receiver="a + b") == "(a + b) * (y + 1)"


def test_star_parameters_spread_or_become_one_sequence():
    assert _port(_row("self, *shape", "{self}.view({*shape})"), "x.view(2, -1)", receiver="x") == "x.view(2, -1)"
    tile = _row("self, *repeats", "ops.tile({self}, {repeats})")
    assert _port(tile, "x.repeat(2, 1)", receiver="x") == "ops.tile(x, (2, 1))"
    assert _port(tile, "x.repeat((2, 1))", receiver="x") == "ops.tile(x, (2, 1))"
    with pytest.raises(Manual, match="one size or a sequence"):
        _port(tile, "x.repeat(n)", receiver="x")


def test_an_in_place_write_into_an_index_or_a_view_needs_a_person():
    """MindSpore 2.10's CPU: `x[:, :2].copy_(y)` leaves x as it was."""
    row = ApiRow(torch="torch.Tensor.copy_", kind="method", params="self, other", mindspore="{self}.copy_({other})",
                 also=(), drop=(), calls=0, source="composition: a test row", proven=True, left="", random=False)
    assert _port(row, "x.copy_(y)", receiver="self.weight") == "self.weight.copy_(y)"
    for receiver in ("x[:, :2]", "x.T", "f(x)"):
        with pytest.raises(Manual, match="is no variable"):
            _port(row, "x.copy_(y)", receiver=receiver)


def test_what_the_counterpart_cannot_express_needs_a_person():
    row = _row("input, other, *, alpha=1, out=None", "ops.add({input}, {other})", drop=("out",))
    assert _port(row, "f(x, y, out=None)") == "ops.add(x, y)"
    with pytest.raises(Manual, match="`alpha=2` has no counterpart"):
        _port(row, "f(x, y, alpha=2)")
    with pytest.raises(Manual, match="keyword `beta`"):
        _port(row, "f(x, y, beta=2)")
    with pytest.raises(Manual, match="no argument for `other`"):
        _port(row, "f(x)")
    with pytest.raises(Manual, match=r"\*args"):
        _port(row, "f(*xs)")
    with pytest.raises(Manual, match="keyword `from_`"):  # before the `/`: torch's name is `from`
        _port(_row("self, from_=0.0, /, to=1.0", "{self}.uniform_({from_}, {to})"), "x.uniform_(from_=1)", "x")
    twice = _row("input, dim=None", "{input}.reshape(-1) if {dim} is None else {input}")
    assert _port(twice, "f(x, -1)") == "x.reshape(-1) if (-1) is None else x"
    with pytest.raises(Manual, match="uses `input` 2 times"):
        _port(twice, "f(g(x))")


def test_a_row_that_does_not_validate_fails_the_build():
    import port_api_tables

    official = {"2.4": {"torch.cat"}, "2.6": set(), "1.10": set()}
    good = {"torch": "torch.cat", "params": "tensors, dim=0", "mindspore": "ops.cat({tensors}, {dim})",
            "example": "[randn(2)]", "source": "api-2.4"}
    port_api_tables._check(dict(good), official, set())
    for change, message in [({"mindspore": "ops.cat({tensors}, {axis})"}, "names \\['axis'\\], not parameters"),
                            ({"source": "api-2.6"}, "has none of its torch names"),
                            ({"source": "a blog"}, "source must be"),
                            ({"params": "tensors,, dim"}, "not a parameter list"),
                            ({"example": "[randn(2)"}, "is not a call's arguments"),
                            ({"torch": "torch.nn.Cat"}, "needs the `input`")]:
        with pytest.raises(ValueError, match=message):
            port_api_tables._check({**good, **change}, official, set())
    with pytest.raises(ValueError, match="two rows"):
        port_api_tables._check(dict(good), official, {"torch.cat"})


MODEL = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, mask):
        h = self.proj(x).transpose(1, 2).float()
        h = h.masked_fill(mask, 0.0).amax(dim=-1, keepdim=True)
        scores = torch.where(mask, torch.zeros_like(h), h).squeeze(-1)
        return F.normalize(scores, dim=-1) + torch.clamp(x.mean(1), min=-0.5)
'''


def test_table_driven_calls_are_ported_and_run(tmp_path):
    result = port_source(MODEL, "block.py")
    assert result.complete, result.to_dict()
    table = [item.what for item in result.items if item.what.endswith("(API table)")]
    assert len(table) == 10, table
    (tmp_path / "block.py").write_text(MODEL, encoding="utf-8")
    (tmp_path / "block_ms.py").write_text(result.text, encoding="utf-8")
    torch_block = load_module(tmp_path / "block.py", "api_table_torch_block").Block().eval()
    ms_block = load_module(tmp_path / "block_ms.py", "api_table_ms_block").Block()
    ms_block.set_train(False)
    ms_block.proj.weight.set_data(mindspore.Tensor(torch_block.proj.weight.detach().numpy()))
    ms_block.proj.bias.set_data(mindspore.Tensor(torch_block.proj.bias.detach().numpy()))
    rng = numpy.random.default_rng(0)
    x, mask = rng.standard_normal((2, 3, 8)).astype("float32"), rng.random((2, 8, 1)) < 0.3
    with torch.no_grad():
        expected = torch_block(torch.from_numpy(x), torch.from_numpy(mask)).numpy()
    got = ms_block(mindspore.Tensor(x), mindspore.Tensor(mask)).asnumpy()
    assert got.shape == expected.shape == (2, 8)
    numpy.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_a_row_its_test_did_not_prove_is_left_to_a_person_with_the_reason():
    table = load_port_api()
    why = "#1 positional style `torch.logspace(0.0, 2.0, 5)`: fails on MindSpore's CPU: TypeError: …"
    unproven = dataclasses.replace(table.by_name["torch.logspace"], proven=False, left=why)
    result = port("import torch\n\n\ndef f():\n    return torch.logspace(0.0, 2.0, 5)\n", "f.py",
                  PortApi(table.rows, {**table.by_name, "torch.logspace": unproven}))
    assert [(item.line, item.code, item.what) for item in result.items if item.status != "converted"] == \
        [(5, "MS301", f"`torch.logspace`: {why}")]
    assert "torch.logspace(0.0, 2.0, 5)" in result.text


def test_einsum_s_literal_equation_is_read_when_ported():
    """Spaces dropped, the implicit output written out as torch infers it (the ellipsis, then the letters
    used once, uppercase first), the operands of one literal sequence spread, the quotes kept."""
    row = load_port_api().by_name["torch.einsum"]
    for call, expected in [
            ('torch.einsum("B G H I D, B G H J D -> B G H I J", q, k)', '_einsum("BGHID,BGHJD->BGHIJ", q, k)'),
            ("torch.einsum('i, j -> ij', t, theta)", "_einsum('i,j->ij', t, theta)"),
            ('torch.einsum("bA,cb", x, y)', '_einsum("bA,cb->Ac", x, y)'),
            ('torch.einsum("b...,cb", x, y)', '_einsum("b...,cb->...c", x, y)'),
            ('torch.einsum("ii", x)', '_einsum("ii->", x)'),
            ('torch.einsum("ij,jk", [x, y])', '_einsum("ij,jk->ik", x, y)'),
            ('torch.einsum("ij,jk", xs)', '_einsum("ij,jk->ik", xs)'),  # a sequence of both, at run time
            ('torch.einsum("ij," "jk->ik", x, y)', '_einsum("ij,jk->ik", x, y)')]:
        assert _port(row, call) == expected


def test_an_einsum_the_port_cannot_read_or_torch_refuses_needs_a_person():
    row = load_port_api().by_name["torch.einsum"]
    for call, reason in [
            ("torch.einsum(eq, x, y)", "the equation `eq` is no literal string: the port reads it to write the product"),
            ("torch.einsum(x, [0, 1], [1])", "torch's sublist form (`einsum(x, [0, 1], [1])`) has no counterpart: "
                                             "write the equation"),
            ('torch.einsum("i1,j->ij", x, y)', "`i1,j->ij`: torch refuses the subscripts `i1` (letters and one `...` "
                                               "a term)"),
            ('torch.einsum("...i...->i", x)', "`...i...->i`: torch refuses the subscripts `...i...` (letters and one "
                                              "`...` a term)"),
            ('torch.einsum("ij,jk->ik", x, y, z)', "`ij,jk->ik` names 2 operands, the call gives 3"),
            ('torch.einsum("ij->ii", x)', "`ij->ii`: torch refuses the output `ii` (`i` appears twice)"),
            ('torch.einsum("ij->ik", x)', "`ij->ik`: torch refuses the output `ik` (`k` is in no operand)")]:
        with pytest.raises(Manual) as refused:
            _port(row, call)
        assert str(refused.value) == reason


def _helper(name: str):
    namespace = {"mindspore": mindspore, "ops": mindspore.ops}
    exec(HELPERS[name], namespace)
    return namespace[name]


def _arrays(*shapes, dtype="float32"):
    return [numpy.arange(int(numpy.prod(shape)), dtype=dtype).reshape(shape) for shape in shapes]


GRID = _arrays((5, 3))[0]
ONE_ROW = numpy.ones((1, 3), numpy.float32)
# (helper, torch's call, the helper's arguments): numpy arrays become a tensor on each side
COMPOSITIONS = [
    ("_unfold", torch.Tensor.unfold, [GRID, 0, 2, 1]), ("_unfold", torch.Tensor.unfold, [GRID, -1, 3, 2]),
    ("_unfold", torch.Tensor.unfold, [GRID, 1, 0, 1]),  # size 0: windows of nothing
    ("_unfold", torch.Tensor.unfold, [numpy.array(5, numpy.float32), 0, 1, 1]),  # 0-d: one element
    ("_unfold", torch.Tensor.unfold, [numpy.array(5, numpy.float32), 0, 0, 1]),
    ("_unfold", torch.Tensor.unfold, [numpy.array(5, numpy.float32), 1, 1, 1]),
    ("_unfold", torch.Tensor.unfold, [GRID, 2, 2, 1]), ("_unfold", torch.Tensor.unfold, [GRID, -3, 2, 1]),
    ("_unfold", torch.Tensor.unfold, [GRID, 0, 6, 1]), ("_unfold", torch.Tensor.unfold, [GRID, 0, 2, 0]),
    ("_unfold", torch.Tensor.unfold, [GRID, 0, -1, 1]),
    ("_index_copy", torch.Tensor.index_copy, [GRID, 0, numpy.array([4, 2]), numpy.ones((2, 3), numpy.float32)]),
    ("_index_copy", torch.Tensor.index_copy, [GRID, 0, numpy.array(2), ONE_ROW]),  # a 0-d index
    ("_index_copy", torch.Tensor.index_copy, [GRID, -1, numpy.array([2]), numpy.ones((5, 1), numpy.float32)]),
    ("_index_copy", torch.Tensor.index_copy, [GRID, 0, numpy.array([], numpy.int64), numpy.ones((0, 3), numpy.float32)]),
    ("_index_copy", torch.Tensor.index_copy, [GRID, 0, numpy.array([-1]), ONE_ROW]),
    ("_index_copy", torch.Tensor.index_copy, [GRID, 0, numpy.array([5]), ONE_ROW]),
    ("_index_copy", torch.Tensor.index_copy, [GRID, 0, numpy.array([1]), numpy.ones((2, 3), numpy.float32)]),
    ("_index_copy", torch.Tensor.index_copy, [GRID, 0, numpy.array([1]), numpy.ones((1, 2), numpy.float32)]),
    ("_index_copy", torch.Tensor.index_copy, [GRID, 0, numpy.array(2), numpy.ones(3, numpy.float32)]),
    ("_index_copy", torch.Tensor.index_copy, [GRID, 0, numpy.array([[1]]), ONE_ROW]),
    ("_index_copy", torch.Tensor.index_copy, [GRID, 2, numpy.array([1]), ONE_ROW]),
    ("_einsum", torch.einsum, ["ij,jk->ik", *_arrays((1, 4), (1, 2))]),  # j broadcasts from size 1
    ("_einsum", torch.einsum, ["bi,bj->bij", *_arrays((1, 2), (3, 4))]),
    ("_einsum", torch.einsum, ["ii->i", *_arrays((3, 3))]),
    ("_einsum", torch.einsum, ["i,i->", *_arrays((3,), (4,))]),
    ("_einsum", torch.einsum, ["ij,jk->ik", *_arrays((3, 4), (3, 2))]),
    ("_einsum", torch.einsum, ["ii->i", *_arrays((2, 3))]),
    ("_logspace", torch.logspace, [0.0, 2.0, 0, 10.0]), ("_logspace", torch.logspace, [0.0, 2.0, -1, 10.0]),
]


@pytest.mark.parametrize(("name", "torch_call", "args"), COMPOSITIONS,
                         ids=[f"{name}{n}" for n, (name, _, _) in enumerate(COMPOSITIONS)])
def test_a_composition_gives_what_torch_gives_and_raises_where_torch_raises(name, torch_call, args):
    def run(call, tensor):
        try:
            return call(*(tensor(a) if isinstance(a, numpy.ndarray) else a for a in args))
        except (IndexError, RuntimeError) as error:
            return type(error)
    expected = run(torch_call, torch.from_numpy)
    got = run(_helper(name), mindspore.Tensor)
    if isinstance(expected, type):
        assert got is expected
    else:
        assert got.asnumpy().dtype == expected.numpy().dtype
        assert got.asnumpy().shape == expected.numpy().shape
        assert numpy.allclose(got.asnumpy(), expected.numpy())


def test_the_compositions_refuse_what_torch_refuses_with_a_clear_message():
    x = mindspore.Tensor(numpy.ones((2, 8), numpy.float32))
    with pytest.raises(ValueError, match=r"einsum: 'ij' does not name the 3 dims of operand 0"):
        _helper("_einsum")("ij->i", mindspore.Tensor(numpy.ones((2, 3, 4), numpy.float32)))
    with pytest.raises(ValueError, match=r"einsum: 'ij,jk->ik' names 2 operands, 1 given"):
        _helper("_einsum")("ij,jk->ik", x)
    # torch multiplies mixed dtypes where nothing is summed over two operands and refuses them otherwise
    with pytest.raises(TypeError, match=r"einsum: operands of dtypes Float32, Int64: cast them to one"):
        _helper("_einsum")("i,i->i", mindspore.Tensor(numpy.ones(3, numpy.float32)), mindspore.Tensor(numpy.arange(3)))
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 1 is 8 but size is 9"):
        _helper("_unfold")(x, 1, 9, 1)
    with pytest.raises(ValueError, match="max is not a valid value for reduction"):
        _helper("_reduced")(x, "max")


def test_logspace_ports_in_torchs_default_dtype_only():
    row = load_port_api().by_name["torch.logspace"]
    assert _port(row, "torch.logspace(0, 2, 5, dtype=torch.float32)") == "_logspace(0, 2, 5, 10.0)"
    with pytest.raises(Manual, match=r"`dtype=torch.float64`: the port computes logspace in float32, torch's "
                                     r"default dtype"):
        _port(row, "torch.logspace(0, 2, 5, dtype=torch.float64)")


def test_a_helper_a_row_names_is_written_into_the_port_once():
    result = port_source("import torch\n\n\ndef f(x):\n    return torch.roll(x, (1, -2), (0, 1)) + x.roll(3)\n",
                         "f.py")
    assert result.complete, result.to_dict()
    assert result.text.count("def _roll(") == 1
    assert result.text.endswith("def f(x):\n    return _roll(x, (1, -2), dims=(0, 1)) + _roll(x, 3)\n")
    result = port_source("import torch.nn.functional as F\n\n\ndef f(a, p, n):\n"
                         "    return F.triplet_margin_loss(a, p, n) + F.soft_margin_loss(a, p)\n", "f.py")
    assert result.complete, result.to_dict()
    assert (result.text.count("def _reduced("), result.text.count("def _triplet_margins(")) == (1, 1)
