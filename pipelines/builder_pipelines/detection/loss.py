"""FCOS targets and losses: sigmoid focal loss for classes (handles the imbalance between the few
object locations and the many background ones, and between frequent and rare classes),
GIoU loss for the box distances, binary cross-entropy for centerness.

Assignment (FCOS with centre sampling): a location is positive for a ground-truth box when it lies
inside the box, within CENTER_RADIUS strides of the box centre, and the box's largest distance from
it falls in the level's size range; among several boxes the smallest wins.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

CENTER_RADIUS = 1.5
# Largest l/t/r/b distance (input pixels) each level (stride 8, 16, 32) is responsible for.
LEVEL_RANGES = {8: (0.0, 48.0), 16: (48.0, 96.0), 32: (96.0, float("inf"))}


def assign(points, strides, gt_boxes, gt_labels):
    """-> labels (M,) with -1 for background, distances (M, 4) (valid where labels >= 0)."""
    m = points.shape[0]
    if gt_boxes.shape[0] == 0:
        return torch.full((m,), -1, dtype=torch.long, device=points.device), torch.zeros(m, 4, device=points.device)
    px, py = points[:, 0:1], points[:, 1:2]
    x1, y1, x2, y2 = (gt_boxes[:, i][None] for i in range(4))
    ltrb = torch.stack([px - x1, py - y1, x2 - px, y2 - py], dim=2)  # (M, G, 4)
    inside = ltrb.min(dim=2).values > 0
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    rad = strides[:, None] * CENTER_RADIUS
    near_centre = ((px - cx).abs() < rad) & ((py - cy).abs() < rad)
    lo = torch.zeros_like(strides)
    hi = torch.zeros_like(strides)
    for s, (a, b) in LEVEL_RANGES.items():
        lo[strides == s], hi[strides == s] = a, b
    reach = ltrb.max(dim=2).values
    in_range = (reach >= lo[:, None]) & (reach <= hi[:, None])
    areas = ((x2 - x1) * (y2 - y1)).expand(m, -1).clone()
    areas[~(inside & near_centre & in_range)] = float("inf")
    best, idx = areas.min(dim=1)
    labels = gt_labels[idx].clone()
    labels[~torch.isfinite(best)] = -1
    return labels, ltrb[torch.arange(m, device=points.device), idx]


def centerness(ltrb):
    lr, tb = ltrb[:, [0, 2]], ltrb[:, [1, 3]]
    c = (lr.min(1).values / lr.max(1).values.clamp(min=1e-6)) * (tb.min(1).values / tb.max(1).values.clamp(min=1e-6))
    return c.clamp(min=0).sqrt()


def giou_loss(pred, target):
    """Both (P, 4) distances from the same point."""
    pa = (pred[:, 0] + pred[:, 2]) * (pred[:, 1] + pred[:, 3])
    ta = (target[:, 0] + target[:, 2]) * (target[:, 1] + target[:, 3])
    iw = torch.min(pred[:, 0], target[:, 0]) + torch.min(pred[:, 2], target[:, 2])
    ih = torch.min(pred[:, 1], target[:, 1]) + torch.min(pred[:, 3], target[:, 3])
    inter = iw.clamp(min=0) * ih.clamp(min=0)
    union = pa + ta - inter
    iou = inter / union.clamp(min=1e-6)
    ew = torch.max(pred[:, 0], target[:, 0]) + torch.max(pred[:, 2], target[:, 2])
    eh = torch.max(pred[:, 1], target[:, 1]) + torch.max(pred[:, 3], target[:, 3])
    enclose = (ew * eh).clamp(min=1e-6)
    return 1 - (iou - (enclose - union) / enclose)


def focal_loss(logits, targets, alpha: float = 0.25, gamma: float = 2.0, pos_weight=None):
    """``pos_weight`` (K,) scales the positive term per class (rare classes count more)."""
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    a_t = alpha * targets + (1 - alpha) * (1 - targets)
    if pos_weight is not None:
        a_t = a_t * (1 + targets * (pos_weight - 1))
    return (a_t * (1 - p_t) ** gamma * ce).sum()


def class_weights(counts, cap: float = 4.0) -> torch.Tensor:
    """Positive-term weight per class from the training box counts: sqrt(most frequent / this class),
    between 1 and ``cap`` (BCCD: RBC 1, platelets and WBC ~3.4). The focal loss alone balances object
    against background; this balances a class seen ~10x less often than another."""
    c = torch.as_tensor(counts, dtype=torch.float32).clamp(min=1)
    return (c.max() / c).sqrt().clamp(1.0, cap)


def detection_loss(model, outputs, batch_boxes, batch_labels, pos_weight=None):
    """outputs = model.raw(images); batch_* are lists (one tensor per image); ``pos_weight`` see
    focal_loss. -> (total, parts)."""
    cls, reg, ctr = outputs
    k = cls.shape[-1]
    labels, targets = zip(
        *(assign(model.points, model.point_strides, b, lab) for b, lab in zip(batch_boxes, batch_labels))
    )
    labels, targets = torch.stack(labels), torch.stack(targets)
    pos = labels >= 0
    n_pos = max(1.0, float(pos.sum()))
    onehot = torch.zeros_like(cls)
    onehot[pos] = F.one_hot(labels[pos], k).to(cls.dtype)
    if pos_weight is not None:
        pos_weight = pos_weight.to(cls.device)
    l_cls = focal_loss(cls, onehot, pos_weight=pos_weight) / n_pos
    if pos.any():
        t = targets[pos]
        c_t = centerness(t)
        l_box = (giou_loss(reg[pos], t) * c_t).sum() / c_t.sum().clamp(min=1e-6)
        l_ctr = F.binary_cross_entropy_with_logits(ctr[pos], c_t, reduction="sum") / n_pos
    else:
        l_box = l_ctr = reg.sum() * 0.0
    return l_cls + l_box + l_ctr, {"cls": l_cls.item(), "box": l_box.item(), "ctr": l_ctr.item()}
