"""Headline claims of Shu et al. (2025), Ferret, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Increasing
from paperkit.reproduce.measures import rows
from paperkit.reproduce.registry import Claim

_KS = ("50", "200", "800")


def _recon(d):
    return {f"cosine_k{r['k']}": float(r["cosine_mean"]) for r in rows(d / "recon" / "recon.csv")}


CLAIMS = (
    Claim("ferret/recon", "ferret-train",
          "The shared-randomness reconstruction of a d-dim update improves as the number of bases K grows.",
          "Thm. 1, Fig. 4 (reconstruction vs K)", "error shrinks ~ sqrt(K/d)",
          (("ferret-recon", "--d", "20000", "--k", ",".join(_KS), "--trials", "3", "--no-zo", "--seed", "{seed}",
            "--run-dir", "{dir}/recon", "-q"),),
          _recon, Increasing(tuple(f"cosine_k{k}" for k in _KS)), seeds=(0, 1),
          full_steps=(("ferret-recon", "--d", "100000", "--k", ",".join(_KS), "--trials", "5", "--no-zo",
                       "--seed", "{seed}", "--run-dir", "{dir}/recon", "-q"),),
          quick_s=35, full_s=300, figure="recon/recon.png"),
)
