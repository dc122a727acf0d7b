"""Units of the detection training schedule and loss weights."""

import pytest
import torch

from builder_pipelines.detection.loss import class_weights, focal_loss
from builder_pipelines.detection.train import lr_factor


def test_lr_warms_up_then_anneals_on_the_time_fraction():
    assert lr_factor(0, 10, 0.0) == pytest.approx(0.1)
    assert lr_factor(9, 10, 0.0) == pytest.approx(1.0)
    assert lr_factor(500, 10, 0.5) == pytest.approx(0.02 + 0.98 * 0.5)
    assert lr_factor(500, 10, 1.0) == pytest.approx(0.02)
    assert lr_factor(500, 10, 3.0) == pytest.approx(0.02)  # past the deadline: stays at the floor


def test_class_weights_favour_rare_classes_within_the_cap():
    w = class_weights([209, 2381, 214])
    assert w[1] == 1.0
    assert 3.0 < w[0] < 3.5 and 3.0 < w[2] < 3.5
    assert class_weights([1, 10000]).tolist() == [4.0, 1.0]


def test_positive_weight_scales_only_the_positive_term():
    logits = torch.tensor([[0.3, -1.0]])
    targets = torch.tensor([[1.0, 0.0]])
    base = focal_loss(logits, targets)
    neg_only = focal_loss(logits[:, 1:], targets[:, 1:])
    weighted = focal_loss(logits, targets, pos_weight=torch.tensor([3.0, 3.0]))
    assert weighted == pytest.approx(3 * (base - neg_only) + neg_only)
