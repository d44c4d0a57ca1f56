"""Session fixtures: synthetic samples shared by the mm-prefill tests (generated once, small)."""

import pytest
import torch

from paperkit.methods.mm_prefill import synthetic


@pytest.fixture(scope="session")
def video8k():
    """N = 8192: text prefix + 31 frames of 16×16 patches + text suffix; two VS and two grid heads."""
    torch.set_num_threads(1)
    spec = synthetic.SyntheticSpec(frames=31, height=16, width=16, text_prefix=128, text_suffix=128,
                           heads=["vs", "grid", "vs", "grid"], seed=3)
    g = synthetic.generate(spec)
    return spec, g, *(torch.from_numpy(g[x][0]) for x in "qkv")


@pytest.fixture(scope="session")
def dense_rows(video8k):
    """Dense log-sum-exp of 512 random query rows of every head (the recall reference)."""
    from paperkit.methods.mm_prefill.attention import dense_attention

    _, _, q, k, v = video8k
    rows = torch.randperm(q.shape[1], generator=torch.Generator().manual_seed(0))[:512].sort().values
    return rows, dense_attention(q, k, v, rows=rows)[1]


@pytest.fixture(autouse=True)
def one_thread():
    """Small tensor ops are faster on one thread, and the CI machine is shared."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
