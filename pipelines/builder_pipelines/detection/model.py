"""A compact FCOS-style one-stage, anchor-free detector: residual CNN backbone, FPN over strides
8/16/32, one shared head (classification, box distances, centerness) for every level.

``forward`` returns the decoded outputs that ONNX exports: boxes (B, M, 4) as x1,y1,x2,y2 in
input-tensor pixels and scores (B, M, K) = sqrt(sigmoid(class) * sigmoid(centerness)), M = all
feature-map locations of the three levels. ``raw`` returns what the loss needs.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

STRIDES = (8, 16, 32)

# name -> (channels of stem, s4, s8, s16, s32; residual blocks at s8, s16, s32; FPN/head width; head depth)
SIZES = {
    "fast": ((16, 32, 64, 96, 128), (1, 1, 1), 64, 2),
    "best": ((24, 48, 96, 128, 192), (1, 2, 1), 80, 2),
}


def conv_bn(cin: int, cout: int, k: int = 3, s: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout), nn.SiLU(inplace=True))


class Residual(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.a = conv_bn(c, c)
        self.b = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        return F.silu(x + self.b(self.a(x)))


class Backbone(nn.Module):
    """Returns feature maps at strides 8, 16, 32."""

    def __init__(self, ch, blocks) -> None:
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, ch[0], 3, 2), conv_bn(ch[0], ch[1], 3, 2), Residual(ch[1]))
        self.stages = nn.ModuleList(
            nn.Sequential(conv_bn(ch[i + 1], ch[i + 2], 3, 2), *[Residual(ch[i + 2]) for _ in range(n)])
            for i, n in enumerate(blocks)
        )
        self.out_channels = ch[2:]

    def forward(self, x):
        x = self.stem(x)
        feats = []
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        return feats


class FPN(nn.Module):
    def __init__(self, in_channels, width: int) -> None:
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, width, 1) for c in in_channels)
        self.smooth = nn.ModuleList(conv_bn(width, width) for _ in in_channels)

    def forward(self, feats):
        lat = [conv(f) for conv, f in zip(self.lateral, feats)]
        for i in range(len(lat) - 1, 0, -1):  # top-down: coarse to fine
            lat[i - 1] = lat[i - 1] + F.interpolate(lat[i], size=lat[i - 1].shape[-2:], mode="nearest")
        return [s(x) for s, x in zip(self.smooth, lat)]


class SharedTower(nn.Module):
    """Convolutions shared by every level, batch norm per level: one set of BN statistics pooled over
    levels with very different activations would be wrong for all of them at inference."""

    def __init__(self, width: int, depth: int, levels: int) -> None:
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(width, width, 3, 1, 1, bias=False) for _ in range(depth))
        self.norms = nn.ModuleList(nn.ModuleList(nn.BatchNorm2d(width) for _ in range(levels)) for _ in range(depth))

    def forward(self, x, level: int):
        for conv, norms in zip(self.convs, self.norms):
            x = F.silu(norms[level](conv(x)))
        return x


class Detector(nn.Module):
    def __init__(self, num_classes: int, in_w: int, in_h: int, size: str = "fast") -> None:
        super().__init__()
        ch, blocks, width, depth = SIZES[size]
        self.num_classes, self.in_w, self.in_h, self.size = num_classes, in_w, in_h, size
        self.backbone = Backbone(ch, blocks)
        self.fpn = FPN(self.backbone.out_channels, width)
        self.tower = SharedTower(width, depth, len(STRIDES))
        self.cls = nn.Conv2d(width, num_classes, 3, 1, 1)
        self.reg = nn.Conv2d(width, 4, 3, 1, 1)
        self.ctr = nn.Conv2d(width, 1, 3, 1, 1)
        self.level_scale = nn.Parameter(torch.ones(len(STRIDES)))
        nn.init.constant_(self.cls.bias, -math.log((1 - 0.01) / 0.01))  # focal-loss prior
        nn.init.normal_(self.cls.weight, std=0.01)
        points, strides = make_points(in_w, in_h)
        self.register_buffer("points", points, persistent=False)
        self.register_buffer("point_strides", strides, persistent=False)

    def raw(self, x):
        """-> class logits (B, M, K), distances l,t,r,b in pixels (B, M, 4), centerness logits (B, M)."""
        cls_out, reg_out, ctr_out = [], [], []
        for lvl, f in enumerate(self.fpn(self.backbone(x))):
            t = self.tower(f, lvl)
            b = t.shape[0]
            cls_out.append(self.cls(t).flatten(2).transpose(1, 2))
            reg = F.softplus(self.reg(t)) * (self.level_scale[lvl] * STRIDES[lvl])
            reg_out.append(reg.flatten(2).transpose(1, 2))
            ctr_out.append(self.ctr(t).reshape(b, -1))
        return torch.cat(cls_out, 1), torch.cat(reg_out, 1), torch.cat(ctr_out, 1)

    def forward(self, x):
        cls, reg, ctr = self.raw(x)
        return decode(self.points, reg), torch.sqrt(torch.sigmoid(cls) * torch.sigmoid(ctr).unsqueeze(-1))


def decode(points: torch.Tensor, ltrb: torch.Tensor) -> torch.Tensor:
    return torch.cat([points - ltrb[..., :2], points + ltrb[..., 2:]], dim=-1)


def feature_sizes(in_w: int, in_h: int):
    """Sizes of the s8/s16/s32 maps produced by the stride-2 convs (pad 1, kernel 3)."""
    out, w, h = [], in_w, in_h
    for _stride in (2, 2, 2, 2, 2):
        w, h = (w + 1) // 2, (h + 1) // 2
        out.append((w, h))
    return out[2:]


def make_points(in_w: int, in_h: int):
    """Centres of the feature-map cells, in input pixels, in the order ``raw`` flattens them."""
    pts, strides = [], []
    for (w, h), s in zip(feature_sizes(in_w, in_h), STRIDES):
        ys, xs = torch.meshgrid(
            torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij"
        )
        pts.append(torch.stack([(xs.reshape(-1) + 0.5) * s, (ys.reshape(-1) + 0.5) * s], 1))
        strides.append(torch.full((h * w,), float(s)))
    return torch.cat(pts), torch.cat(strides)
