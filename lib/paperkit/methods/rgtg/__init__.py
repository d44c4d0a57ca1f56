"""FaRMA: reward-guided text generation with one token-level RM call per token (Rashid et al., ICML 2025)."""
