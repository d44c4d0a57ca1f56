"""Reading and checking what the sve commands are given: packed NPZ sets, PNG folders, model files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from paperkit.core import io
from paperkit.core.errors import InputError
from paperkit.methods.sve.render import ARRAYS, MIN_SIZE

DATA_DIR = Path(__file__).parent / "data"
SHIPPED_EVAL = DATA_DIR / "eval200.npz"            # 200 held-out diagrams of 128 px (the scale)
SHIPPED_EVAL64 = DATA_DIR / "eval64.npz"           # 200 of 64 px from the fixed eval seed: sve-small's held-out set
SHIPPED_MODEL = DATA_DIR / "sve-small.pt"          # trained at 64 px (examples/sve/configs/small.yaml)
BUILTIN_MODELS = {"sve-small": SHIPPED_MODEL}
BUILTIN_DATA = {"sve-eval200": SHIPPED_EVAL, "sve-eval64": SHIPPED_EVAL64}
FORMAT = "paperkit-sve/1"
MAX_SIDE = 2048


def as_uint8(images: np.ndarray, name: str) -> np.ndarray:
    """(N, H, W) greyscale as uint8: uint8 kept, uint16 scaled by 1/257, floats in [0, 1] scaled by 255."""
    if images.ndim != 3:
        raise InputError(f"{name}: 'images' has shape {images.shape}; expected (N, H, W) greyscale images")
    if images.dtype == np.uint8:
        out = images
    elif images.dtype == np.uint16:
        out = np.round(images / 257.0).astype(np.uint8)
    elif np.issubdtype(images.dtype, np.floating):
        bad = ~np.isfinite(images)
        if bad.any():
            raise InputError(f"{name}: 'images' has {int(bad.sum())} NaN or infinite pixels; expected values in [0, 1]")
        if images.size and (images.min() < 0 or images.max() > 1):
            raise InputError(f"{name}: float 'images' must lie in [0, 1] (paper = 1), got [{images.min():g}, {images.max():g}]")
        out = np.round(images * 255.0).astype(np.uint8)
    else:
        raise InputError(f"{name}: 'images' has dtype {images.dtype}; expected uint8, uint16 or floats in [0, 1]")
    check_side(out.shape[1], out.shape[2], name)
    return out


def check_side(h: int, w: int, name: str) -> None:
    if min(h, w) < MIN_SIZE:
        raise InputError(f"{name}: images are {w}x{h} px; expected at least {MIN_SIZE} px on each side")
    if max(h, w) > MAX_SIDE:
        raise InputError(f"{name}: images are {w}x{h} px; expected at most {MAX_SIDE} px on each side")


def read_packed(path: str | Path, *, labels: bool) -> dict[str, np.ndarray]:
    """An NPZ of images (and, when ``labels``, every label array written by sve-render), checked."""
    from paperkit.methods.sve.train import check_arrays

    path = BUILTIN_DATA.get(str(path), path)
    name = io.display_name(path)
    data = io.read_arrays(io.require_file(path))
    if "images" not in data:
        raise InputError(f"{name}: no 'images' array; expected an NPZ written by sve-render (arrays: {', '.join(ARRAYS)})")
    data["images"] = as_uint8(data["images"], name)
    if len(data["images"]) == 0:
        raise InputError(f"{name}: 'images' holds no images")
    if labels:
        check_arrays(data, name)
    return data


def has_labels(data: dict[str, np.ndarray]) -> bool:
    return all(k in data for k in ARRAYS)


def read_image(path: Path) -> np.ndarray:
    """One PNG/JPEG as uint8 greyscale: L and RGB kept, RGBA composited on white, 16-bit scaled; others refused."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            im.load()
            mode = im.mode
            if mode in ("I;16", "I;16B", "I;16L", "I"):
                arr = np.asarray(im, dtype=np.float64)
                if arr.size and arr.max() > 65535:
                    raise InputError(f"{path}: 32-bit integer pixels; expected 8- or 16-bit greyscale or RGB")
                grey = np.round(arr / 257.0).astype(np.uint8)
            elif mode == "RGBA" or mode == "LA":
                white = Image.new("RGBA", im.size, (255, 255, 255, 255))
                grey = np.asarray(Image.alpha_composite(white, im.convert("RGBA")).convert("L"))
            elif mode in ("L", "RGB"):
                grey = np.asarray(im.convert("L"))
            else:
                raise InputError(f"{path}: image mode '{mode}' is not greyscale or RGB; convert it to L or RGB first")
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
        raise InputError(f"{path}: not a readable image ({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
    check_side(*grey.shape, str(path))
    return np.ascontiguousarray(grey, dtype=np.uint8)


def read_folder(path: Path) -> tuple[list[str], list[np.ndarray]]:
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg") and p.is_file())
    if not files:
        raise InputError(f"{path}: no .png/.jpg images in this folder")
    return [p.name for p in files], [read_image(p) for p in files]


def resolve_model(spec: str) -> Path:
    path = BUILTIN_MODELS.get(spec, Path(spec))
    return io.require_file(path)


def load_model(spec: str, device: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(modules, config, stored metrics) of a model file written by sve-encode (or a built-in name)."""
    from paperkit.methods.sve.train import build_models

    path = resolve_model(spec)
    ckpt = io.load_torch(path)
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise InputError(f"{path}: not an sve-encode model (no '{FORMAT}' format tag)")
    config = ckpt["config"]
    try:
        models = build_models(config)
        for key, module in models.items():
            state = {k: v.float() if v.is_floating_point() else v for k, v in ckpt[key].items()}
            module.load_state_dict(state, strict=True)
    except (KeyError, RuntimeError, TypeError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{path}: its weights do not fit the sve networks it names (other heads or sizes: {first[:200]})") from None
    for module in models.values():
        module.to(device).eval()
    return models, config, ckpt.get("metrics", {})


def model_state(models: dict[str, Any], config: dict[str, Any], metrics: dict[str, Any], half: bool) -> dict[str, Any]:
    """The model file's content: tensors on CPU (float16 when ``half``), the config, stored metrics."""
    out: dict[str, Any] = {"format": FORMAT, "config": config, "metrics": metrics}
    for key, module in models.items():
        out[key] = {k: (v.detach().cpu().half() if half and v.is_floating_point() else v.detach().cpu().clone())
                    for k, v in module.state_dict().items()}
    return out
