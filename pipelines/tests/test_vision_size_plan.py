"""Issue 52 item 2: above 64 px the training size is chosen by measurement, and a larger size only when it pays.
The decisions are pure functions of given probe scores and speeds; one small probe run checks the measuring part."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from builder_pipelines.vision import size_plan as sp
from builder_pipelines.vision.crossfit_plan import RECIPES
from builder_pipelines.vision.train import TrainData

sys.path.insert(0, str(Path(__file__).parent))
from device_choice import TORCH_DEVICE  # noqa: E402

N, TRAIN_S = 600, 100.0  # pooled images, training seconds: a side fits when ms/image x 600 x 32 <= 85 s (4.43 ms)


def _p(side: int, score: float | None, ms: float, probed: bool = True) -> sp.SizeProbe:
    return sp.SizeProbe(side, score, ms / 1000, epochs=5, seconds=2.0, probed=probed)


def test_candidates_stay_at_or_below_the_images_own_size_and_small_images_keep_theirs():
    assert sp.candidate_sides(256, 224) == [28, 64, 96, 128, 160, 224]
    assert sp.candidate_sides(128, 128) == [28, 64, 96, 128]
    assert sp.candidate_sides(150, 150) == [28, 64, 96, 128, 150]
    assert sp.candidate_sides(64, 64) == [64]
    assert sp.candidate_sides(28, 28) == [28]


def test_a_larger_size_is_chosen_only_when_its_score_gain_is_measurable():
    side, why = sp.choose([_p(28, 0.90, 1.0), _p(64, 0.905, 2.0), _p(96, 0.93, 4.0)], N, TRAIN_S)
    assert side == 96  # 64 gains 0.005 (< 0.01): stays at 28; 96 gains 0.03 over 28
    assert "64 px gains +0.005 over 28 px" in why and "96 px gains +0.030 over 28 px: chosen" in why


def test_more_pixels_that_score_worse_are_not_chosen():
    # the case: the larger images scored lower than the shrunk ones
    side, why = sp.choose([_p(28, 0.928, 1.0), _p(64, 0.91, 2.0), _p(128, 0.897, 4.0)], N, TRAIN_S)
    assert side == 28
    assert "not worth its seconds" in why


def test_a_size_at_which_the_plan_does_not_fit_is_not_chosen_however_well_it_scored():
    side, why = sp.choose([_p(28, 0.90, 1.0), _p(64, 0.95, 3.0), _p(128, 0.99, 12.0)], N, TRAIN_S)
    assert side == 64
    assert "128 px does not fit the plan (12.00 ms per training image)" in why


def test_with_one_fitting_size_no_score_is_needed_and_with_none_the_smallest_is_taken():
    side, why = sp.choose([_p(28, None, 1.0), _p(64, None, 6.0), _p(96, None, 13.5, probed=False)], N, TRAIN_S)
    assert side == 28 and "the only size at which the plan fits" in why and "estimated" in why
    side, why = sp.choose([_p(28, None, 9.0), _p(64, None, 40.0)], N, TRAIN_S)
    assert side == 28 and "no size fits" in why


def test_a_side_the_last_timing_rules_out_is_not_probed():
    last = _p(28, None, 1.0)
    assert sp.worth_probing(56, last, N, TRAIN_S)  # 4 ms estimated: fits
    assert not sp.worth_probing(64, last, N, TRAIN_S)  # 5.2 ms estimated: does not


@pytest.fixture
def one_thread():
    # a shared CI host: more threads than free cores made this small run 8x slower (36 s against 4 s)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.train  # short training trials (about 2 s on one quiet core)
def test_the_probe_times_each_side_and_scores_only_where_more_than_one_fits(one_thread):
    gen = torch.Generator().manual_seed(0)
    n = 48
    y = torch.arange(n) % 2
    # images whose class is a bright square: learnable at any size
    u8 = np.zeros((n, 1, 32, 32), dtype=np.uint8)
    u8[y.numpy() == 1, :, 8:24, 8:24] = 200
    u8 = np.clip(u8 + torch.randint(0, 40, u8.shape, generator=gen).numpy(), 0, 255).astype(np.uint8)

    def decode(rows, side):
        x = torch.from_numpy(u8[rows]).float()
        return torch.nn.functional.interpolate(x, size=(side, side), mode="bilinear").round().byte().numpy()

    base = TrainData(
        torch.empty(0), torch.empty(0), torch.empty(0), torch.empty(0), np.zeros(0), "binary", "auc", 2, None, False
    )
    truth = np.eye(2, dtype=int)[y.numpy()]
    groups = np.array([f"p{i}" for i in range(n)])
    probes = sp.run_probes([16, 32], decode, base, groups, y, truth, RECIPES[0], n, 0, TORCH_DEVICE, 1.0, 1e6)
    assert [p.side for p in probes] == [16, 32]
    assert all(p.probed and p.score is not None and p.train_s_per_image > 0 for p in probes)
    side, _ = sp.choose(probes, n, 1e6)
    assert side in (16, 32)
    # no time to train at 32 px: only 16 is timed-and-fits, so nothing is trained and no score is given
    slow = sp.run_probes([16, 32], decode, base, groups, y, truth, RECIPES[0], n, 0, TORCH_DEVICE, 1.0, 1e-9)
    assert [p.score for p in slow] == [None, None]


def test_a_probe_without_both_classes_says_so():
    with pytest.raises(sp.NoProbe, match="two classes"):
        sp._probe_rows(np.array(["a", "b", "c", "d"]), np.array([0, 0, 0, 0]), 0)
