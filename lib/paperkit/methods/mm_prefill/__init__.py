"""MMInference: modality-aware permutation sparse attention for long multimodal prefill (Li et al., ICML 2025,
arXiv:2504.16083).

* :mod:`.index` — the sparse index (permuted tiles + gathered columns) and its online builders: A-shape,
  vertical-slash, block-sparse, Grid (stride/phase estimate, permutation), Q- and 2D-boundary.
* :mod:`.attention` — ``sparse_prefill(q, k, v, index)``: torch reference and dispatcher; dense references.
* :mod:`.kernels` — the Triton kernel (imported only when used).
* :mod:`.search` — offline kernel-aware per-head search at matched density; patterns JSON.
* :mod:`.synthetic`, :mod:`.data` — planted-head Q/K/V generator, captured-tensor loaders.
* :mod:`.run` — the commands' settings, input checks and staged runs: apply patterns with metrics vs
  dense; speed benchmark. :mod:`.plots` — mask and speedup figures; :mod:`.memory` — memory estimates.
* :mod:`.hf_patch` — sparse prefill inside a Hugging Face Llama/Qwen2-style model.
"""

from paperkit.methods.mm_prefill.attention import (
                                                   dense_attention,
                                                   last_backend,
                                                   recall_from_lse,
                                                   rel_l2,
                                                   sdpa_causal,
                                                   sparse_prefill,
                                                   sparse_prefill_torch,
)
from paperkit.methods.mm_prefill.index import (
                                                   HeadIndex,
                                                   SparseIndex,
                                                   a_shape,
                                                   block_sparse,
                                                   boundary,
                                                   density,
                                                   estimate_grid,
                                                   grid,
                                                   grid_permutation,
                                                   stack_heads,
                                                   tile_cost,
                                                   vertical_slash,
)
from paperkit.methods.mm_prefill.search import (
                                                   PATTERNS,
                                                   build_head,
                                                   check_patterns,
                                                   index_from_patterns,
                                                   search_head,
                                                   search_model,
)
from paperkit.methods.mm_prefill.synthetic import HEAD_TYPES, SyntheticSpec, generate

__all__ = [
    "HEAD_TYPES", "PATTERNS", "HeadIndex", "SparseIndex", "SyntheticSpec", "a_shape", "block_sparse", "boundary",
    "build_head", "check_patterns", "dense_attention", "density", "estimate_grid", "generate", "grid",
    "grid_permutation", "index_from_patterns", "last_backend", "recall_from_lse", "rel_l2", "sdpa_causal",
    "search_head", "search_model", "sparse_prefill", "sparse_prefill_torch", "stack_heads", "tile_cost",
    "vertical_slash",
]
