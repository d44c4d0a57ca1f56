"""A small synth100 teacher shared by the training tests (trained once per session)."""

import pytest
import torch

SMALL = {"train_per_class": 20, "test_per_class": 20}


@pytest.fixture(scope="session")
def synth_small():
    from paperkit.methods.kd_rank import TrainSettings, predict_logits, synth100, train_teacher

    torch.set_num_threads(1)
    data = synth100(**SMALL)
    teacher = train_teacher(data, hidden=(256,), settings=TrainSettings(epochs=15, batch_size=64), seed=0)
    return data, teacher, predict_logits(teacher.model, data.X_train), predict_logits(teacher.model, data.X_test)
