"""Permutation-equivariant networks for symmetric tensors (Pearce-Crump, ICML 2025): exact orbit and
diagram bases of the S_n-equivariant maps S^k(R^n) → S^l(R^n), layers, baselines, tasks and training.
First-principles implementation (no official code exists)."""

from paperkit.methods.symeq.diagram import apply_partition, change_of_basis, mobius_inverse, orbit_size
from paperkit.methods.symeq.layers import (
                                           EquivariantNet,
                                           MaronLinear,
                                           PackedMLP,
                                           SymEquivariantLinear,
                                           diagram_to_orbit_weights,
)
from paperkit.methods.symeq.orbit import dense_orbit_basis, gather_indices, orbit_labels, vector_partitions
from paperkit.methods.symeq.symtensor import act, pack, packed_size, symmetrize, unpack

__all__ = ["apply_partition", "change_of_basis", "mobius_inverse", "orbit_size", "EquivariantNet", "MaronLinear",
           "PackedMLP", "SymEquivariantLinear", "diagram_to_orbit_weights", "dense_orbit_basis", "gather_indices",
           "orbit_labels", "vector_partitions", "act", "pack", "packed_size", "symmetrize", "unpack"]
