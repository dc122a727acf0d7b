"""The one image -> tensor definition shared by training, evaluation and serving.

The manifest's ``input.image`` states it; serving (TypeScript + sharp) must reproduce it exactly:
decode (a DICOM: rendered to 8 bits by ``input.image.dicom``, see common/dicom.py), drop alpha, convert to ``L`` (channels 1, ITU-R 601-2 luminance) or ``RGB`` (channels 3),
16-bit greys keep their high byte; stretch to width x height with bilinear interpolation (8-bit result), then float32 * scale and
(x - mean[c]) / std[c]. Deliberately free of torch so the TypeScript parity test can call it cheaply.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageOps

from ..common import dicom

_RESAMPLE = {
    "bilinear": Image.Resampling.BILINEAR,
    "nearest": Image.Resampling.NEAREST,
    "bicubic": Image.Resampling.BICUBIC,
}


def _to_mode(img: Image.Image, channels: int) -> Image.Image:
    if img.mode in ("I;16", "I;16B", "I;16L", "I"):
        # 16-bit greys: keep the high byte (x >> 8), as libvips does when casting grey16 to 8 bits,
        # instead of Pillow's clipping at 255.
        arr = np.asarray(img, dtype=np.int64) >> 8
        img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), mode="L")
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        img = img.convert("RGBA").convert("RGB")  # alpha dropped, as the manifest says
    return img.convert("L" if channels == 1 else "RGB")


def open_image(path: str, dicom_rendering: dict | None = None) -> Image.Image:
    """The one place an image file is opened: a DICOM (or one frame of it) is rendered to 8 bits by the
    manifest's input.image.dicom record (common/dicom.py) and from then on treated as a decoded PNG."""
    return dicom.open_path(path, dicom_rendering)


def load_uint8(
    path: str,
    width: int,
    height: int,
    channels: int,
    interpolation: str = "bilinear",
    dicom_rendering: dict | None = None,
) -> np.ndarray:
    """Decoded, converted and resized image as uint8 [C, H, W] (the cacheable part of preprocessing)."""
    with open_image(path, dicom_rendering) as img:
        img.load()
        img = _to_mode(img, channels)
        if img.size != (width, height):
            img = img.resize((width, height), resample=_RESAMPLE[interpolation])
        arr = np.asarray(img, dtype=np.uint8)
    return arr[None, :, :] if arr.ndim == 2 else arr.transpose(2, 0, 1).copy()


def normalise(u8: np.ndarray, image_spec: dict) -> np.ndarray:
    """uint8 [..., C, H, W] -> float32 with the manifest's scale, mean and std."""
    c = u8.shape[-3]
    mean = np.asarray(image_spec["mean"], dtype=np.float32).reshape(c, 1, 1)
    std = np.asarray(image_spec["std"], dtype=np.float32).reshape(c, 1, 1)
    # In place, the same float32 operations in the same order as (x * scale - mean) / std: one array of the
    # set's size instead of three temporaries (2 GB for 76,500 colour images at 28 px).
    x = u8.astype(np.float32)
    x *= np.float32(image_spec["scale"])
    x -= mean
    x /= std
    return x


def preprocess_file(path: str, image_spec: dict) -> np.ndarray:
    """float32 [C, H, W] exactly as the model expects it; ``image_spec`` is the manifest's input.image."""
    if image_spec.get("resize", "stretch") != "stretch":
        raise ValueError("only resize 'stretch' is implemented by the vision pipeline")
    u8 = load_uint8(
        path,
        int(image_spec["width"]),
        int(image_spec["height"]),
        int(image_spec["channels"]),
        image_spec.get("interpolation", "bilinear"),
        image_spec.get("dicom"),
    )
    return normalise(u8, image_spec)


def probe(path: str, dicom_rendering: dict | None = None) -> tuple[int, int, bool]:
    """(width, height, is_colour) of an image; colour means the RGB channels differ somewhere."""
    with open_image(path, dicom_rendering) as img:
        w, h = img.size
        if img.mode in ("L", "LA", "1", "I", "I;16", "I;16B", "I;16L", "F"):
            return w, h, False
        small = ImageOps.contain(img.convert("RGB"), (64, 64))
        arr = np.asarray(small, dtype=np.int16)
        colour = bool(np.abs(arr[..., 0] - arr[..., 1]).max() > 2 or np.abs(arr[..., 1] - arr[..., 2]).max() > 2)
        return w, h, colour
