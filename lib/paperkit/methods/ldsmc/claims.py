"""Headline claims of Achituve et al. (2025), LD-SMC, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Order
from paperkit.reproduce.measures import rows
from paperkit.reproduce.registry import Claim

# The digits prior of examples/demo/50-ldsmc.sh (the example's train.yaml trains for many minutes: --full).
_TRAIN = ("ldsmc-train", "--vae-iters", "80", "--ldm-iters", "300", "--vae-width", "16", "--ldm-width", "128",
          "--classifier-iters", "20", "-j", "1", "--seed", "0", "--run-dir", "{dir}/model", "-q")
_FULL_TRAIN = ("ldsmc-train", "--config", "{examples}/ldsmc/configs/train.yaml", "--seed", "0",
               "--run-dir", "{dir}/model", "-q")


def _bench(n_images: str, n_seeds: str) -> tuple[str, ...]:
    """LD-SMC (N = 8) and latent DPS at the defaults on box inpainting of the test digits."""
    return ("ldsmc-bench", "--model", "{dir}/model", "--task", "box", "--tau", "0.05", "--n-images", n_images,
            "--n-seeds", n_seeds, "--particles", "8", "--methods", "ldsmc,ldps", "--seed", "{seed}", "-j", "1",
            "--run-dir", "{dir}/bench", "-q")


def _metrics(d):
    out = {}
    for r in rows(d / "bench" / "bench.csv"):
        out.update({f"{k}_{r['method']}": float(r[k]) for k in ("accuracy", "fd", "psnr")})
    return out


def _claim(metric: str, higher: bool, what: str) -> Claim:
    return Claim(f"ldsmc/inpainting-{metric}", "ldsmc-restore",
                 f"LD-SMC (N = 8) restores box-inpainted images with a better {what} than latent DPS.",
                 "Table 1 (box inpainting; FID there)", "LD-SMC ahead of LDPS, PSLD on FID",
                 (_TRAIN, _bench("8", "1")), _metrics,
                 Order(f"{metric}_ldsmc", f"{metric}_ldps", higher_is_better=higher), seeds=(0, 1),
                 full_steps=(_FULL_TRAIN, _bench("64", "5")), full_seeds=(0,), quick_s=110, full_s=1800,
                 figure="bench/grid.png",
                 notes="the Fréchet digits distance (a digits classifier's features) stands in for FID offline")


CLAIMS = (
    _claim("accuracy", True, "digits-classifier accuracy"),
    _claim("fd", False, "Fréchet digits distance"),
)
