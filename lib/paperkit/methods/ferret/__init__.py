"""Ferret: federated full-parameter tuning with shared randomness (Shu et al., ICML 2025, arXiv 2409.06277).

Clients train locally with first-order steps, project their update onto K shared-seed random bases
(gamma = VᵀDelta / (rho K), inversion-free) and upload (seed, gamma); everyone rebuilds
Delta_hat = V gamma block by block from the seed. Baselines FedAvg, FedZO and FedKSeed run in the same
loop with the same accounting; ``flower`` runs the same rounds on Flower across processes/machines.
"""

from paperkit.methods.ferret.federated import (
    ALGOS,
    ClientMessage,
    FedConfig,
    Federation,
    ServerState,
    add_cumulative,
    run_federated,
)
from paperkit.methods.ferret.projection import (
    ALLOCATIONS,
    Blocks,
    allocate,
    derive_seed,
    iter_bases,
    project,
    reconstruct,
    truncated_normal_variance,
)
from paperkit.methods.ferret.tasks import (
    TASKS,
    Task,
    build_task,
    digits_task,
    instruct_task,
    jsonl_task,
    read_instruction_jsonl,
    rouge_l,
)

__all__ = [
    "ALGOS", "ALLOCATIONS", "TASKS", "Blocks", "ClientMessage", "FedConfig", "Federation", "ServerState", "Task",
    "add_cumulative", "allocate", "build_task", "derive_seed", "digits_task", "instruct_task", "iter_bases",
    "jsonl_task", "project", "read_instruction_jsonl", "reconstruct", "rouge_l", "run_federated",
    "truncated_normal_variance",
]
