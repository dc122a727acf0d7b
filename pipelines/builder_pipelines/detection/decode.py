"""The post-processing serving applies to the ONNX outputs, in pure numpy.

The TypeScript serving mirrors this function line by line; evaluation calls it too, so the
evaluated model is the served model:

1. boxes (M, 4) are in input-tensor pixels; divide x by scale_x and y by scale_y
   (letterbox: both equal the letterbox scale; stretch: in_w / w and in_h / h);
2. clip x to [0, orig_w] and y to [0, orig_h];
3. candidates are every (box m, class k) with scores[m, k] >= score_threshold;
4. greedy NMS per class (or over all classes when class_agnostic), dropping a box whose IoU with
   a kept higher-scoring box is > nms_iou; ties in score keep the lower (box, class) index first;
5. keep the max_detections highest scores (NMS may stop once it has kept max_detections boxes of a
   class: later ones have lower scores and would be cut here anyway).
"""

from __future__ import annotations

import numpy as np

from .boxes import nms


def postprocess(
    boxes,
    scores,
    scale_x: float,
    scale_y: float,
    orig_w: float,
    orig_h: float,
    score_threshold: float,
    nms_iou: float,
    max_detections: int,
    class_agnostic: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One image: boxes (M,4) or (1,M,4), scores (M,K) or (1,M,K) ->
    (boxes (n,4) in original pixels, scores (n,), class indices (n,)), sorted by score descending."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    s = np.asarray(scores, dtype=np.float64)
    s = s.reshape(b.shape[0], -1)
    b = b / np.array([scale_x, scale_y, scale_x, scale_y])
    b[:, [0, 2]] = np.clip(b[:, [0, 2]], 0, orig_w)
    b[:, [1, 3]] = np.clip(b[:, [1, 3]], 0, orig_h)
    m_idx, k_idx = np.nonzero(s >= score_threshold)  # row-major: (box, class) order
    cand_scores = s[m_idx, k_idx]
    cand_boxes = b[m_idx]
    if class_agnostic:
        keep = nms(cand_boxes, cand_scores, nms_iou, max_detections)
    else:
        keep_parts = []
        for k in np.unique(k_idx):
            sel = np.nonzero(k_idx == k)[0]
            keep_parts.append(sel[nms(cand_boxes[sel], cand_scores[sel], nms_iou, max_detections)])
        keep = np.concatenate(keep_parts) if keep_parts else np.zeros(0, dtype=np.int64)
    # Sort the kept candidates by score (stable on candidate order) and cut to max_detections.
    keep = keep[np.lexsort((keep, -cand_scores[keep]))][:max_detections]
    return cand_boxes[keep], cand_scores[keep], k_idx[keep].astype(np.int64)
