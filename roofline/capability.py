"""Which recipes a GPU can run, judged in three parts: the hardware format, the software
stack that provides the recipe's kernels, and emulation.

A GPU x recipe is one of four states (:class:`Support`), decided in this order:

* **impossible**: a peak the formulas need is missing from the GPU's spec, so no estimate
  exists (torchao's model times even the emulated recipe's GEMMs at the fp8 peak);
* **emulated**: the recipe runs its low-precision GEMMs as bf16 GEMMs on dequantized data
  (``mxfp8_emulated``), which any GPU does, at the bf16 rate;
* **native**: the hardware has the recipe's format, the GPU's platform (CUDA, ROCm) has a
  library that runs the recipe's GEMMs (:attr:`Recipe.kernels`), and the GPU's spec lists
  no software gap for it (:attr:`GpuSpec.software_gaps`);
* **hypothetical**: the formulas compute it, but the hardware lacks the format or no
  kernel runs it; the estimate is what the recipe would do if one did.

A GPU whose spec names no vendor or platform is judged by its hardware formats alone,
and its verdict says so.

A grouped (mixture-of-experts) layer needs a grouped GEMM kernel too
(:attr:`Recipe.grouped_kernels`, per platform and architecture): ``grouped=True`` turns
a native verdict hypothetical when there is none, or when the GPU's spec lists a grouped
software gap (:attr:`GpuSpec.grouped_software_gaps`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from roofline.errors import UnsupportedError
from roofline.recipes import RECIPE_LIST, Mode, Platform, Recipe
from roofline.specs import GpuSpec, SpecDatabase
from roofline.specs.model import FALLBACK_KEYS


class Support(enum.StrEnum):
    """How a GPU relates to a recipe."""

    NATIVE = "native"  # the hardware has the format and the platform has the kernels
    EMULATED = "emulated"  # runs as bf16 GEMMs on dequantized data
    HYPOTHETICAL = "hypothetical"  # computable, but no hardware format or no kernel
    IMPOSSIBLE = "impossible"  # a peak the formulas need is missing


@dataclass(frozen=True)
class Capability:
    """A GPU x recipe verdict: the state and the sentence that explains it (``reason``),
    and its two parts, worded without naming the GPU so that tables can group GPUs by them:
    ``hardware``, a predicate on the GPU ("runs mxfp8 natively", "has no native mxfp8
    support", "has no fp4 peak ..."), and ``software``, which library runs the recipe's
    GEMMs on the GPU's platform or why none does ("on ROCm, there is no cuBLAS, ...")."""

    support: Support
    reason: str
    hardware: str = ""
    software: str = ""


class CapabilityWarning(UserWarning):
    """Base of the warnings :func:`roofline.evaluate` emits about a GPU x recipe verdict."""


class HypotheticalWarning(CapabilityWarning):
    """Emitted by :func:`roofline.evaluate` for a recipe the GPU lacks natively (no
    hardware format, or no kernel in its platform's stack)."""


class EmulatedWarning(CapabilityWarning):
    """Emitted by :func:`roofline.evaluate` for a recipe that runs emulated (bf16 GEMMs on
    dequantized data): torchao's model times those GEMMs at the low-precision peak."""


def platform_of(gpu: GpuSpec) -> Platform | None:
    """The GPU's software platform (its ``platform`` key, else from its vendor); None when
    its spec does not say."""
    value = gpu.platform
    return Platform(value) if value in tuple(Platform) else None


def classify(
    gpu: GpuSpec, recipe: Recipe, mode: Mode | None = None, grouped: bool = False
) -> Capability:
    """Classify ``recipe`` on ``gpu`` (in ``mode``, or in any mode it is modelled in);
    ``grouped`` judges its grouped (MoE) GEMMs."""
    verdict = _classify_dense(gpu, recipe, mode)
    if grouped and verdict.support in (Support.NATIVE, Support.EMULATED):
        return _grouped(gpu, recipe, verdict)
    return verdict


def _grouped(gpu: GpuSpec, recipe: Recipe, dense: Capability) -> Capability:
    """A dense-capable verdict, judged again for the recipe's grouped GEMM kernels."""
    platform = platform_of(gpu)
    if platform is None:
        return dense
    gap = gpu.grouped_software_gaps.get(recipe.name, "").strip().rstrip(".")
    stack = recipe.grouped_kernels.get(platform)
    if not gap and stack is not None and gpu.architecture not in stack.architectures:
        if stack.architectures:
            listed = ", ".join(stack.architectures)
            gap = (
                f"on {platform.label}, its grouped GEMMs ({stack.library}) run on {listed} "
                "GPUs only"
            )
    elif stack is None and not gap:
        gap = f"on {platform.label}, {recipe.grouped_gap}"
    if not gap:
        software = f"{dense.software}; its grouped GEMMs run on {stack.library}"
        return Capability(
            dense.support,
            f"{dense.reason}; grouped GEMMs run on {stack.library}",
            dense.hardware,
            software,
        )
    reason = (
        f"{gpu.name} runs recipe {recipe.name}'s dense GEMMs, but no grouped GEMM kernel: "
        f"{gap}; the grouped estimate is hypothetical (what it would do if one did)"
    )
    return Capability(Support.HYPOTHETICAL, reason, dense.hardware, gap)


def _classify_dense(gpu: GpuSpec, recipe: Recipe, mode: Mode | None) -> Capability:
    """The verdict for the recipe's dense GEMMs."""
    software, kernels_ok = _software(gpu, recipe)
    missing = _missing_peak(gpu, recipe, mode)
    if missing is not None:
        key, fmt_name = missing
        reason = (
            f"recipe {recipe.name} needs {fmt_name}, which {gpu.name} does not have "
            f"(no {key} in its spec)"
        )
        if recipe.emulated:
            reason += "; torchao's model times this emulated recipe's GEMMs at that peak"
        hardware = f"has no {fmt_name} peak (no {key} in its spec)"
        return Capability(Support.IMPOSSIBLE, reason, hardware, software)
    fmt = recipe.native_format
    has_format = fmt in gpu.native_formats
    if recipe.emulated:
        return _emulated(gpu, recipe, has_format, software)
    hardware = f"runs {fmt} natively" if has_format else f"has no native {fmt} support"
    if has_format and kernels_ok:
        return Capability(Support.NATIVE, f"{gpu.name} {hardware}; {software}", hardware, software)
    if not has_format:
        reason = (
            f"{gpu.name} {hardware}; the estimate for recipe {recipe.name} is hypothetical "
            "(what it would do if the hardware ran it)"
        )
        if not kernels_ok:
            reason += f"; no kernel runs it either: {software}"
    else:
        reason = (
            f"{gpu.name} {hardware}, but no kernel runs recipe {recipe.name}: {software}; the "
            "estimate is hypothetical (what it would do if one did)"
        )
    return Capability(Support.HYPOTHETICAL, reason, hardware, software)


def _missing_peak(gpu: GpuSpec, recipe: Recipe, mode: Mode | None) -> tuple[str, str] | None:
    """(spec key, format name) of the first peak the formulas need that ``gpu`` lacks."""
    modes = [mode] if mode is not None else list(recipe.modes)
    needed = {fmt.peak.spec_key: fmt.name for m in modes for fmt in recipe.formats(m)}
    for key, fmt_name in needed.items():
        if gpu.value(key) is None:
            fallback = FALLBACK_KEYS.get(key)  # an absent per-path peak falls back to it
            return (f"{key} or {fallback}" if fallback else key), fmt_name
    return None


def _software(gpu: GpuSpec, recipe: Recipe) -> tuple[str, bool]:
    """The software part for ``recipe`` on ``gpu``, and whether a kernel runs it."""
    platform = platform_of(gpu)
    if platform is None:
        return (
            "the software stack is unknown (the spec names no vendor or platform), so only "
            "the hardware formats are judged",
            True,
        )
    gap = gpu.software_gaps.get(recipe.name, "").strip().rstrip(".")
    if gap:  # a sentence from the spec file, with its source
        return gap, False
    library = recipe.kernels.get(platform)
    if library is None:
        why = recipe.kernel_gaps.get(platform)
        if why:
            return f"on {platform.label}, {why}", False
        return f"on {platform.label}, no library torchao 0.18 calls runs its GEMMs", False
    what = "bf16 GEMMs" if recipe.emulated else "GEMMs"
    return f"on {platform.label}, its {what} run on {library}", True


def _emulated(gpu: GpuSpec, recipe: Recipe, has_format: bool, software: str) -> Capability:
    """The verdict of a recipe that emulates its low-precision GEMMs with bf16 ones."""
    fmt = recipe.native_format
    if has_format:
        hardware = f"runs {fmt} natively, but this recipe does not use it"
    else:
        hardware = f"has no native {fmt} support, which this recipe does not need"
    reason = (
        f"recipe {recipe.name} emulates its {fmt} GEMMs with bf16 GEMMs on dequantized data "
        f"({software}), so on {gpu.name} it runs slower than bf16 itself; torchao's model "
        "still times those GEMMs at the fp8 peak, as a stand-in for a real MX GEMM"
    )
    return Capability(Support.EMULATED, reason, hardware, software)


def require(gpu: GpuSpec, recipe: Recipe, mode: Mode, grouped: bool = False) -> Capability:
    """The capability, raising :class:`UnsupportedError` when it is impossible."""
    verdict = classify(gpu, recipe, mode, grouped)
    if verdict.support is Support.IMPOSSIBLE:
        raise UnsupportedError(verdict.reason)
    return verdict


def matrix(specs: SpecDatabase) -> dict[str, dict[str, Capability]]:
    """GPU name -> recipe name -> capability, for every GPU and recipe."""
    return {
        gpu.name: {recipe.name: classify(gpu, recipe) for recipe in RECIPE_LIST}
        for gpu in specs.values()
    }
