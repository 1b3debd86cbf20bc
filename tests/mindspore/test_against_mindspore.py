"""The MindSpore tables and traps, checked against the installed MindSpore (2.10, CPU):
every counterpart imports (or is recorded as absent), every default a trap relies on is
the installed one (or the table records the difference), and the traps that change
numbers really do, run side by side with torch on CPU."""

from __future__ import annotations

import inspect
import math

import pytest
from installed import MISSING, exists, resolve  # mappings/build/installed.py: the one resolver

from ascend_lsp.knowledge.files import mappings_root, read_table

ms = pytest.importorskip("mindspore", reason="the mindspore extra is not installed")
torch = pytest.importorskip("torch", reason="the torch extra is not installed")
np = pytest.importorskip("numpy")

pytestmark = pytest.mark.mindspore
ms.set_device("CPU")
VERSIONS = ("2.6", "2.4", "1.10")


@pytest.mark.parametrize("version", VERSIONS)
def test_every_counterpart_exists_or_is_recorded_absent(version: str) -> None:
    table = read_table(mappings_root() / "mindspore" / f"api-{version}.toml")
    assert table["meta"]["checked-against"] == f"mindspore {ms.__version__}"
    wrong = []
    for row in table["mapping"]:
        absent = set(row.get("absent-in-mindspore", {}).get("names", ()))
        for name in row["mindspore"]:
            if not name.startswith("mindspore"):
                continue
            if exists(name) == (name in absent):
                wrong.append((row["torch"], name, "absent" if name in absent else "missing"))
    assert not wrong, wrong[:20]


def installed_default(api: str, param: str):
    obj = resolve(api)
    assert obj is not MISSING, api
    signature = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
    return signature.parameters[param].default


def test_every_default_a_trap_states_is_the_installed_one_or_recorded() -> None:
    traps = read_table(mappings_root() / "mindspore" / "traps.toml")["trap"]
    checked = 0
    for row in traps:
        if row["side"] != "mindspore" or "default" not in row:
            continue
        for api in row["apis"]:
            actual = installed_default(api, row["param"])
            recorded = row.get("default-installed")
            expected = recorded["value"] if recorded else row["default"]
            assert actual == expected, (row["rule"], api, row["param"], actual, expected)
            checked += 1
    assert checked >= 30


def test_every_trap_api_exists() -> None:
    for row in read_table(mappings_root() / "mindspore" / "traps.toml")["trap"]:
        for api in row["apis"]:
            assert exists(api), api


# --- the numbers ---------------------------------------------------------------------------
def test_dropout_first_positional_is_keep_prob() -> None:
    x = ms.ops.ones((200, 200), ms.float32)
    copied = ms.nn.Dropout(0.2)  # meant p=0.2 as in torch.nn.Dropout(0.2)
    copied.set_train()
    dropped = float((copied(x) == 0).astype(ms.float32).mean().asnumpy())
    assert 0.75 < dropped < 0.85  # keep_prob=0.2: 80% dropped
    fixed = ms.nn.Dropout(p=0.2)
    fixed.set_train()
    assert 0.15 < float((fixed(x) == 0).astype(ms.float32).mean().asnumpy()) < 0.25
    torch_drop = torch.nn.Dropout(0.2).train()
    assert 0.15 < float((torch_drop(torch.ones(200, 200)) == 0).float().mean()) < 0.25


def test_dropout_does_nothing_until_set_train() -> None:
    x = ms.ops.ones((100, 100), ms.float32)
    cell = ms.nn.Dropout(p=0.5)
    assert float((cell(x) == 0).astype(ms.float32).mean().asnumpy()) == 0.0


def test_batchnorm_momentum_is_one_minus_torchs() -> None:
    data = np.random.default_rng(0).normal(3.0, 1.0, size=(16, 4, 5, 5)).astype(np.float32)
    batch_mean = data.mean(axis=(0, 2, 3))

    def ms_running_mean(momentum: float):
        bn = ms.nn.BatchNorm2d(4, momentum=momentum)
        bn.set_train()
        bn(ms.Tensor(data))
        return bn.moving_mean.asnumpy()

    tbn = torch.nn.BatchNorm2d(4, momentum=0.1).train()
    tbn(torch.from_numpy(data))
    torch_mean = tbn.running_mean.numpy()
    np.testing.assert_allclose(torch_mean, 0.1 * batch_mean, rtol=1e-4)
    np.testing.assert_allclose(ms_running_mean(0.9), torch_mean, rtol=1e-4)  # 1 - 0.1
    copied = ms_running_mean(0.1)  # momentum=0.1 copied from PyTorch
    np.testing.assert_allclose(copied, 0.9 * batch_mean, rtol=1e-4)
    assert not np.allclose(copied, torch_mean, rtol=1e-2)


