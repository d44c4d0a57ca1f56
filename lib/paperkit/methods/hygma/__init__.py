"""hygma-train: dynamic spectral grouping + hypergraph attention for cooperative MARL (Liu & Li, ICML 2025).

``grouping`` clusters per-agent feature histories (kNN spectral clustering, k by silhouette, the stability
rule); ``hgcn`` is the hypergraph attention convolution (the paper's normalised form and the official
code's variant) with the consistency and attention losses; ``mixers`` holds QMIX and VDN; ``envs`` and
``parallel`` are the batched grid tasks and their PettingZoo views; ``train`` is the learner (HYGMA-QMIX,
HYGMA-AC, QMIX, VDN, IQL) and its training loop; ``run`` orchestrates the commands.
"""

from paperkit.methods.hygma.envs import GroupCapture, LevelForaging, PredatorPrey, make_core
from paperkit.methods.hygma.grouping import (
           Grouping,
           assignment_ari,
           choose_groups,
           cluster_agents,
           incidence_matrix,
)
from paperkit.methods.hygma.hgcn import HGCN, HypergraphAttention, attention_loss, consistency_loss
from paperkit.methods.hygma.mixers import QMixer, VDNMixer
from paperkit.methods.hygma.train import ALGOS, Learner, TrainConfig, train

__all__ = ["ALGOS", "HGCN", "GroupCapture", "Grouping", "HypergraphAttention", "Learner", "LevelForaging",
           "PredatorPrey", "QMixer", "TrainConfig", "VDNMixer", "assignment_ari", "attention_loss", "choose_groups",
           "cluster_agents", "consistency_loss", "incidence_matrix", "make_core", "train"]
