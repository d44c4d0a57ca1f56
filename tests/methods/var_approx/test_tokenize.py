"""VAR's multi-scale residual quantizer: layout, an independent numpy cascade, lossless codebooks, error per K."""

import numpy as np
import pytest

from paperkit.core.errors import UsageError
from paperkit.methods.var_approx import tokenize as tk

from .test_pyramid import keys_bicubic_1d


def test_space_to_depth_puts_each_patch_in_the_channels():
    img = np.arange(16.0).reshape(1, 4, 4)
    maps = tk.space_to_depth(img, 2)
    assert maps.shape == (1, 2, 2, 4)
    assert maps[0, 0, 1].tolist() == [2.0, 3.0, 6.0, 7.0]           # the top-right 2x2 patch, row-major
    assert np.array_equal(tk.depth_to_space(maps, 2), img)


def numpy_cascade(maps, scales, books):
    """The cascade written out independently: block means down, Keys' bicubic matrices up, brute-force
    nearest codeword."""
    side = maps.shape[1]
    rest, hat, out = maps.copy(), np.zeros_like(maps), []
    for k, n in enumerate(scales):
        b = side // n
        down = rest.reshape(len(maps), n, b, n, b, -1).mean(axis=(2, 4))
        q = np.empty_like(down)
        for idx in np.ndindex(*down.shape[:3]):
            q[idx] = books[k][np.argmin([np.sum((down[idx] - c) ** 2) for c in books[k]])]
        up = keys_bicubic_1d(n, side)
        step = np.einsum("ih,jw,nhwc->nijc", up, up, q)
        hat, rest = hat + step, rest - step
        out.append(hat.copy())
    return out


def test_cascade_equals_an_independent_numpy_cascade():
    rng = np.random.default_rng(0)
    maps = rng.uniform(0, 1, (3, 8, 8, 2))
    books = [rng.uniform(-0.5, 1, (5, 2)) for _ in range(4)]
    ours = tk.encode(maps, (1, 2, 4, 8), books)
    ref = numpy_cascade(maps, (1, 2, 4, 8), books)
    for a, b in zip(ours, ref, strict=True):
        assert np.abs(a - b).max() < 1e-12


def test_unquantized_cascade_starts_at_the_mean_and_ends_exact():
    maps = np.random.default_rng(1).uniform(0, 1, (4, 8, 8, 1))
    hats = tk.residual_cascade(maps, (1, 3, 8), lambda k, down: down)
    assert np.abs(hats[0] - maps.mean(axis=(1, 2), keepdims=True)).max() < 1e-12   # 1x1: the image mean
    assert np.abs(hats[-1] - maps).max() < 1e-12                                   # last scale: the residual


def test_as_many_codewords_as_tokens_is_lossless():
    maps = np.random.default_rng(2).uniform(0, 1, (3, 4, 4, 2))
    books = tk.fit_codebooks(maps, (1, 2, 4), 1000, 0, n_init=1)
    assert [len(b) for b in books] == [3, 12, 48]                    # one codeword per distinct token
    lossless = tk.encode(maps, (1, 2, 4), books)
    exact = tk.residual_cascade(maps, (1, 2, 4), lambda k, down: down)
    for a, b in zip(lossless, exact, strict=True):
        assert np.abs(a - b).max() < 1e-9


def test_error_falls_with_scales_and_codewords():
    def rows(codebook):
        s = tk.TokenizeSettings(side=8, scales="1,2,4,8", codebook=codebook, n_images=80, n_test=30)
        inputs = tk.prepare_tokenize(s)
        return tk.error_rows(inputs, tk.fit_codebooks(inputs.train, inputs.scales, codebook, 0, n_init=1))

    few, many = rows(4), rows(32)
    assert all(b["train_rmse"] < a["train_rmse"] for a, b in zip(few, few[1:], strict=False))
    assert many[-1]["test_rmse"] < few[-1]["test_rmse"]
    assert many[-1]["test_rmse_unquantized"] < 1e-12 and many[-1]["tokens"] == 1 + 4 + 16 + 64
    assert few[-1]["bits"] == 2 * 85


@pytest.mark.parametrize("over, words", [({"scales": "1,2,4"}, "last scale"), ({"scales": "2,1,16"}, "increasing"),
                                         ({"patch": 3}, "divide"), ({"codebook": 1}, "--codebook"),
                                         ({"n_test": 1797}, "--n-test")])
def test_bad_settings(over, words):
    with pytest.raises(UsageError, match=words):
        tk.prepare_tokenize(tk.TokenizeSettings(**over))
