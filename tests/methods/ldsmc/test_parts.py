"""Operators, schedule, metrics and training checked against closed forms and independent references."""

import numpy as np
import pytest
import torch

from paperkit.core.errors import InputError
from paperkit.methods.ldsmc import metrics, operators
from paperkit.methods.ldsmc.models import Schedule, ddim_coefficients


def test_ddim_eta1_is_the_ddpm_posterior_variance():
    s = Schedule(200)
    betas = torch.linspace(1e-4, 0.02, 200, dtype=torch.float64)
    for t in (1, 50, 199):
        _, _, sigma, c = ddim_coefficients(s, t, t - 1)
        ddpm = (1 - s.abar(t - 1)) / (1 - s.abar(t)) * float(betas[t])
        assert sigma**2 == pytest.approx(ddpm, rel=1e-9)
        assert c**2 + sigma**2 == pytest.approx(1 - s.abar(t - 1), rel=1e-9)
    ts = s.timesteps(25)
    assert ts[0] == 199 and ts[-1] == 0 and len(ts) == 26 and ts == sorted(ts, reverse=True)


def test_operators_are_linear_with_a_right_inverse():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 1, 16, 16, generator=g)
    for task in operators.TASKS:
        op = operators.make_operator(task, 3, (1, 16, 16), seed=1)
        a, b = torch.randn(x.shape, generator=g), torch.randn(x.shape, generator=g)
        torch.testing.assert_close(op(2 * a - b), 2 * op(a) - op(b), atol=1e-5, rtol=1e-5)
        if task != "blur":  # the blur's inverse is regularised
            y = op(x)
            torch.testing.assert_close(op(op.pinv(y)), y, atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(op(op.project(a, y)), y, atol=1e-5, rtol=1e-5)
    A = torch.randn(40, 256, generator=g)  # a wide dense matrix: full row rank, so A A⁺ = I
    op = operators.MatrixOperator(A)
    y = op(x)
    torch.testing.assert_close(op(op.pinv(y)), y, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(op(op.project(a, y)), y, atol=1e-4, rtol=1e-4)


def test_blur_matches_a_direct_circular_convolution():
    op = operators.GaussianBlur(5, 1.0, (1, 16, 16))
    x = np.random.default_rng(0).normal(size=(16, 16))
    k = op.kernel.numpy()
    ref = np.zeros_like(x)
    for i in range(16):
        for j in range(16):
            for u in range(5):
                for v in range(5):
                    ref[i, j] += k[u, v] * x[(i + u - 2) % 16, (j + v - 2) % 16]
    got = op(torch.tensor(x, dtype=torch.float32)[None, None])[0, 0].numpy()
    np.testing.assert_allclose(got, ref, atol=1e-5)


def test_masks_are_explicit_and_seeded():
    m = operators.box_mask(2, (1, 16, 16), 8)
    assert m[0, 0, 4:12, 4:12].sum() == 0 and m.sum() == 2 * (256 - 64)
    m = operators.box_mask(1, (1, 16, 16), 4, top=0, left=12)
    assert m[0, 0, 0:4, 12:16].sum() == 0
    a = operators.make_operator("box", 4, (1, 16, 16), seed=3, random_box=True).mask
    b = operators.make_operator("box", 4, (1, 16, 16), seed=3, random_box=True).mask
    c = operators.make_operator("random", 4, (1, 16, 16), seed=3, missing=0.5).mask
    assert torch.equal(a, b) and not torch.equal(a[0], a[1])
    assert float(c[0].mean()) == pytest.approx(0.5, abs=1 / 256)
    with pytest.raises(InputError, match="covers everything"):
        operators.box_mask(1, (1, 16, 16), 16)
    with pytest.raises(InputError, match="hides no pixel"):
        operators.check_mask(np.ones((16, 16)), (1, 16, 16))
    with pytest.raises(InputError, match="observes no pixel"):
        operators.check_mask(np.zeros((16, 16)), (1, 16, 16))
    with pytest.raises(InputError, match="τ"):
        operators.measure(operators.SuperRes(2), torch.zeros(1, 1, 16, 16), 0.0)


def test_measurement_noise_is_tau_on_observed_pixels_only():
    op = operators.make_operator("box", 64, (1, 16, 16))
    y = operators.measure(op, torch.zeros(64, 1, 16, 16), 0.1, seed=0)
    obs = op.mask.bool()
    assert float(y[obs].std()) == pytest.approx(0.1, rel=0.03)
    assert float(y[~obs].abs().max()) == 0.0


def test_psnr_ssim_frechet_against_closed_forms():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(4, 1, 16, 16))
    noisy = x + 0.1
    assert metrics.psnr(noisy, x) == pytest.approx(10 * np.log10(4 / 0.01))
    np.testing.assert_allclose(metrics.ssim(x, x), 1.0)
    assert (metrics.ssim(x + rng.normal(0, 0.5, x.shape), x) < 0.9).all()
    # constant images: SSIM reduces to the luminance term (2μxμy + c1)/(μx² + μy² + c1)
    c1 = (0.01 * 2) ** 2
    got = metrics.ssim(np.full((1, 1, 16, 16), 0.2), np.full((1, 1, 16, 16), -0.3))
    assert got[0] == pytest.approx((2 * 0.2 * -0.3 + c1) / (0.04 + 0.09 + c1))
    # Fréchet distance of 1-D Gaussians: (μ1 − μ2)² + (σ1 − σ2)²
    a, b = rng.normal(1.0, 2.0, (200000, 1)), rng.normal(-0.5, 1.0, (200000, 1))
    assert metrics.frechet_distance(a, b) == pytest.approx(1.5**2 + 1.0**2, rel=0.02)
    hole = np.ones((1, 1, 16, 16))
    hole[..., :8, :] = 0
    z = np.zeros((1, 1, 16, 16))
    z[..., :8, :] = 1.0
    assert metrics.masked_mse(z, np.zeros_like(z), hole)[0] == pytest.approx(1.0)


def test_training_resumes_exactly():
    """An interrupted run continued from its checkpoint gives the same weights as an uninterrupted one."""
    from paperkit.methods.ldsmc.data import render_shapes
    from paperkit.methods.ldsmc.train import train_vae

    torch.set_num_threads(1)
    x, _ = render_shapes(64, seed=0)
    full, log_full = train_vae(x, iters=12, batch=16, width=8, seed=0)
    saved = {}
    train_vae(x, iters=12, batch=16, width=8, seed=0, save=lambda s: saved.setdefault(s["step"], s), save_every=6)
    resumed, log_res = train_vae(x, iters=12, batch=16, width=8, seed=0, state=saved[6])
    for (k, a), b in zip(full.state_dict().items(), resumed.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=k)
    assert log_full == log_res


def test_mismatched_checkpoints_are_refused(tmp_path):
    from paperkit.methods.ldsmc import train as tr
    from paperkit.methods.ldsmc.models import ConvVAE, EpsMLP

    vae = ConvVAE(1, 2, 8)
    tr.save_vae(tmp_path / "vae.pt", vae, shift=0.0, scale=1.0, recon_rmse=0.1, data="digits")
    tr.save_ldm(tmp_path / "ldm.pt", EpsMLP((3, 4, 4), 16, 1), Schedule(10))
    with pytest.raises(InputError, match="latent shape"):
        tr.load_prior(tmp_path)
    tr.save_ldm(tmp_path / "ldm.pt", EpsMLP((2, 4, 4), 16, 1), Schedule(10))
    ck = torch.load(tmp_path / "vae.pt", weights_only=False)
    ck["state_dict"] = ConvVAE(1, 2, 16).state_dict()  # weights of another width
    torch.save(ck, tmp_path / "vae.pt")
    with pytest.raises(InputError, match="do not match"):
        tr.load_prior(tmp_path)
    (tmp_path / "vae.pt").write_bytes(b"garbage")
    with pytest.raises(InputError, match="not a readable"):
        tr.load_prior(tmp_path)


def test_offline_data():
    from paperkit.methods.ldsmc.data import load_dataset, load_digits16

    tr, ytr = load_digits16("train")
    va, yva = load_digits16("val")
    te, yte = load_digits16("test")
    assert tr.shape[1:] == (1, 16, 16) and len(tr) + len(va) + len(te) == 1797 and 190 <= len(te) <= 210
    assert 190 <= len(va) <= 210 and set(yva) == set(range(10))
    # the validation images (tuning) are none of the test images (the tables) nor of the training images
    flat = {split: {a.tobytes() for a in x} for split, x in (("train", tr), ("val", va), ("test", te))}
    assert not flat["val"] & flat["test"] and not flat["val"] & flat["train"]
    assert tr.min() >= -1 and tr.max() <= 1 and set(yte) == set(range(10))
    a, _ = load_dataset("shapes", "train", seed=0)
    b, _ = load_dataset("shapes", "test", seed=0)
    c, _ = load_dataset("shapes", "test", seed=5)
    assert a.shape == (2000, 1, 16, 16) and np.array_equal(b, c)
    assert not any(np.array_equal(b[0], x) for x in a[:200])


def test_ctrl_c_while_the_digits_classifier_trains_is_not_swallowed(monkeypatch):
    """scikit-learn's MLP catches KeyboardInterrupt, warns and returns a half-trained model, which ldsmc-train
    then saved as a finished stage (exit 0). The interrupt now goes on."""
    import numpy as np
    import pytest
    from sklearn.neural_network import MLPClassifier

    from paperkit.methods.ldsmc.metrics import DigitsClassifier

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(MLPClassifier, "_backprop", interrupted)
    rng = np.random.default_rng(0)
    with pytest.raises(KeyboardInterrupt):
        DigitsClassifier(8).fit(rng.random((20, 16, 16)), np.arange(20) % 2, max_iter=5)
