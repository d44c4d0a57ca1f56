"""hygma-train: dynamic spectral grouping for cooperative MARL (Liu & Li, ICML 2025).

Built so far: ``grouping`` clusters per-agent feature histories (kNN spectral clustering, k by
silhouette) and applies the paper's stability rule; ``hgcn`` is the hypergraph attention convolution
(paper's normalised form and the official code's variant) with the consistency and attention losses.
"""

from paperkit.methods.hygma.grouping import Grouping, choose_groups, cluster_agents, incidence_matrix
from paperkit.methods.hygma.hgcn import HGCN, HypergraphAttention, attention_loss, consistency_loss

__all__ = ["HGCN", "Grouping", "HypergraphAttention", "attention_loss", "choose_groups", "cluster_agents",
           "consistency_loss", "incidence_matrix"]
