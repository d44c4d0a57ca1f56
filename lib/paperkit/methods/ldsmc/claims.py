"""Headline claims of Achituve et al. (2025), LD-SMC, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Order
from paperkit.reproduce.measures import rows
from paperkit.reproduce.registry import Claim

# The digits prior of examples/demo/50-ldsmc.sh (the example's train.yaml trains for many minutes: --full).
_TRAIN = ("ldsmc-train", "--vae-iters", "80", "--ldm-iters", "300", "--vae-width", "16", "--ldm-width", "128",
          "--classifier-iters", "20", "-j", "1", "--seed", "0", "--run-dir", "{dir}/model", "-q")


def _psnr(d):
    return {f"psnr_{r['method']}": float(r["psnr"]) for r in rows(d / "bench" / "bench.csv")}


CLAIMS = (
    Claim("ldsmc/inpainting", "ldsmc-restore",
          "LD-SMC restores box-inpainted images better (PSNR) than the latent DPS baseline.",
          "Table 1 (box inpainting)", "LD-SMC > LDPS, PSLD on PSNR",
          (_TRAIN, ("ldsmc-bench", "--model", "{dir}/model", "--task", "box", "--tau", "0.05", "--n-images", "8",
                    "--n-seeds", "1", "--particles", "8", "--seed", "{seed}", "-j", "1",
                    "--run-dir", "{dir}/bench", "-q")),
          _psnr, Order("psnr_ldsmc", "psnr_ldps", higher_is_better=True), seeds=(0, 1),
          full_steps=(("ldsmc-train", "--config", "{examples}/ldsmc/configs/train.yaml", "--seed", "0",
                       "--run-dir", "{dir}/model", "-q"),
                      ("ldsmc-bench", "--model", "{dir}/model", "--task", "box", "--tau", "0.05", "--n-images", "64",
                       "--n-seeds", "3", "--particles", "8", "--seed", "{seed}", "--run-dir", "{dir}/bench", "-q")),
          full_seeds=(0,), quick_s=110, full_s=1800, figure="bench/grid.png"),
)
