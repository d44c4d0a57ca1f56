"""MOTIF: motif-lifted relation graphs for knowledge-graph foundation models, and their WL test
(Huang et al., ICML 2025, arXiv 2502.13339)."""

from paperkit.methods.kgfm.data import Graph, Vocab, build_vocab, encode, filter_sets, read_triples
from paperkit.methods.kgfm.lift import Lift, lift, lift_bruteforce, motif_types
from paperkit.methods.kgfm.model import ModelConfig, MotifModel
from paperkit.methods.kgfm.wl import entity_colors, relation_colors

__all__ = ["Graph", "Lift", "ModelConfig", "MotifModel", "Vocab", "build_vocab", "encode", "entity_colors",
           "filter_sets", "lift", "lift_bruteforce", "motif_types", "read_triples",
           "relation_colors"]
