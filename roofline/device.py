"""Optional torch interop: the current device's name. torch is imported only here."""

from __future__ import annotations

from roofline.errors import RooflineError
from roofline.specs.matching import quoted


def current_device_name() -> str:
    """``torch.cuda.get_device_name(0)``; a clear error without torch or a GPU, or when the
    driver reports a blank name (nothing to match: pass --gpu).

    The spec database matches the result by name or device prefix
    (:meth:`roofline.specs.SpecDatabase.match`); a name that matches only an entry's name,
    an unlisted variant, is used with a warning."""
    try:
        import torch
    except ImportError:
        raise RooflineError(
            "no --gpu given and torch is not installed to detect the GPU; pass --gpu NAME "
            "or install the extra: pip install 'roofline-atlas[torch]'"
        ) from None
    if not torch.cuda.is_available():
        raise RooflineError("no --gpu given and torch sees no GPU on this machine; pass --gpu NAME")
    return checked_device_name(torch.cuda.get_device_name(0))


def checked_device_name(name: object) -> str:
    """``name`` as the driver reported it, or RooflineError when it is not a non-blank
    string: a blank name would match nothing, and the message should say why."""
    if not isinstance(name, str) or not name.strip():
        raise RooflineError(
            f"no --gpu given and the GPU reports the device name {quoted(str(name))}, which "
            "names no GPU; pass --gpu NAME"
        )
    return name


def dtype_name(dtype: object) -> str:
    """A torch dtype or a string as a bare name: torch.float8_e4m3fn -> 'float8_e4m3fn'."""
    return str(dtype).removeprefix("torch.")
