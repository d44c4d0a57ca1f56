"""Φ_up against its definition: token count, constants, linearity, an independent bicubic, the block mask."""

import numpy as np
import pytest
import torch

from paperkit.core.errors import UsageError
from paperkit.methods.var_approx import pyramid as pyr


def keys_bicubic_1d(n_in: int, n_out: int, a: float = -0.75) -> np.ndarray:
    """The (n_out, n_in) matrix of Keys' cubic convolution, half-pixel centres, borders clamped."""
    def w(t):
        t = abs(t)
        if t <= 1:
            return (a + 2) * t**3 - (a + 3) * t**2 + 1
        if t < 2:
            return a * t**3 - 5 * a * t**2 + 8 * a * t - 4 * a
        return 0.0

    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        src = (i + 0.5) * n_in / n_out - 0.5
        base = int(np.floor(src))
        for k in range(base - 1, base + 3):
            m[i, min(max(k, 0), n_in - 1)] += w(src - k)
    return m


def test_pyramid_length_is_sum_of_map_sizes():
    x = torch.rand(3, 2, 2, 4)
    tokens = pyr.up_pyramid(x, (2, 4, 8))
    assert tokens.shape == (3, 4 + 16 + 64, 4) and pyr.token_count((2, 4, 8), (2, 2)) == 84
    assert pyr.token_count(pyr.VAR_SCALES, (1, 1)) == 680          # VAR's 680-token sequence
    assert pyr.up_pyramid(torch.rand(1, 1, 1, 2), (1, 3, 5)).shape[1] == 1 + 9 + 25


def test_constant_input_gives_constant_maps():
    x = torch.full((1, 1, 1, 3), 0.7, dtype=torch.float64) * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    tokens = pyr.up_pyramid(x, (1, 2, 4, 8))
    assert torch.allclose(tokens, x.reshape(1, 1, 3).expand_as(tokens), atol=1e-12)


def test_pyramid_is_linear():
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(2, 2, 2, 4, generator=g), torch.rand(2, 2, 2, 4, generator=g)
    lhs = pyr.up_pyramid(2.5 * a - 1.5 * b, (2, 4, 8))
    rhs = 2.5 * pyr.up_pyramid(a, (2, 4, 8)) - 1.5 * pyr.up_pyramid(b, (2, 4, 8))
    assert (lhs - rhs).abs().max() < 1e-6


def test_pyramid_equals_an_independent_bicubic():
    x = np.random.default_rng(1).uniform(0, 1, (2, 3, 3, 2))
    maps = pyr.up_pyramid(torch.from_numpy(x), (3, 5, 9), maps=True)
    cur = x
    for m, side in zip(maps[1:], (5, 9), strict=True):
        k = keys_bicubic_1d(cur.shape[1], side)
        cur = np.einsum("ih,jw,nhwc->nijc", k, k, cur)
        assert np.abs(m.numpy() - cur).max() < 1e-12


def test_block_mask_sees_exactly_the_scales_up_to_its_own():
    mask = pyr.block_mask((2, 4, 8), (2, 2))
    scale = pyr.scale_index((2, 4, 8), (2, 2))
    for i in (0, 3, 4, 19, 20, 83):
        assert set(scale[mask[i]]) == set(range(scale[i] + 1))
        assert mask[i].sum() == sum(s * s for s in (2, 4, 8)[: scale[i] + 1])
    assert pyr.attention_pairs((2, 4, 8), (2, 2), "none") == 84 * 84


@pytest.mark.parametrize("text, init, words", [("4,2,8", (2, 2), "increasing"), ("1,4", (2, 2), "below"),
                                               ("2,x", (2, 2), "side lengths"), ("geom:2:3:5", (2, 2), "repeated")])
def test_bad_scales(text, init, words):
    with pytest.raises(UsageError, match=words):
        pyr.check_scales(pyr.parse_scales(text), init)


def test_scale_rules_and_init():
    assert pyr.parse_scales("var") == pyr.VAR_SCALES
    assert pyr.parse_scales("geom:2:16:4") == (2, 4, 8, 16)
    assert pyr.parse_init("2x3") == (2, 3)
    with pytest.raises(UsageError, match="HxW"):
        pyr.parse_init("2by2")
