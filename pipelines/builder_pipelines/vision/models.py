"""Compact image networks (no torchvision): a ResNet-style and a mobile-style (depthwise separable) family.

Every network is ``features(x) -> A [N, F, h, w]`` followed by global average pooling and one linear
layer, so the class activation map ReLU(sum_k w_ck A_k) is exactly the Grad-CAM of that head.
The downsampling plan depends only on the input side, so members of an ensemble share the CAM size.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


def downsampling_plan(side: int) -> tuple[int, int]:
    """(stem stride, number of stride-2 stages after the stem) for an input of ``side`` pixels.

    Small images (MedMNIST 28 px) keep full resolution in the stem and end near 7x7; large ones
    shrink early so CPU training stays affordable, ending near side/32.
    """
    if side <= 40:
        return 1, 2
    if side <= 80:
        return 2, 2
    if side <= 160:
        return 2, 3
    return 4, 3  # stride-2 conv + stride-2 max-pool, as in ResNet


def _stem(in_ch: int, width: int, stride: int) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.Conv2d(in_ch, width, 3, stride=min(stride, 2), padding=1, bias=False),
        nn.BatchNorm2d(width),
        nn.ReLU(inplace=True),
    ]
    if stride == 4:
        layers.append(nn.MaxPool2d(3, stride=2, padding=1))
    return nn.Sequential(*layers)


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.short is None else self.short(x)), inplace=True)


class InvertedResidual(nn.Module):
    """MobileNetV2 block: 1x1 expand, 3x3 depthwise, 1x1 linear projection."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int = 4) -> None:
        super().__init__()
        mid = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.body = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False),
            nn.BatchNorm2d(mid),
            nn.ReLU6(inplace=True),
            nn.Conv2d(mid, mid, 3, stride=stride, padding=1, groups=mid, bias=False),
            nn.BatchNorm2d(mid),
            nn.ReLU6(inplace=True),
            nn.Conv2d(mid, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        )

    def forward(self, x):
        out = self.body(x)
        return x + out if self.use_res else out


class CamNet(nn.Module):
    """Backbone + GAP + dropout + linear head; ``features`` gives the maps the CAM is computed on."""

    def __init__(
        self, family: str, in_ch: int, n_out: int, side: int, width: int = 32, depth: int = 1, dropout: float = 0.2
    ) -> None:
        super().__init__()
        stem_stride, n_down = downsampling_plan(side)
        widths = [width * (2**i) for i in range(n_down + 1)]
        self.stem = _stem(in_ch, widths[0], stem_stride)
        blocks: list[nn.Module] = []
        cin = widths[0]
        for stage, cout in enumerate(widths):
            for i in range(depth):
                stride = 2 if (stage > 0 and i == 0) else 1
                if family == "resnet":
                    blocks.append(BasicBlock(cin, cout, stride))
                elif family == "mobile":
                    blocks.append(InvertedResidual(cin, cout, stride))
                else:
                    raise ValueError(f"unknown family {family}")
                cin = cout
        if family == "mobile":  # a wider last 1x1 layer gives the linear head richer features
            blocks += [nn.Conv2d(cin, cin * 2, 1, bias=False), nn.BatchNorm2d(cin * 2), nn.ReLU6(inplace=True)]
            cin *= 2
        self.blocks = nn.Sequential(*blocks)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(cin, n_out)
        self.n_features = cin
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def features(self, x):
        return self.blocks(self.stem(x))

    def forward(self, x):
        a = self.features(x)
        return self.head(self.drop(a.mean(dim=(2, 3))))


class ExportModel(nn.Module):
    """What model.onnx computes: ``scores`` and ``cam`` from one or several members (an ensemble).

    Members' logits are averaged, which equals one GAP + linear head over their concatenated maps,
    so the ensemble CAM (the mean of the members' sum_k w_ck A_k, then ReLU) is still exact.
    ``flip_tta`` adds test-time augmentation: every member also sees the horizontally flipped image, and its
    map for that view is flipped back before averaging; a map's mean is unchanged by a flip, so the CAM stays
    the exact Grad-CAM of the averaged logits (at twice the network evaluations per image).
    ``out_scale``/``out_shift`` undo the target standardisation for regression (folded into the head).
    """

    def __init__(
        self,
        members: list[CamNet],
        problem: str,
        out_scale: float = 1.0,
        out_shift: float = 0.0,
        flip_tta: bool = False,
    ) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)
        self.problem = problem
        self.out_scale = float(out_scale)
        self.out_shift = float(out_shift)
        self.flip_tta = bool(flip_tta)

    def forward(self, x):
        scores, cam, _ = self.heads(x)
        return scores, cam

    def heads(self, x):
        """(scores, cam, pooled): ``pooled`` is each member's pooled feature vector (what its head reads, averaged
        over the views), members side by side, for the unfamiliar-input check (input_check.py) to reuse the one pass
        of the backbones instead of running them twice."""
        logits = 0.0
        cam = 0.0
        pooled = []
        views = [x, torch.flip(x, dims=[3])] if self.flip_tta else [x]
        for m in self.members:
            w = m.head.weight * self.out_scale
            b = m.head.bias * self.out_scale + self.out_shift
            acc = 0.0
            for v, view in enumerate(views):
                a = m.features(view)
                g = a.mean(dim=(2, 3))
                acc = acc + g
                logits = logits + F.linear(g, w, b)
                maps = F.conv2d(a, w[:, :, None, None])
                cam = cam + (torch.flip(maps, dims=[3]) if v else maps)  # the flipped view's map, back in place
            pooled.append(acc / len(views))
        n = float(len(self.members) * len(views))
        logits = logits / n
        cam = F.relu(cam / n)
        if self.problem == "multilabel":
            scores = torch.sigmoid(logits)
        elif self.problem == "regression":
            scores = logits
        else:
            scores = torch.softmax(logits, dim=1)
        return scores, cam, torch.cat(pooled, dim=1)
