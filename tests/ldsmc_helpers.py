"""The tiny digits prior (VAE + latent DDPM + classifier) shared by tests/methods/ldsmc and tests/cli/test_ldsmc.py,
trained once per test process (in seconds) whichever of them asks first; benchmarks/ldsmc_restore.py uses it too."""

import time

TINY = {"vae_iters": 400, "vae_width": 16, "vae_batch": 64, "ldm_iters": 1500, "ldm_width": 128, "ldm_depth": 2}

_BUILT = {}  # one prior per process


def tiny_model_dir(tmp_path_factory):
    """Folder with vae.pt, ldm.pt and classifier.npz, laid out as 'paperkit ldsmc-train' writes it."""
    if "dir" not in _BUILT:
        _BUILT["dir"] = build_tiny_model(tmp_path_factory.mktemp("ldsmc_model"))
    return _BUILT["dir"]


def build_tiny_model(d, sizes=None):
    """Train the prior into folder ``d``; ``sizes`` overrides entries of TINY (the benchmark's --quick)."""
    import torch

    from paperkit.methods.ldsmc import train as tr
    from paperkit.methods.ldsmc.data import load_digits16
    from paperkit.methods.ldsmc.metrics import DigitsClassifier
    from paperkit.methods.ldsmc.run import CLASSIFIER_FILE, save_classifier

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # more threads than idle cores is far slower on a shared machine
    start = time.perf_counter()
    size = {**TINY, **(sizes or {})}
    x, y = load_digits16("train")
    xt, _ = load_digits16("test")
    vae, _ = tr.train_vae(x, iters=size["vae_iters"], width=size["vae_width"], batch=size["vae_batch"], seed=0)
    lat, shift, scale = tr.latent_stats(vae, x)
    eps, sched, _ = tr.train_ldm((lat - shift) / scale, iters=size["ldm_iters"], width=size["ldm_width"],
                                 depth=size["ldm_depth"], seed=0)
    tr.save_vae(d / tr.VAE_FILE, vae, shift=shift, scale=scale, recon_rmse=tr.reconstruction_rmse(vae, xt),
                data="digits")
    tr.save_ldm(d / tr.LDM_FILE, eps, sched)
    save_classifier(d / CLASSIFIER_FILE, DigitsClassifier().fit(x, y, max_iter=40))
    torch.set_num_threads(threads)
    d.joinpath("train_seconds.txt").write_text(f"{time.perf_counter() - start:.1f}\n")
    return d
