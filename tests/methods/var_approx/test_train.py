"""Targets and training: the set Lipschitz constant, vmapped = sequential, determinism, the paper's claims."""

from dataclasses import replace

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from paperkit.methods.var_approx import targets
from paperkit.methods.var_approx.train import (
    Problem,
    fit,
    fit_seeds,
    lr_at,
    make_data,
    new_model,
    sliced_wasserstein,
)

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


def test_warmup_cosine_schedule():
    p = Problem(steps=100, lr=0.01, warmup_frac=0.1)
    lrs = [lr_at(p, k) for k in range(100)]
    assert lrs[0] == pytest.approx(0.001) and lrs[9] == pytest.approx(0.01) and lrs[10] == pytest.approx(0.01)
    assert lrs[55] == pytest.approx(0.005) and 0 < lrs[99] < 1e-5
    assert all(a > b for a, b in zip(lrs[10:], lrs[11:], strict=False))
    assert {lr_at(replace(p, lr_schedule="constant"), k) for k in (0, 50, 99)} == {0.01}


def test_standardised_targets_are_reported_in_the_targets_units():
    """The model learns (y - mean)/std; its outputs, predictions and errors are in the targets' units."""
    p = replace(SMALL, steps=1)
    d = make_data(p, 0, torch.float64)
    model = new_model(p, 0, torch.float64, d.y_train)
    assert float(model.target_std[0]) == pytest.approx(float(d.y_train.std()), rel=1e-9)
    feats = model.features(d.x_train)
    with torch.no_grad():
        raw, out = model(feats, standardized=True), model(feats)
    assert torch.allclose(out, raw * d.y_train.std() + d.y_train.mean(), atol=1e-12)
    plain = new_model(replace(p, standardize_targets=False), 0, torch.float64, d.y_train)
    with torch.no_grad():
        assert torch.equal(plain(feats), plain(feats, standardized=True))
    # an untrained standardised model predicts about the target's spread; the raw one is far off scale
    assert 0.3 < fit(p, 0, dtype=torch.float64).metrics["test_rmse"] / float(d.y_test.std()) < 3


def test_vmapped_equals_sequential_with_the_spec_optimiser():
    p = replace(SMALL, lr=3e-3, lr_schedule="constant", beta2=0.999, standardize_targets=False)
    seq = [fit(p, s, dtype=torch.float64).metrics for s in (0, 1)]
    vm = fit_seeds(p, (0, 1), dtype=torch.float64)
    for a, b in zip(seq, vm, strict=True):
        assert abs(a["test_rmse"] - b["test_rmse"]) < 1e-6


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
    """fourier L = 2, d = 4 at the defaults (D = 32, 1,500 steps, Adam: 5% warm-up + cosine from 1.5e-2, beta2 0.95,
    standardised targets), three seeds vmapped per width."""
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
