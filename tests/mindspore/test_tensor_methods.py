"""The claims of MS260–MS262 (rules/ms2xx_traps.py), run on MindSpore and torch on the CPU:
each difference is real in the installed MindSpore, and each fix gives torch's answer."""

from __future__ import annotations

import pytest

ms = pytest.importorskip("mindspore", reason="the mindspore extra is not installed")
torch = pytest.importorskip("torch", reason="the torch extra is not installed")
np = pytest.importorskip("numpy")

pytestmark = pytest.mark.mindspore
ms.set_device("CPU")
DATA = np.array([[1.0, 5.0, 3.0, 8.0], [4.0, 2.0, 6.0, 7.0]], dtype=np.float32)


@pytest.mark.parametrize("method", ["std", "var"])
def test_ms260_default_ddof_differs_and_the_fix_matches(method: str) -> None:
    x, t = ms.Tensor(DATA), torch.tensor(DATA)
    population = float(getattr(x, method)().asnumpy())
    unbiased = float(getattr(t, method)())
    assert population == pytest.approx(float(getattr(np, method)(DATA, ddof=0)), rel=1e-6)
    assert population < unbiased
    assert float(getattr(x, method)(ddof=1).asnumpy()) == pytest.approx(unbiased, rel=1e-6)
    along = getattr(x, method)(axis=1, ddof=1).asnumpy()
    assert np.allclose(along, getattr(t, method)(dim=1).numpy(), rtol=1e-6)


def test_ms261_median_without_arguments() -> None:
    x, t = ms.Tensor(DATA), torch.tensor(DATA)
    values, indices = x.median()  # MindSpore: along the last axis, a pair
    assert values.shape == (2,) and indices.shape == (2,)
    assert t.median().dim() == 0  # torch: one scalar over every element
    assert float(t.median()) == 4.0


def test_ms262_size_is_a_property() -> None:
    x, t = ms.Tensor(DATA), torch.tensor(DATA)
    assert x.size == 8
    with pytest.raises(TypeError, match="not callable"):
        x.size(0)
    assert x.shape[0] == t.size(0) and tuple(x.shape) == tuple(t.size())
