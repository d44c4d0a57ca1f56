"""The static registry: every paper, the commands that implement it, and where each command lives.

A command ``foo-bar`` lives in ``paperkit_cli.commands.foo_bar`` and exposes ``cli``. A command is
*available* when its module exists; listing availability never imports a command. To add a command:
write its module, list its name under its paper here, and add its console-script line to
``pyproject.toml``.
"""

from __future__ import annotations

import os
from functools import cache
from typing import NamedTuple

# NamedTuple rather than a dataclass: dataclasses imports inspect, which costs --help ~10 ms.


class Paper(NamedTuple):
    key: str
    title: str
    authors: str
    arxiv: str | None
    commands: tuple[str, ...]
    venue: str = "ICML 2025"
    openreview: str | None = None

    @property
    def reference(self) -> str:
        if self.arxiv:
            return f"arXiv:{self.arxiv}"
        return f"OpenReview:{self.openreview}" if self.openreview else ""


PAPERS: tuple[Paper, ...] = (
    Paper("conformal-cv", "Improving the Statistical Efficiency of Cross-Conformal Prediction",
          "Matteo Gasparin, Aaditya Ramdas", "2503.01495",
          ("conformal-cv", "conformal-predict", "conformal-sim", "conformal-combine")),
    Paper("kd-rank", "Enhancing Logits Distillation with Plug&Play Kendall's τ Ranking Loss",
          "Yuchen Guan, Runxi Cheng, Kang Liu, Chun Yuan", "2409.17823", ("kd-rank", "kd-rank-diag")),
    Paper("ferret-train", "Ferret: Federated Full-Parameter Tuning at Scale for Large Language Models",
          "Yao Shu, Wenyang Hu, See-Kiong Ng, Bryan Kian Hsiang Low, Fei Yu", "2409.06277",
          ("ferret-train", "ferret-recon", "ferret-server", "ferret-client", "ferret-certs")),
    Paper("cogmath-eval", "CogMath: Assessing LLMs' Authentic Mathematical Ability from a Human Cognitive Perspective",
          "Jiayu Liu, Zhenya Huang, Wei Dai, Cheng Cheng, Jinze Wu, Jing Sha, Song Li, Qi Liu, Shijin Wang, "
          "Enhong Chen", "2506.04481", ("cogmath-generate", "cogmath-eval", "cogmath-report")),
    Paper("ldsmc-restore", "Inverse Problem Sampling in Latent Space Using Sequential Monte Carlo",
          "Idan Achituve, Hai Victor Habi, Amir Rosenfeld, Arnon Netzer, Idit Diamant, Ethan Fetaya", "2502.05908",
          ("ldsmc-train", "ldsmc-restore", "ldsmc-bench")),
    Paper("sr-apo-search", "Pareto-Optimal Fronts for Benchmarking Symbolic Regression Algorithms",
          "Kei Sen Fong, Mehul Motani", None, ("sr-apo-search", "sr-apo-front", "sr-apo-compare"),
          openreview="mvbWw0w7pG"),
    Paper("mvml-fit", "Tensorized Multi-View Multi-Label Classification via Laplace Tensor Rank",
          "Qiyu Zhong, Yi Shan, Haobo Wang, Zhen Yang, Gengyu Lyu", None, ("mvml-fit", "mvml-make", "mvml-predict"),
          openreview="muZEsBQzlA"),
    Paper("bandit-sim", "Fusing Reward and Dueling Feedback in Stochastic Bandits",
          "Xuchuang Wang, Qirun Zeng, Jinhang Zuo, Xutong Liu, Mohammad Hajiesmaili, John C.S. Lui, Adam Wierman",
          "2504.15812", ("bandit-sim", "bandit-sweep", "bandit-bound")),
    Paper("mm-prefill", "MMInference: Accelerating Pre-filling for Long-Context VLMs via Modality-Aware "
          "Permutation Sparse Attention",
          "Yucheng Li, Huiqiang Jiang, Chengruidong Zhang, Qianhui Wu, Xufang Luo, Surin Ahn, Amir H. Abdi, "
          "Dongsheng Li, Jianfeng Gao, Yuqing Yang, Lili Qiu", "2504.16083",
          ("mm-prefill", "mm-prefill-search", "mm-prefill-bench")),
    Paper("rgtg-generate", "Towards Cost-Effective Reward Guided Text Generation",
          "Ahmad Rashid, Ruotian Wu, Rongqi Fan, Hongliang Li, Agustinus Kristiadi, Pascal Poupart", "2502.04517",
          ("rgtg-generate", "rgtg-toy", "rgtg-train-lm", "rgtg-train-rm")),
    Paper("pigdreamer-train", "PIGDreamer: Privileged Information Guided World Models for Safe Partially "
          "Observable Reinforcement Learning",
          "Dongchi Huang, Jiaqi Wang, Yang Li, Chunhe Xia, Tianle Zhang, Kaige Zhang", "2508.02159",
          ("pigdreamer-train", "pigdreamer-eval", "pigdreamer-bound", "pigdreamer-compare")),
    Paper("gen-select", "PAK-UCB Contextual Bandit: An Online Learning Approach to Prompt-Aware Selection of "
          "Generative Models and LLMs", "Xiaoyan Hu, Ho-fung Leung, Farzan Farnia", "2410.13287",
          ("gen-select", "gen-select-embed", "gen-select-sim", "gen-select-online")),
    Paper("dcgnn-fit", "Beyond Topological Self-Explainable GNNs: A Formal Explainability Perspective",
          "Steve Azzolin, Sagar Malhotra, Andrea Passerini, Stefano Teso", "2502.02719",
          ("dcgnn-gen", "dcgnn-fit", "dcgnn-faith", "dcgnn-explain")),
    Paper("sve-encode", "Primitive Vision: Improving Diagram Understanding in MLLMs",
          "Shan Zhang, Aotian Chen, Yanpeng Sun, Jindong Gu, Yi-Yu Zheng, Piotr Koniusz, Kai Zou, "
          "Anton van den Hengel, Yuan Xue", "2501.06430", ("sve-render", "sve-encode", "sve-predict", "sve-eval")),
    Paper("hygma-train", "HYGMA: Hypergraph Coordination Networks with Dynamic Grouping for Multi-Agent "
          "Reinforcement Learning", "Chiqiang Liu, Dazi Li", "2505.07207", ("hygma-train", "hygma-eval", "hygma-plot")),
    Paper("symeq-fit", "Permutation Equivariant Neural Networks for Symmetric Tensors", "Edward Pearce-Crump",
          "2503.11276", ("symeq-basis", "symeq-fit")),
    Paper("var-approx", "Fundamental Limits of Visual Autoregressive Transformers: Universal Approximation Abilities",
          "Yifang Chen, Xiaoyu Li, Yingyu Liang, Zhenmei Shi, Zhao Song", "2502.06167", ("var-approx", "var-approx-sweep", "var-approx-pyramid",
                                         "var-approx-construct", "var-approx-tokenize")),
    Paper("kgfm-motif", "How Expressive are Knowledge Graph Foundation Models?",
          "Xingyue Huang, Pablo Barceló, Michael M. Bronstein, İsmail İlkan Ceylan, Mikhail Galkin, "
          "Juan L. Reutter, Miguel Romero Orth", "2502.13339", ("kgfm-gen", "kgfm-lift", "kgfm-wl", "kgfm-motif", "kgfm-eval")),
    Paper("disempower-sim", "Position: Humanity Faces Existential Risk from Gradual Disempowerment",
          "Jan Kulveit, Raymond Douglas, Nora Ammann, Deger Turan, David Krueger, David Duvenaud", "2501.16946",
          ("disempower-sim", "disempower-compare", "disempower-sweep", "disempower-explain"),
          venue="ICML 2025 (position track)"),
)

# Commands that belong to paperkit itself rather than to a paper.
TOOL_COMMANDS: tuple[str, ...] = ("papers", "completion", "man", "reproduce")

COMMANDS: tuple[str, ...] = TOOL_COMMANDS + tuple(c for p in PAPERS for c in p.commands)
PAPER_OF: dict[str, Paper] = {c: p for p in PAPERS for c in p.commands}


_COMMANDS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "commands")


def module_name(command: str) -> str:
    return "paperkit_cli.commands." + command.replace("-", "_")


@cache
def is_available(command: str) -> bool:
    """True when the command's module exists (checked without importing it)."""
    if command not in COMMANDS:
        return False
    return os.path.exists(os.path.join(_COMMANDS_DIR, command.replace("-", "_") + ".py"))


def available_commands() -> list[str]:
    return sorted(c for c in COMMANDS if is_available(c))
