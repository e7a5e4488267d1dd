"""The model's names where the code outside roofline/model/ has imported them from: a
re-export only (no code), kept until those importers import from the modules below.

Shared terms and types: :mod:`roofline.model.terms`; torchao's timing:
:mod:`roofline.model.torchao`; the calibrated timing: :mod:`roofline.model.calibrated`;
:func:`build_model` and :data:`MODEL_VERSION`: :mod:`roofline.model.build`.
"""

from __future__ import annotations

from roofline.model.build import MODEL_VERSION, build_model
from roofline.model.terms import (
    LOWP_SIDE,
    QUANTITY_LATEX,
    QUANTITY_SYMBOLS,
    Quantity,
    RooflineModel,
    Term,
)
from roofline.model.torchao import bf16_activation_time, cast_kernel_time, gemm_time

__all__ = [
    "LOWP_SIDE",
    "MODEL_VERSION",
    "QUANTITY_LATEX",
    "QUANTITY_SYMBOLS",
    "Quantity",
    "RooflineModel",
    "Term",
    "bf16_activation_time",
    "build_model",
    "cast_kernel_time",
    "gemm_time",
]
