"""Targets and training: the set Lipschitz constant, vmapped = sequential, determinism, the paper's claims."""

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from paperkit.methods.var_approx import targets
from paperkit.methods.var_approx.train import Problem, fit, fit_seeds, make_data, sliced_wasserstein

SMALL = Problem(width=8, embed=8, steps=10, n_train=64, n_test=32, batch_size=16)


@pytest.mark.parametrize("lip", [1.0, 4.0, 16.0])
def test_fourier_lipschitz_estimate_within_20_percent(lip):
    t = targets.fourier_target((2, 2), 4, 8, lip, np.random.default_rng(0))
    est = targets.lipschitz_estimate(t, (2, 2), 4, 2000, np.random.default_rng(1))
    assert 0.8 * lip <= est <= lip * (1 + 1e-9)
    x = torch.full((1, 2, 2, 4), 0.5, dtype=torch.float64, requires_grad=True)
    jac = torch.autograd.functional.jacobian(lambda v: t(v).reshape(-1), x).reshape(64, -1)
    assert abs(float(torch.linalg.matrix_norm(jac, ord=2)) - lip) < 1e-9    # the maximum, reached at the centre


def test_context_pixels_depend_on_two_different_tokens():
    t = targets.context_target((2, 2), 3, 4, np.random.default_rng(0))
    x = torch.rand(1, 2, 2, 3, dtype=torch.float64)
    jac = torch.autograd.functional.jacobian(lambda v: t(v).reshape(-1), x).reshape(16, 4, 3)
    used = (jac.abs().sum(-1) > 0).sum(-1)
    assert (used == 2).all()


def test_digits_target_interpolates_the_images():
    t = targets.digits_target((2, 2), 1, 8, 4, 0.01)
    code, images = targets.digits_codebook(4, 8)
    x = torch.from_numpy(code[:5]).reshape(5, 2, 2, 1)
    assert np.abs(t(x)[..., 0].numpy() - images[:5]).max() < 0.05    # tiny bandwidth: the nearest image


def test_vmapped_training_equals_sequential_per_seed():
    p = SMALL
    seq = [fit(p, s, dtype=torch.float64).metrics for s in (0, 1, 2)]
    vm = fit_seeds(p, (0, 1, 2), dtype=torch.float64)
    for a, b in zip(seq, vm, strict=True):
        for k in ("train_rmse", "test_rmse", "test_rel_l2"):
            assert abs(a[k] - b[k]) < 1e-6
    assert seq[0]["test_rmse"] != seq[1]["test_rmse"]


@pytest.mark.parametrize("ablate", ["none", "no-attn", "no-pyramid", "two-layer", "mlp", "linear"])
def test_every_variant_trains_and_same_seed_is_identical(ablate):
    p = Problem(**{**SMALL.__dict__, "ablate": ablate, "mask": "block", "readout": "pyramid"})
    a, b = fit(p, 3).metrics, fit(p, 3).metrics
    assert a == b and np.isfinite(a["test_rmse"])
    if ablate == "mlp":
        ref = fit(Problem(**{**p.__dict__, "ablate": "none"}), 3).metrics["parameters"]
        assert abs(a["parameters"] - ref) / ref < 0.1


def test_linear_floor_is_least_squares():
    p = Problem(**{**SMALL.__dict__, "ablate": "linear", "target": "context"})
    d = make_data(p, 0, torch.float64)
    design = np.c_[d.x_train.reshape(len(d.x_train), -1).numpy(), np.ones(len(d.x_train))]
    coef = np.linalg.lstsq(design, d.y_train.reshape(len(d.y_train), -1).numpy(), rcond=None)[0]
    res = design @ coef - d.y_train.reshape(len(d.y_train), -1).numpy()
    assert abs(fit(p, 0).metrics["train_rmse"] - np.sqrt((res ** 2).mean())) < 1e-5


