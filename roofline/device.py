"""Optional torch interop: the current device's name. torch is imported only here."""

from __future__ import annotations

from roofline.errors import RooflineError


def current_device_name() -> str:
    """``torch.cuda.get_device_name(0)``; a clear error without torch or a GPU."""
    try:
        import torch
    except ImportError:
        raise RooflineError(
            "no --gpu given and torch is not installed to detect the GPU; pass --gpu NAME "
            "or install the extra: pip install 'roofline-atlas[torch]'"
        ) from None
    if not torch.cuda.is_available():
        raise RooflineError("no --gpu given and torch sees no GPU on this machine; pass --gpu NAME")
    return torch.cuda.get_device_name(0)


def dtype_name(dtype: object) -> str:
    """A torch dtype or a string as a bare name: torch.float8_e4m3fn -> 'float8_e4m3fn'."""
    return str(dtype).removeprefix("torch.")