def test_topk_sorted_default_is_true_in_this_release() -> None:
    x = ms.Tensor(np.array([[1.0, 5.0, 3.0, 4.0, 2.0]], np.float32))
    values, indices = ms.ops.TopK()(x, 3)
    assert values.asnumpy().tolist() == [[5.0, 4.0, 3.0]]
    assert indices.asnumpy().tolist() == [[1, 3, 2]]
    assert torch.topk(torch.tensor([[1.0, 5.0, 3.0, 4.0, 2.0]]), 3).values.tolist() == [[5.0, 4.0, 3.0]]


def test_std_default_is_biased_unlike_torch() -> None:
    data = np.arange(10, dtype=np.float32)
    biased = float(ms.ops.std(ms.Tensor(data)).asnumpy())
    unbiased = float(torch.std(torch.from_numpy(data)))
    assert math.isclose(biased * math.sqrt(10 / 9), unbiased, rel_tol=1e-5)
    assert math.isclose(float(ms.ops.std(ms.Tensor(data), ddof=1).asnumpy()), unbiased, rel_tol=1e-5)


def test_layernorm_epsilon_default_differs() -> None:
    assert installed_default("mindspore.nn.LayerNorm", "epsilon") == 1e-7
    assert torch.nn.LayerNorm(4).eps == 1e-5


def test_conv_defaults_pad_and_drop_the_bias() -> None:
    x = ms.ops.ones((1, 3, 8, 8), ms.float32)
    conv = ms.nn.Conv2d(3, 4, 3)
    assert conv(x).shape == (1, 4, 8, 8)  # pad_mode='same'
    assert conv.bias is None  # has_bias=False
    assert torch.nn.Conv2d(3, 4, 3)(torch.ones(1, 3, 8, 8)).shape == (1, 4, 6, 6)


def test_unique_returns_a_tuple_in_order_of_appearance() -> None:
    data = np.array([3, 1, 3, 2], np.int32)
    output, inverse = ms.ops.unique(ms.Tensor(data))
    assert output.asnumpy().tolist() == [3, 1, 2]  # not sorted
    assert inverse.asnumpy().tolist() == [0, 1, 0, 2]
    assert torch.unique(torch.from_numpy(data)).tolist() == [1, 2, 3]
    # mint.unique has no CPU kernel in 2.10; its parameters are torch.unique's
    assert list(inspect.signature(ms.mint.unique).parameters) == [
        "input", "sorted", "return_inverse", "return_counts", "dim"]


def test_unfold_counterparts_take_torchs_arguments() -> None:
    assert list(inspect.signature(ms.nn.Unfold.__init__).parameters)[1:4] == ["ksizes", "strides", "rates"]
    x = np.arange(2 * 4 * 4, dtype=np.float32).reshape(1, 2, 4, 4)
    expected = torch.nn.Unfold(2)(torch.from_numpy(x)).numpy()  # (N, C*prod(k), L) = (1, 8, 9)
    np.testing.assert_array_equal(ms.ops.unfold(ms.Tensor(x), 2).asnumpy(), expected)
    # mint.nn.Unfold has no CPU kernel in 2.10; its parameters are torch.nn.Unfold's
    assert inspect.signature(ms.mint.nn.Unfold.__init__).parameters.keys() == \
        inspect.signature(torch.nn.Unfold.__init__).parameters.keys()


def test_clip_by_norm_clips_gradient_tensors() -> None:
    grads = (ms.Tensor(np.array([3.0, 4.0], np.float32)),)
    clipped = ms.ops.clip_by_norm(grads, 1.0)
    np.testing.assert_allclose(clipped[0].asnumpy(), [0.6, 0.8], rtol=1e-5)
    parameter = torch.nn.Parameter(torch.ones(2))
    parameter.grad = torch.tensor([3.0, 4.0])
    torch.nn.utils.clip_grad_norm_([parameter], 1.0)  # in place on .grad
    np.testing.assert_allclose(parameter.grad.numpy(), [0.6, 0.8], rtol=1e-5)


def test_conv_transpose_has_output_padding_unlike_the_24_docs() -> None:
    # P10 says Conv2dTranspose has no output_padding (r2.4 docs); 2.10 has it, so no rule claims so.
    assert installed_default("mindspore.nn.Conv2dTranspose", "output_padding") == 0
