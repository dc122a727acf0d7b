"""Fast numpy tests of the detection rules serving shares: letterbox mapping, NMS, mAP, thresholds."""

import numpy as np
import pytest

from builder_pipelines.detection import postprocess
from builder_pipelines.detection.boxes import iou_matrix, letterbox_geometry, nms
from builder_pipelines.detection.evaluation import Matched, average_precision, choose_score_threshold, detection_metrics


def test_postprocess_maps_letterboxed_boxes_to_original_pixels():
    # A 200x100 image letterboxed into 64x64: scale 0.32, resized to 64x32 at the top-left.
    scale, nw, nh = letterbox_geometry(200, 100, 64, 64)
    assert scale == pytest.approx(0.32) and (nw, nh) == (64, 32)
    boxes = np.array(
        [
            [16.0, 8.0, 32.0, 24.0],  # -> (50, 25, 100, 75)
            [48.0, 16.0, 70.0, 40.0],
        ]
    )  # spills past the image: clipped to (150, 50, 200, 100)
    scores = np.array([[0.9, 0.1], [0.2, 0.7]])
    b, s, k = postprocess(boxes, scores, scale, scale, 200, 100, score_threshold=0.5, nms_iou=0.5, max_detections=10)
    np.testing.assert_allclose(b, [[50, 25, 100, 75], [150, 50, 200, 100]])
    np.testing.assert_allclose(s, [0.9, 0.7])
    assert k.tolist() == [0, 1]


def test_postprocess_stretch_uses_per_axis_scales():
    b, _, _ = postprocess(np.array([[10.0, 10.0, 20.0, 20.0]]), np.array([[0.9]]), 0.5, 0.25, 1000, 1000, 0.5, 0.5, 5)
    np.testing.assert_allclose(b, [[20, 40, 40, 80]])


def test_postprocess_nms_per_class_agnostic_and_max_detections():
    boxes = np.array([[0, 0, 10, 10], [1, 0, 11, 10], [50, 50, 60, 60]], float)
    scores = np.array([[0.9, 0.0], [0.0, 0.8], [0.6, 0.0]])
    _, s, k = postprocess(boxes, scores, 1, 1, 100, 100, 0.5, 0.5, 10)
    assert s.tolist() == [0.9, 0.8, 0.6] and k.tolist() == [0, 1, 0]  # different classes both survive
    _, s, _ = postprocess(boxes, scores, 1, 1, 100, 100, 0.5, 0.5, 10, class_agnostic=True)
    assert s.tolist() == [0.9, 0.6]
    _, s, _ = postprocess(boxes, scores, 1, 1, 100, 100, 0.5, 0.5, 2)
    assert s.tolist() == [0.9, 0.8]
    _, s, _ = postprocess(boxes, scores, 1, 1, 100, 100, 0.95, 0.5, 2)
    assert len(s) == 0


def test_nms_and_iou():
    boxes = np.array([[0, 0, 10, 10], [0, 0, 10, 5], [20, 20, 30, 30]], float)
    assert iou_matrix(boxes[:1], boxes[1:2])[0, 0] == pytest.approx(0.5)
    assert nms(boxes, np.array([0.9, 0.8, 0.7]), 0.5).tolist() == [0, 1, 2]  # IoU 0.5 is not > 0.5
    assert nms(boxes, np.array([0.9, 0.8, 0.7]), 0.4).tolist() == [0, 2]


def test_average_precision_101_point_by_hand():
    # 2 truths; detections by score: TP, FP, TP -> precision envelope 1 up to recall 0.5, then 2/3.
    tp = np.array([[True], [False], [True]])
    ap, _ = average_precision(np.array([0.9, 0.8, 0.7]), tp, 2)
    assert ap[0] == pytest.approx((51 * 1.0 + 50 * 2 / 3) / 101)


def _split(perfect: bool):
    gts = [
        (np.array([[10, 10, 50, 50], [60, 60, 90, 90]], float), np.array([0, 1])),
        (np.zeros((0, 4)), np.zeros(0, int)),
    ]
    dets = [
        (
            np.array([[10, 10, 50, 50], [60, 60, 90, 90], [0, 0, 5, 5]], float),
            np.array([0.9, 0.8, 0.3]),
            np.array([0, 1 if perfect else 0, 0]),
        ),
        (np.array([[1, 1, 9, 9]], float), np.array([0.2]), np.array([1])),
    ]
    return dets, gts


def test_map_perfect_and_imperfect():
    dets, gts = _split(True)
    m = detection_metrics(Matched(dets, gts, 2), np.arange(2), 0.5, n_boot=50)
    assert m["map50"]["value"] == pytest.approx(1.0) and m["map50_95"]["value"] == pytest.approx(1.0)
    assert m["precision"]["value"] == pytest.approx(1.0) and m["recall"]["value"] == pytest.approx(1.0)
    dets, gts = _split(False)
    m = detection_metrics(Matched(dets, gts, 2), np.arange(2), 0.5, n_boot=50)
    assert m["map50"]["per_class"]["1"]["value"] == pytest.approx(
        0.0
    )  # class 1 only found at score 0.2 in the wrong place
    assert m["map50"]["per_class"]["0"]["value"] == pytest.approx(1.0)
    assert m["map50"]["value"] == pytest.approx(0.5)
    assert m["recall"]["per_class"]["1"]["value"] == 0.0


def test_score_floor_then_filter_equals_serving_at_threshold():
    rng = np.random.default_rng(0)
    boxes = rng.uniform(0, 80, (200, 2)).repeat(2, 1) + np.array([0, 0, 20, 20]) * rng.uniform(0.5, 1.5, (200, 1))
    boxes = boxes[:, [0, 1, 2, 3]]
    scores = rng.random((200, 3))
    low = postprocess(boxes, scores, 1, 1, 100, 100, 0.05, 0.5, 300)
    served = postprocess(boxes, scores, 1, 1, 100, 100, 0.6, 0.5, 300)
    keep = low[1] >= 0.6
    np.testing.assert_allclose(low[0][keep], served[0])
    assert low[2][keep].tolist() == served[2].tolist()


def test_threshold_rules_follow_the_metric():
    # One class, 10 truths; detections scored 0.95..0.05, true positives at the high end.
    scores = np.linspace(0.95, 0.05, 19)
    truth_boxes = np.array([[i * 10, 0, i * 10 + 8, 8] for i in range(10)], float)
    det_boxes = np.array(
        [[i * 10, 0, i * 10 + 8, 8] if i < 10 else [i * 10, 50, i * 10 + 8, 58] for i in range(19)], float
    )
    order = np.r_[0:6, 10:12, 6:10, 12:19]  # 6 TP, 2 FP, 4 TP, 7 FP
    m = Matched([(det_boxes[order], scores, np.zeros(19, int))], [(truth_boxes, np.zeros(10, int))], 1)
    t_prec, p = choose_score_threshold(m, "precision")
    t_rec, r = choose_score_threshold(m, "recall")
    t_f1, _ = choose_score_threshold(m, "f_macro")
    assert p == 1.0 and t_prec > scores[6]  # only the 6 leading TPs: precision 1 with recall 0.6
    assert r == 1.0 and t_rec <= scores[11]  # every TP while precision 10/12 >= 0.5
    assert scores[12] < t_f1 <= scores[11]  # F1 peaks after the 10th TP
