"""PAK-UCB: prompt-aware online selection of generative models (Hu, Leung & Farnia, ICML 2025).

Learners (:mod:`.learners`), kernels and random Fourier features (:mod:`.kernels`), instances
(:mod:`.instances`), the replay simulator and its metrics (:mod:`.simulate`), offline MiniLM
embeddings (:mod:`.embed`), the online router (:mod:`.online`) and the command orchestration
(:mod:`.run`).
"""

from paperkit.methods.gen_select.kernels import KERNELS, RFF_VARIANTS, FourierFeatures, Kernel
from paperkit.methods.gen_select.learners import (
    LEARNERS,
    PAKUCB,
    RFFUCB,
    Greedy,
    HybridUCB,
    KernelRidge,
    KernelUCB,
    Learner,
    LinUCB,
    Oracle,
    RandomChoice,
    Ridge,
    eta_formula,
    make_learner,
)

__all__ = ["KERNELS", "LEARNERS", "PAKUCB", "RFFUCB", "RFF_VARIANTS", "FourierFeatures", "Greedy", "HybridUCB",
           "Kernel", "KernelRidge", "KernelUCB", "Learner", "LinUCB", "Oracle", "RandomChoice", "Ridge",
           "eta_formula", "make_learner"]
