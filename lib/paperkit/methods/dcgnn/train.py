"""Training and evaluation of DC-GNNs (Azzolin et al., ICML 2025, Sec. 5 and App. C).

Warm-up (``warmup`` epochs): CE on each channel separately + the SE-GNN regulariser; afterwards CE on the
combined output + the regulariser. The channel temperature is 1 during warm-up, then falls linearly to
``end_temp``. GSAT's prior r starts at 0.9 and drops 0.1 every 10 epochs to 0.5; SMGNN's penalty is off for
its first 10 epochs. Adam, lr 1e-3, batch 64.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from paperkit.core.progress import progress as default_progress
from paperkit.methods.dcgnn.data import GraphSet
from paperkit.methods.dcgnn.model import DCGNN


@dataclass(frozen=True)
class FitConfig:
    segnn: str = "smgnn"
    channels: str = "dual"
    combiner: str = "len"
    hidden: int = 64
    epochs: int = 100
    batch_size: int = 64
    lr: float = 1e-3
    warmup: int = 20
    reg_weight: float = 0.01       # SMGNN/GiSST penalty scale (the paper's ood_param)
    entropy_coef: float = 0.8
    reg_off_epochs: int = 10       # SMGNN: penalty off at first
    gsat_weight: float = 1.0
    end_temp: float = 0.3
    combiner_temp: float = 0.6
    rule_l1: float = 0.001
    side_lr: float = 5e-3          # Adam lr of the rule channel and the combiner (the official lr_filternode)
    constant_feature: bool = False
    average_edge_attn: str = "mean"
    pool: str = "sum"              # GNN-channel readout; the official configs use mean on GOOD-Motif
    norm: str = "none"             # "bn": BatchNorm in the GIN MLPs (the official GOOD-Motif use_norm)
    select: str = "best-val"       # keep the epoch of lowest validation loss (the official pipeline) or "last"
    temp_schedule: str = "warmup"  # "official": 1 up to epoch 20, then 1 - (1 - end_temp)·epoch / epochs
    combiner_init: str = "equal"   # LEN columns of equal L1 norm, or "random" (PyTorch's init, the official)
    rule_init: str = "zero"        # rule weights start at 0, or "default" (PyTorch's nn.Linear, the official)
    rule_weight_decay: float = 0.0  # Adam weight decay on the rule weights (the official channel_weight_decay)
    combiner_hold: int = 0         # epochs after the warm-up in which the LEN relevances are held (not official)


def build_model(cfg: FitConfig, d_in: int, n_classes: int) -> DCGNN:
    return DCGNN(d_in, n_classes, hidden=cfg.hidden, segnn=cfg.segnn, channels=cfg.channels, combiner=cfg.combiner,
                 constant_feature=cfg.constant_feature, combiner_temp=cfg.combiner_temp,
                 average_edge_attn=cfg.average_edge_attn, pool=cfg.pool, norm=cfg.norm,
                 combiner_init=cfg.combiner_init, rule_init=cfg.rule_init)


def param_groups(model: DCGNN, cfg: FitConfig) -> list[dict]:
    """The GNN channel at ``lr``; the rule channel and the combiner at ``side_lr`` (as the official code), the
    rule channel with Adam weight decay ``rule_weight_decay`` (the official channel_weight_decay)."""
    named = list(model.named_parameters())
    gnn = [p for n, p in named if n.startswith("gnn.")]
    rule = [p for n, p in named if n.startswith("rule.")]
    comb = [p for n, p in named if not n.startswith(("gnn.", "rule."))]
    groups = ({"params": gnn, "lr": cfg.lr}, {"params": rule, "lr": cfg.side_lr, "weight_decay": cfg.rule_weight_decay},
              {"params": comb, "lr": cfg.side_lr})
    return [g for g in groups if g["params"]]


def to_pyg(gs: GraphSet, idx: np.ndarray | None = None) -> list:
    """One PyG ``Data`` per graph (local node ids), in ``idx`` order."""
    from torch_geometric.data import Data

    idx = np.arange(gs.n_graphs) if idx is None else idx
    eptr = gs.edge_ptr()
    x, ei, y = torch.from_numpy(gs.x), torch.from_numpy(gs.edge_index), torch.from_numpy(gs.y)
    out = []
    for g in idx:
        a, b, ea, eb = gs.graph_ptr[g], gs.graph_ptr[g + 1], eptr[g], eptr[g + 1]
        out.append(Data(x=x[a:b], edge_index=ei[:, ea:eb] - a, y=y[g:g + 1]))
    return out


def gsat_prior(epoch: int) -> float:
    return max(0.5, 0.9 - 0.1 * (epoch // 10))


OFFICIAL_TEMP_HOLD = 20   # the official schedule keeps t = 1 while epoch <= 20, whatever the warm-up


def channel_temperature(epoch: int, cfg: FitConfig) -> float:
    """The channel temperature t of σ(logit / t) at ``epoch`` (0-based). "warmup": 1 during the warm-up, then
    linear to ``end_temp`` at the last epoch. "official" (the official code's get_temp): 1 while epoch ≤ 20,
    then 1 − (1 − end_temp)·epoch / epochs, so it jumps at epoch 21 and ends just above ``end_temp``."""
    if cfg.temp_schedule == "official":
        if epoch <= OFFICIAL_TEMP_HOLD:
            return 1.0
        return 1.0 - (1.0 - cfg.end_temp) * epoch / cfg.epochs
    if epoch < cfg.warmup:
        return 1.0
    span = max(1, cfg.epochs - 1 - cfg.warmup)
    return 1.0 + (cfg.end_temp - 1.0) * min(1.0, (epoch - cfg.warmup) / span)


def held(model: DCGNN, epoch: int, cfg: FitConfig) -> bool:
    """Whether the LEN layer's weights (hence the channel relevances) are frozen in this epoch: the first
    ``combiner_hold`` epochs after the warm-up (not in the official code)."""
    return (cfg.channels == "dual" and cfg.combiner == "len" and cfg.warmup <= epoch < cfg.warmup + cfg.combiner_hold)


def loss_terms(model: DCGNN, out: dict, y: torch.Tensor, epoch: int, cfg: FitConfig) -> dict[str, torch.Tensor]:
    warm = cfg.channels == "dual" and epoch < cfg.warmup
    if warm:
        ce = F.cross_entropy(out["gnn"], y) + F.cross_entropy(out["rule"], y)
    else:
        ce = F.cross_entropy(out["logits"], y)
    terms = {"ce": ce}
    if cfg.channels != "rule" and cfg.segnn != "none":
        if cfg.segnn == "gsat":
            w = cfg.gsat_weight
        else:
            w = 0.0 if (cfg.segnn == "smgnn" and epoch < cfg.reg_off_epochs) else cfg.reg_weight
        terms["reg"] = w * model.gnn.regulariser(out["mask"], r=gsat_prior(epoch), ent_coef=cfg.entropy_coef)
    if cfg.channels != "gnn" and cfg.rule_l1 > 0:
        terms["rule_l1"] = cfg.rule_l1 * model.rule.linear.weight.abs().sum()
    return terms


def train_model(gs: GraphSet, train_idx: np.ndarray, cfg: FitConfig, seed: int, *, device: Any = "cpu",
                progress: Any = default_progress, desc: str = "train",
                val_idx: np.ndarray | None = None) -> tuple[DCGNN, list[dict]]:
    """Fit one model on the graphs ``train_idx``; returns it (in eval mode) and the per-epoch losses.

    With ``val_idx`` each epoch logs ``val_acc`` and ``val_loss`` (mean cross-entropy of the model's output)
    on those graphs and, with ``cfg.select == "best-val"``, the returned model is the checkpoint of the first
    epoch with the lowest validation loss: the official pipeline's best in-distribution checkpoint (its
    reference metric is the loss, not the accuracy, which saturates on a few graphs); a DC-GNN's warm-up
    epochs are not candidates (its combined output is not trained yet), nor its ``combiner_hold`` epochs
    (its channel relevances are not). ``model.selected_epoch`` says which
    epoch was kept."""
    from torch_geometric.loader import DataLoader

    torch.manual_seed(seed)
    model = build_model(cfg, gs.x.shape[1], gs.n_classes).to(device)
    opt = torch.optim.Adam(param_groups(model, cfg))
    gen = torch.Generator().manual_seed(seed)
    loader = DataLoader(to_pyg(gs, train_idx), batch_size=cfg.batch_size, shuffle=True, generator=gen,
                        drop_last=len(train_idx) > cfg.batch_size)
    history, best = [], None
    for epoch in progress(range(cfg.epochs), desc=desc, unit="epoch"):
        model.train()
        model.temperature = channel_temperature(epoch, cfg)
        sums: dict[str, float] = {}
        for batch in loader:
            batch = batch.to(device)
            terms = loss_terms(model, model(batch), batch.y, epoch, cfg)
            loss = sum(terms.values())
            opt.zero_grad()
            loss.backward()
            if held(model, epoch, cfg):
                model.combiner.entropy.weight.grad = None   # Adam skips it: the relevances stay as they are
            opt.step()
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + v.item() / len(loader)
        record = {"epoch": epoch, "temperature": model.temperature, **sums}
        rel = model.relevance()
        if cfg.channels == "dual" and rel is not None:
            record["gnn_relevance"], record["rule_relevance"] = rel
        if val_idx is not None and len(val_idx):
            probs = predict(model, gs, val_idx, device=device)["probs"]
            record["val_acc"], record["val_loss"] = validation_scores(probs, gs.y[val_idx])
            eligible = cfg.select == "best-val" and not (cfg.channels == "dual" and epoch < cfg.warmup) \
                and not held(model, epoch, cfg)
            if eligible and (best is None or record["val_loss"] < best[0]):
                best = (record["val_loss"], epoch, model.temperature,
                        {k: v.detach().clone() for k, v in model.state_dict().items()})
        history.append(record)
    model.selected_epoch = cfg.epochs - 1
    if best is not None:
        _, model.selected_epoch, model.temperature, state = best
        model.load_state_dict(state)
    model.eval()
    return model, history


def validation_scores(probs: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Accuracy and mean cross-entropy −log p(y) (probabilities floored at 1e-12) of predicted probabilities."""
    acc = float(np.mean(probs.argmax(1) == y))
    loss = float(-np.mean(np.log(np.maximum(probs[np.arange(len(y)), y], 1e-12))))
    return acc, loss


@torch.no_grad()
def predict(model: DCGNN, gs: GraphSet, idx: np.ndarray, *, batch_size: int = 256, device: Any = "cpu") -> dict:
    """Probabilities of the model and of each channel, and the edge mask of every edge of graphs ``idx``
    (in the GraphSet's edge order for those graphs)."""
    from torch_geometric.loader import DataLoader

    model.eval()
    parts: dict[str, list] = {"probs": [], "gnn": [], "rule": [], "mask": []}
    for batch in DataLoader(to_pyg(gs, idx), batch_size=batch_size):
        out = model(batch.to(device))
        parts["probs"].append(torch.softmax(out["logits"], -1).cpu())
        for k in ("gnn", "rule"):
            if out[k] is not None:
                parts[k].append(torch.softmax(out[k], -1).cpu())
        if out["mask"] is not None:
            parts["mask"].append(out["mask"].cpu())
    return {k: (torch.cat(v).numpy() if v else None) for k, v in parts.items()}


def macro_f1(y: np.ndarray, pred: np.ndarray, n_classes: int) -> float:
    f1 = []
    for c in range(n_classes):
        tp = np.sum((pred == c) & (y == c))
        denom = np.sum(pred == c) + np.sum(y == c)
        f1.append(2 * tp / denom if denom else 0.0)
    return float(np.mean(f1))


def auroc(scores: np.ndarray, labels: np.ndarray) -> float | None:
    """Area under the ROC curve by the Mann–Whitney statistic (ties counted half); None with one class."""
    from scipy.stats import rankdata

    labels = labels.astype(bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = rankdata(scores)
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def edge_positions(gs: GraphSet, idx: np.ndarray) -> np.ndarray:
    """Global edge positions of the graphs ``idx``, in order."""
    eptr = gs.edge_ptr()
    return np.concatenate([np.arange(eptr[g], eptr[g + 1]) for g in idx]) if len(idx) else np.zeros(0, np.int64)


def explanation_auroc(gs: GraphSet, idx: np.ndarray, mask: np.ndarray | None) -> float | None:
    """AUROC of the edge mask against ``edge_gt`` over the graphs of ``idx`` that hold ground-truth edges."""
    if gs.edge_gt is None or mask is None:
        return None
    eptr, pos = gs.edge_ptr(), edge_positions(gs, idx)
    has_gt = np.repeat([gs.edge_gt[eptr[g]:eptr[g + 1]].any() for g in idx], np.diff(eptr)[idx])
    return auroc(mask[has_gt], gs.edge_gt[pos][has_gt])


def split_metrics(gs: GraphSet, idx: np.ndarray, pred: dict) -> dict[str, float]:
    y, yhat = gs.y[idx], pred["probs"].argmax(1)
    out = {"acc": float(np.mean(yhat == y)), "f1": macro_f1(y, yhat, gs.n_classes)}
    for k in ("gnn", "rule"):
        if pred[k] is not None:
            out[f"acc_{k}_channel"] = float(np.mean(pred[k].argmax(1) == y))
    return out


def export_rule(model: DCGNN, gs: GraphSet, pred: dict | None = None) -> dict | None:
    """The rule channel as readable terms: per class score = Σ w·count(feature) + b; for two classes the
    difference, i.e. predict class 1 iff Σ (w1 − w0)·count + (b1 − b0) > 0.

    A combiner may use the rule channel inverted (its inputs are σ(scores) of both classes, and nothing after
    warm-up ties the channel to the labels). With ``pred`` (``predict``'s output on some graphs), a binary rule
    that disagrees with the model on most of them is flipped, so that it reads as the model uses it;
    ``inverted_by_combiner`` says so and ``agreement_with_model`` gives the fraction of agreeing graphs."""
    if model.channels == "gnn":
        return None
    w = model.rule.linear.weight.detach().cpu().numpy().astype(float)
    b = model.rule.linear.bias.detach().cpu().numpy().astype(float)
    names = list(gs.feature_names) + (["nodes"] if model.rule.constant else [])
    if gs.n_classes == 2:
        dw, db = w[1] - w[0], b[1] - b[0]
        agree = None if pred is None else float(np.mean(pred["probs"].argmax(1) == pred["rule"].argmax(1)))
        inverted = agree is not None and agree < 0.5
        if inverted:
            dw, db, agree = -dw, -db, 1 - agree
        terms = {n: float(v) for n, v in zip(names, dw, strict=True)}
        text = " ".join(f"{v:+.6g}*count({n})" for n, v in terms.items()) + f" {db:+.6g} > 0"
        return {"kind": "binary", "positive_class": gs.class_names[1], "negative_class": gs.class_names[0],
                "terms": terms, "bias": float(db), "text": text, "inverted_by_combiner": inverted,
                "agreement_with_model": agree}
    scores = {c: {"terms": {n: float(v) for n, v in zip(names, w[k], strict=True)}, "bias": float(b[k])}
              for k, c in enumerate(gs.class_names)}
    return {"kind": "argmax", "classes": scores,
            "text": "; ".join(f"{c}: " + " ".join(f"{v:+.6g}*count({n})" for n, v in s["terms"].items())
                              + f" {s['bias']:+.6g}" for c, s in scores.items())}
