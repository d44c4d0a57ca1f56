"""MMInference: modality-aware permutation sparse attention for long multimodal prefill (Li et al., ICML 2025,
arXiv:2504.16083).
"""
