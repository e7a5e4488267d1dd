"""The capability part of ``roofline specs list`` and ``specs show``: each GPU x recipe's
state (native, emulated, hypothetical, impossible) with its reason in three parts."""

from __future__ import annotations

from typing import Any

from roofline import capability as cap
from roofline.recipes import RECIPE_LIST
from roofline.specs import GpuSpec, SpecDatabase

#: State -> (one-character mark in the text matrix, what it means).
STATES: dict[cap.Support, tuple[str, str]] = {
    cap.Support.NATIVE: ("N", "the hardware has the format and the platform has the kernels"),
    cap.Support.EMULATED: ("e", "runs as bf16 GEMMs on dequantized data (slower than bf16)"),
    cap.Support.HYPOTHETICAL: ("h", "computable, but no hardware format or no kernel runs it"),
    cap.Support.IMPOSSIBLE: ("-", "a peak the formulas need is missing: no estimate"),
}


def legend() -> str:
    """The matrix's legend, one state a line."""
    lines = [f"  {mark} = {state.value}: {text}" for state, (mark, text) in STATES.items()]
    return "Capability:\n" + "\n".join(lines)


def matrix_lines(specs: SpecDatabase) -> list[str]:
    """The text matrix: GPU names as a staircase of column heads, a recipe per row."""
    table = cap.matrix(specs)
    width = max(len(r.name) for r in RECIPE_LIST)
    names = list(specs)
    lines = [" " * (width + 2) + "| " * i + name for i, name in enumerate(names)]
    for recipe in RECIPE_LIST:
        row = " ".join(STATES[table[g][recipe.name].support][0] for g in names)
        lines.append(f"{recipe.name:>{width}}  {row}")
    return lines


def verdict_json(verdict: cap.Capability) -> dict[str, str]:
    """A verdict as JSON: its state, reason and the hardware and software parts."""
    return {
        "support": verdict.support.value,
        "reason": verdict.reason,
        "hardware": verdict.hardware,
        "software": verdict.software,
    }


def specs_json(specs: SpecDatabase) -> dict[str, Any]:
    """``specs list --format json``: every GPU's figures, platform and capabilities."""
    table = cap.matrix(specs)
    gpus = [
        {
            "name": gpu.name,
            "vendor": gpu.vendor,
            "platform": gpu.platform,
            "figures": gpu.hardware_values(),
            "efficiency_basis": gpu.efficiency_basis,
            "capabilities": {r: verdict_json(v) for r, v in table[gpu.name].items()},
        }
        for gpu in specs.values()
    ]
    states = {state.value: text for state, (_, text) in STATES.items()}
    return {"origin": specs.origin, "states": states, "gpus": gpus}


def gpu_lines(gpu: GpuSpec) -> list[str]:
    """``specs show``: each recipe's state and reason on ``gpu``."""
    width = max(len(r.name) for r in RECIPE_LIST)
    lines = [f"  capabilities (platform: {gpu.platform or 'unknown'}):"]
    for recipe in RECIPE_LIST:
        verdict = cap.classify(gpu, recipe)
        lines.append(f"    {recipe.name:{width}}  {verdict.support.value}: {verdict.reason}")
    return lines
