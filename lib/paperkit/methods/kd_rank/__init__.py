"""Kendall's τ ranking loss for logit distillation (Guan et al., ICML 2025, arXiv:2409.17823).

* :mod:`.rank_loss` — :class:`KendallRankLoss`: the differentiable τ surrogate (tanh, sigmoid, product),
  chunked over class pairs, with its closed-form gradient; exact per-sample Kendall τ.
* :mod:`.bases` — KD, DKD, LSKD, MLKD-lite and the total loss α·CE + β·L_base + γ·L_rank.
* :mod:`.diagnostics` — gradient share per teacher-probability decile (KL vs rank), scale sensitivity.
* :mod:`.data` — synth100, sklearn digits, ``npy:DIR`` (features, labels, optional teacher logits).
* :mod:`.train` — teacher/student MLP training and evaluation; :mod:`.run` — the base ×
  rank-on/off × seed table.
"""

from paperkit.methods.kd_rank.bases import (
    BASES,
    DEFAULT_WEIGHTS,
    DistillConfig,
    base_loss,
    distill_loss,
    dkd_loss,
    kd_loss,
    lskd_loss,
    mlkd_class_loss,
    mlkd_lite_loss,
    mlkd_loss,
)
from paperkit.methods.kd_rank.data import DistillData, digits, from_npy_dir, load_data, synth100
from paperkit.methods.kd_rank.diagnostics import (
    GradientShare,
    check_logit_pair,
    decile_shares,
    gradient_share,
    gradient_share_figure,
    loss_gradients,
    low_half_share,
    scale_sensitivity,
)
from paperkit.methods.kd_rank.rank_loss import (
    FORMS,
    KendallRankLoss,
    chunk_rows,
    kendall_rank_loss,
    kendall_tau,
    pairwise_soft_tau,
    standardize,
    teacher_order,
)
from paperkit.methods.kd_rank.train import (
    StudentRun,
    Teacher,
    TrainSettings,
    evaluate,
    load_teacher,
    make_mlp,
    parse_hidden,
    predict_logits,
    topk_accuracy,
    train_student,
    train_teacher,
)

__all__ = [
    "BASES", "DEFAULT_WEIGHTS", "FORMS", "DistillConfig", "DistillData", "GradientShare", "KendallRankLoss",
    "StudentRun", "Teacher", "TrainSettings", "base_loss", "check_logit_pair", "chunk_rows", "decile_shares",
    "digits", "distill_loss", "dkd_loss", "evaluate", "from_npy_dir", "gradient_share", "gradient_share_figure",
    "kd_loss", "kendall_rank_loss", "kendall_tau", "load_data", "load_teacher", "loss_gradients",
    "low_half_share", "lskd_loss", "make_mlp", "mlkd_class_loss", "mlkd_lite_loss", "mlkd_loss", "pairwise_soft_tau", "parse_hidden",
    "predict_logits", "scale_sensitivity", "standardize", "synth100", "teacher_order", "topk_accuracy", "train_student",
    "train_teacher",
]
