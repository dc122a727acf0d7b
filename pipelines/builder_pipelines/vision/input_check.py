"""Unfamiliar-input detection for image models (issue 49 item 5): is a new image like the ones the model learned from?

Three signals, all computed inside model.onnx so that serving gets them on the same thread and in the same run as the
prediction (a third output, ``input_check`` [N, 6 + k]: feature distance, pixel distance, intensity mean, spread,
roughness and flatness, then the feature summary's first ``k`` standardised projections, which monitoring bins for
drift (issue 49 item 4; ``feature_baseline`` below, src/monitoring/recorder.ts)):

- **feature distance**: the network's own penultimate-layer features (each member's global-average-pooled maps, the
  vector its linear head reads; the members' vectors side by side for an ensemble) compared with those of the training
  images by a probabilistic-PCA Mahalanobis distance: the top ``k`` principal directions with their own variances,
  and everything outside them with one shared variance (Tipping & Bishop 1999). Far-away images (noise, another
  modality, a blank frame) land far from the cloud even when the classifier answers with confidence. The square root
  of the squared distance divided by the feature count, so the scale does not grow with the width of the network.
- **pixel distance**: the same probabilistic-PCA distance on the input tensor itself, average-pooled to at most 16x16
  per channel. The features of a small network trained on a few hundred images can land near the training cloud for
  an image of another kind (measured on BreastMNIST: uniform noise and drawn shapes were missed by the features about
  half the time); the pixels of noise, drawings and other modalities lie far outside the few directions in which
  the training images vary.
- **intensity**: the mean, spread and roughness of the input tensor itself (after the manifest's normalisation), each
  checked against the training images' range with a margin: the spread catches blank and saturated frames whatever
  the features say; the roughness (the mean squared difference between neighbouring pixels over twice the variance:
  near 0 for smooth pictures, near 1 for pixel noise) catches noise, which a speckled ultrasound's pixel distance
  let through about a third of the time; the flatness (the share of neighbouring pixels that differ by under 2 % of
  the image's spread) catches drawings, documents and flat colour fields, which speckled ultrasound never is (on
  BreastMNIST at most 0.46 of training images' neighbours were that alike; drawn shapes at least 0.61).

The thresholds on the two distances are calibrated on images the statistics were not fitted on (the validation split; with
a cross-fitted ensemble, which trained on those too, on half of the pooled images while the other half is fitted), as
their 99.5th percentile. How often the test split is flagged is measured and written to the manifest, never used to
choose anything.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

from ..common import monitoring_baseline
from .models import ExportModel

OUTPUT = "input_check"
QUANTILE = 99.5
MAX_COMPONENTS = 32
#: The feature summary's projections served for monitoring's drift: the first (largest-variance) directions, each
#: standardised by its own spread. A few: each is one row of the drift table and one small histogram per hour.
DRIFT_COMPONENTS = 8
#: Where the projections start in the check output (after the six values the rule reads).
PROJECTION_OFFSET = 6
#: Training images the statistics are fitted on, at most (a random subset beyond: the extra pass stays cheap).
MAX_FIT_IMAGES = 4000
#: The intensity range's margin, as a share of the training images' own spread of that descriptor.
INTENSITY_MARGIN = 0.25


def features(model: ExportModel, x: torch.Tensor) -> torch.Tensor:
    """[N, D]: each member's pooled feature vector (averaged over the test-time views), members side by side."""
    return model.heads(x)[2]