def test_sliced_wasserstein_is_zero_for_equal_sets_and_grows_with_a_shift():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(200, 5, generator=g)
    assert sliced_wasserstein(a, a[torch.randperm(200, generator=g)], 32, g) < 1e-12
    assert sliced_wasserstein(a, a + 1.0, 32, g) > sliced_wasserstein(a, a + 0.1, 32, g)


def test_context_needs_attention_small():
    """Scaled-down CI version of the attention claim (the heavy one is below)."""
    base = dict(target="context", width=16, embed=16, steps=200, n_train=256, n_test=128, dim=2)
    att = fit(Problem(**base), 0).metrics["test_rmse"]
    no = fit(Problem(**base, ablate="no-attn"), 0).metrics["test_rmse"]
    assert att < no


WIDTHS = (8, 16, 32, 64, 128, 256)


@pytest.fixture(scope="module")
def width_fits():
    """fourier L = 2, d = 4 at the defaults (D = 32, 1,500 steps, Adam 3e-3), three seeds vmapped per width."""
    fits = {}
    for w in WIDTHS:
        fits[w] = fit_seeds(Problem(lipschitz=2.0, width=w), (0, 1, 2))
        print(f"\nwidth {w}: test RMSE {[round(m['test_rmse'], 5) for m in fits[w]]}, "
              f"rel L2 {[round(m['test_rel_l2'], 3) for m in fits[w]]}", flush=True)
    med = [float(np.median([m["test_rmse"] for m in fits[w]])) for w in WIDTHS]
    rel = {w: float(np.median([m["test_rel_l2"] for m in fits[w]])) for w in WIDTHS}
    print(f"\nwidth scaling: median test RMSE {dict(zip(WIDTHS, med, strict=True))}, median test rel L2 {rel}")
    return med, rel


@pytest.mark.heavy
def test_width_scaling_on_fourier(width_fits):
    med, _ = width_fits
    assert spearmanr(WIDTHS, med)[0] <= -0.8, med


@pytest.mark.heavy
@pytest.mark.xfail(strict=True, reason="not met at the spec's defaults: the one-head model is still leaving its "
                   "plateau after 1,500 steps (median rel L2 0.20 over 3 seeds at width 256; 0.12 after 4,000 "
                   "steps, seed 0; standardised targets, Adam beta2 0.95, 5% warm-up and a cosine decay from 1.5e-2 "
                   "give 0.090-0.091 on three validation seeds, not a default yet); measured tables and cause "
                   "in examples/var_approx/README.md")
def test_relative_l2_below_0_1_at_width_256(width_fits):
    assert width_fits[1][256] < 0.1, width_fits[1]


@pytest.mark.heavy
def test_attention_halves_context_error():
    att = fit(Problem(target="context"), 0).metrics["test_rmse"] ** 2
    no = fit(Problem(target="context", ablate="no-attn"), 0).metrics["test_rmse"] ** 2
    print(f"\ncontext: attention MSE {att:.4g}, no-attn MSE {no:.4g}, ratio {att / no:.2f}")
    assert att <= 0.5 * no


@pytest.mark.heavy
def test_error_rises_with_lipschitz_at_width_32():
    errs = [float(np.median([m["test_rel_l2"] for m in fit_seeds(Problem(lipschitz=lip, width=32), (0, 1, 2))]))
            for lip in (1.0, 4.0, 16.0)]
    print(f"\nwidth 32: median test rel L2 at L = 1, 4, 16: {errs}")
    assert errs[0] < errs[1] < errs[2]


@pytest.mark.heavy
def test_flow_head_close_to_regress_and_sw_falls():
    reg = fit(Problem(lipschitz=2.0), 0).metrics["test_rmse"] ** 2
    flow = fit(Problem(lipschitz=2.0, head="flow"), 0).metrics
    print(f"\nflow: sample-mean MSE {flow['sample_mean_mse']:.4g} vs regress {reg:.4g}; sliced W "
          f"{flow['sliced_wasserstein_start']:.4g} -> {flow['sliced_wasserstein_end']:.4g}")
    assert flow["sample_mean_mse"] <= 2 * reg
    assert flow["sliced_wasserstein_end"] < flow["sliced_wasserstein_start"]