def intensity(x: torch.Tensor) -> torch.Tensor:
    """[N, 4]: the mean, standard deviation, roughness and flatness of each input tensor, over channels and pixels.

    On the tensor average-pooled by a whole factor to at most 64 pixels a side: a dozen passes over a 224x224 image
    cost about a third of a small network's run; over 56x56 they cost little, and noise stays noise (pooled pixel
    noise is still independent from one pixel to the next), flat stays flat. Small inputs (MedMNIST's 28) are used
    as they are.
    """
    factor = max(1, -(-max(x.shape[2], x.shape[3]) // 64))
    if factor > 1:
        x = F.avg_pool2d(x, factor)
    flat = x.flatten(1)
    mean = flat.mean(dim=1, keepdim=True)
    var = ((flat - mean) ** 2).mean(dim=1, keepdim=True)
    across = ((x[..., 1:] - x[..., :-1]) ** 2).flatten(1).mean(dim=1, keepdim=True)
    down = ((x[..., 1:, :] - x[..., :-1, :]) ** 2).flatten(1).mean(dim=1, keepdim=True)
    rough = (across + down) / (4.0 * var + 1e-6)
    tiny = 0.02 * var.sqrt()[:, :, None, None]
    flat_across = ((x[..., 1:] - x[..., :-1]).abs() <= tiny).float().flatten(1).mean(dim=1, keepdim=True)
    flat_down = ((x[..., 1:, :] - x[..., :-1, :]).abs() <= tiny).float().flatten(1).mean(dim=1, keepdim=True)
    return torch.cat([mean, var.sqrt(), rough, (flat_across + flat_down) / 2], dim=1)


def pooled_pixels(x: torch.Tensor) -> torch.Tensor:
    """[N, C*s*s]: the input tensor average-pooled by a whole factor to at most 16 pixels a side."""
    factor = max(1, -(-max(x.shape[2], x.shape[3]) // 16))
    return (F.avg_pool2d(x, factor) if factor > 1 else x).flatten(1)


class FeatureSummary(nn.Module):
    """Fitted statistics as constants of the graph: a probabilistic-PCA distance of a vector to the fitted cloud."""

    def __init__(self, mu: np.ndarray, basis: np.ndarray, variances: np.ndarray, rest_variance: float) -> None:
        super().__init__()
        self.register_buffer("mu", torch.tensor(mu, dtype=torch.float32))
        self.register_buffer("basis", torch.tensor(basis, dtype=torch.float32))  # [D, k], orthonormal columns
        self.register_buffer("inv_var", torch.tensor(1.0 / variances, dtype=torch.float32))
        self.inv_rest = float(1.0 / rest_variance)
        self.dims = float(mu.shape[0])

    def distance(self, f: torch.Tensor) -> torch.Tensor:
        c = f - self.mu
        z = c @ self.basis
        inside = (z * z * self.inv_var).sum(dim=1, keepdim=True)
        # The residual itself, not |c|^2 - |z|^2: that difference of two large float32 sums cancels.
        r = c - z @ self.basis.t()
        outside = (r * r).sum(dim=1, keepdim=True)
        return ((inside + outside * self.inv_rest) / self.dims).sqrt()

    def projection(self, f: torch.Tensor, k: int) -> torch.Tensor:
        """[N, k]: the features on the first k principal directions, each divided by its spread (unit variance on
        the fitting images), so that every component's histogram has the same scale."""
        z = (f - self.mu) @ self.basis[:, :k]
        return z * self.inv_var[:k].sqrt()


class CheckedModel(nn.Module):
    """What model.onnx computes when it carries the check: ``scores``, ``cam`` and ``input_check``."""

    def __init__(self, model: ExportModel, summary: FeatureSummary, pixels: FeatureSummary) -> None:
        super().__init__()
        self.model = model
        self.summary = summary
        self.pixels = pixels
        self.projected = int(min(DRIFT_COMPONENTS, summary.basis.shape[1]))

    def forward(self, x):
        scores, cam, pooled = self.model.heads(x)  # one pass of the backbones for the answer and the check
        check = torch.cat(
            [
                self.summary.distance(pooled),
                self.pixels.distance(pooled_pixels(x)),
                intensity(x),
                self.summary.projection(pooled, self.projected),
            ],
            dim=1,
        )
        return scores, cam, check


def fit_summary(f: np.ndarray) -> FeatureSummary:
    """Probabilistic PCA of the fitting images' features (float64 for the eigendecomposition)."""
    f = f.astype(np.float64)
    n, d = f.shape
    mu = f.mean(axis=0)
    cov = np.cov(f - mu, rowvar=False).reshape(d, d)
    vals, vecs = np.linalg.eigh(cov)
    vals, vecs = vals[::-1], vecs[:, ::-1]
    k = int(max(1, min(MAX_COMPONENTS, d - 1, n // 5)))
    floor = max(float(vals[0]) * 1e-6, 1e-8)
    rest = float(np.clip(vals[k:], 0, None).mean()) if d > k else floor
    return FeatureSummary(mu, vecs[:, :k].copy(), np.maximum(vals[:k], floor), max(rest, floor))


@torch.no_grad()
def _batched(fn, x: torch.Tensor, batch: int = 256) -> np.ndarray:
    return np.concatenate([fn(x[i : i + batch]).numpy() for i in range(0, len(x), batch)]).astype(np.float64)


def _range(values: np.ndarray) -> list[float]:
    lo, hi = float(values.min()), float(values.max())
    margin = INTENSITY_MARGIN * max(hi - lo, 1e-6)
    return [round(lo - margin, 6), round(hi + margin, 6)]


def fit_subset(x: torch.Tensor, seed: int) -> torch.Tensor:
    """The training images the statistics are fitted on, on the CPU: all, or a random MAX_FIT_IMAGES of them."""
    if len(x) > MAX_FIT_IMAGES:
        x = x[torch.from_numpy(np.random.default_rng(seed).choice(len(x), MAX_FIT_IMAGES, replace=False)).to(x.device)]
    return x.cpu()


@torch.no_grad()
def build(
    model: ExportModel, fit_x: torch.Tensor, calib_x: torch.Tensor, seed: int, calibration: str
) -> tuple[CheckedModel, dict]:
    """The model with its check, and the manifest's ``input_check.image`` record (the test's rate comes later)."""
    model = model.cpu().eval()
    fit_x = fit_subset(fit_x, seed)
    summary = fit_summary(_batched(lambda b: features(model, b), fit_x))
    pixels = fit_summary(_batched(pooled_pixels, fit_x))
    dist = _batched(lambda b: summary.distance(features(model, b)), calib_x)[:, 0]
    pix = _batched(lambda b: pixels.distance(pooled_pixels(b)), calib_x)[:, 0]
    seen = _batched(intensity, torch.cat([fit_x, calib_x]))
    checked = CheckedModel(model, summary, pixels)
    record = {
        "output": OUTPUT,
        "components": int(summary.basis.shape[1]),
        "projected_components": checked.projected,
        "feature_dims": int(summary.mu.shape[0]),
        "pixel_components": int(pixels.basis.shape[1]),
        "pixel_dims": int(pixels.mu.shape[0]),
        "threshold": round(float(np.percentile(dist, QUANTILE)), 6),
        "pixel_threshold": round(float(np.percentile(pix, QUANTILE)), 6),
        "quantile": QUANTILE,
        "calibration": calibration,
        "calibration_images": len(calib_x),
        "fit_images": len(fit_x),
        "intensity_mean": _range(seen[:, 0]),
        "intensity_std": _range(seen[:, 1]),
        "roughness": _range(seen[:, 2]),
        "flatness": _range(seen[:, 3]),
    }
    return checked, record


def unfamiliar(check: np.ndarray, record: dict) -> np.ndarray:
    """The rule serving applies (src/serving/input-check.ts), for the test split's rate: [N, 6] -> [N] booleans."""
    inside = (check[:, 0] <= record["threshold"]) & (check[:, 1] <= record["pixel_threshold"])
    for col, key in ((2, "intensity_mean"), (3, "intensity_std"), (4, "roughness"), (5, "flatness")):
        lo, hi = record[key]
        inside &= (check[:, col] >= lo) & (check[:, col] <= hi)
    return ~inside


def test_rate(sess, x: np.ndarray, record: dict, batch: int = 256) -> dict:
    """How many test-split images the rule calls unfamiliar: measured for the manifest, never used to choose."""
    checks = [
        sess.run([OUTPUT], {"input": np.ascontiguousarray(x[i : i + batch], dtype=np.float32)})[0]
        for i in range(0, len(x), batch)
    ]
    flagged = int(unfamiliar(np.concatenate(checks), record).sum())
    return {"test_images": len(x), "test_flagged": flagged, "test_flagged_rate": round(flagged / max(len(x), 1), 4)}


def feature_baseline(sess, x: np.ndarray, record: dict, source: str, batch: int = 256) -> dict | None:
    """Monitoring's baseline of the feature summary (``monitoring_baseline.features``): the served model's own
    projections of the baseline images (the same graph serving runs, so the two bin alike), each component binned
    at its deciles as a numeric column (img:feature:1..k). Counts only: no image and no feature vector is kept.
    None for a graph without projections."""
    k = int(record.get("projected_components") or 0)
    if not k or not len(x):
        return None
    check = np.concatenate(
        [
            sess.run([OUTPUT], {"input": np.ascontiguousarray(x[i : i + batch], dtype=np.float32)})[0]
            for i in range(0, len(x), batch)
        ]
    ).astype(np.float64)
    proj = check[:, PROJECTION_OFFSET : PROJECTION_OFFSET + k]
    return {
        "images": len(x),
        "source": source,
        "descriptors": [monitoring_baseline.numeric(f"img:feature:{i + 1}", proj[:, i]) for i in range(k)],
    }


def descriptors(paths: list[str], channels: int, limit: int = 2000) -> dict:
    """The training images' own sizes as summaries (informative; not part of the rule: hospitals send other sizes).

    Read from the files' headers only (at most ``limit`` of them); a file Pillow cannot size (a DICOM) is left out.
    """
    sizes = []
    for p in paths[:limit]:
        try:
            with Image.open(p) as img:
                sizes.append(img.size)
        except Exception:  # noqa: BLE001  (a DICOM or an odd file: the sizes are a summary, not a check)
            continue
    if not sizes:
        return {"channels": channels, "images": 0}
    w = np.array([s[0] for s in sizes], dtype=float)
    h = np.array([s[1] for s in sizes], dtype=float)
    q = lambda v: [round(float(np.percentile(v, p)), 4) for p in (0, 1, 50, 99, 100)]  # noqa: E731
    return {
        "images": len(sizes),
        "channels": channels,
        "width_quantiles": q(w),
        "height_quantiles": q(h),
        "aspect_quantiles": q(w / np.maximum(h, 1)),
    }
