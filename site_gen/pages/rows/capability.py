"""The Specs page's capability tables: the GPU x recipe matrix, and why each cell is what
it is (:func:`roofline.capability.classify`'s hardware and software parts).

Every state is a symbol and a word, never a colour alone; every cell links to its GPU x
recipe page, which states the full reason, and the reasons table beside the matrix gives
the same reasons grouped by recipe, so no reason hides in a tooltip.
"""

from __future__ import annotations

from roofline.capability import Capability, Support, matrix
from roofline.recipes import RECIPE_LIST, Recipe
from roofline.specs import GpuSpec, SpecDatabase
from site_gen.context import Table, gpu_page, recipe_result_page, rel
from site_gen.markup import safe

#: State -> the symbol and word a matrix cell shows.
SUPPORT_SYMBOL: dict[Support, str] = {
    Support.NATIVE: "✓ native",
    Support.EMULATED: "≈ emulated",
    Support.HYPOTHETICAL: "~ hypothetical",
    Support.IMPOSSIBLE: "✗ impossible",
}

#: State -> what it means, for the legend (the order the page lists them in).
SUPPORT_MEANING: dict[Support, str] = {
    Support.NATIVE: "the hardware has the recipe's format and the GPU's platform has a "
    "library that runs its GEMMs",
    Support.EMULATED: "the recipe runs its low-precision GEMMs as bf16 GEMMs on dequantized "
    "data, so it runs on any GPU but slower than bf16; torchao's model still times those "
    "GEMMs at the fp8 peak, the calibrated model at the bf16 rate",
    Support.HYPOTHETICAL: "the formulas can be evaluated, but the hardware lacks the format "
    "or no kernel runs the recipe on the GPU's platform; estimates are labelled as such",
    Support.IMPOSSIBLE: "a peak the recipe's formulas need is missing from the GPU's spec, "
    "so no estimate exists",
}


def result_path(gpu: GpuSpec, recipe: Recipe) -> str:
    """The GPU x recipe page that explains a matrix cell (the recipe's first mode)."""
    return recipe_result_page(gpu, recipe.modes[0], recipe.name)


def capability_table(specs: SpecDatabase, page: str) -> Table:
    """GPU x recipe support: each cell the state's symbol and word, linking to the GPU x
    recipe page that gives its reason."""
    caps = matrix(specs)
    table = Table(("GPU", *(safe.breakable(r.name) for r in RECIPE_LIST)), name="cap-table")
    for gpu in specs.values():
        cells = (
            safe.link(
                SUPPORT_SYMBOL[caps[gpu.name][r.name].support], rel(result_path(gpu, r), page)
            )
            for r in RECIPE_LIST
        )
        table.rows.append((safe.link(gpu.name, rel(gpu_page(gpu), page)), *cells))
    return table


def _groups(
    specs: SpecDatabase, recipe: Recipe, caps: dict[str, dict[str, Capability]]
) -> dict[tuple[Support, str, str], list[GpuSpec]]:
    """(state, hardware, software) -> the GPUs whose verdict on ``recipe`` has those parts,
    in state order, then spec-file order."""
    groups: dict[tuple[Support, str, str], list[GpuSpec]] = {}
    for gpu in specs.values():
        verdict = caps[gpu.name][recipe.name]
        groups.setdefault((verdict.support, verdict.hardware, verdict.software), []).append(gpu)
    order = list(Support)
    return dict(sorted(groups.items(), key=lambda item: order.index(item[0][0])))


def reasons_table(specs: SpecDatabase, page: str) -> Table:
    """Why each matrix cell is what it is: per recipe, one row per distinct (state,
    hardware, software) with the GPUs it applies to."""
    caps = matrix(specs)
    header = ("recipe", "state", "GPUs", "hardware (the GPU ...)", "software")
    table = Table(header, name="cap-reasons")
    for recipe in RECIPE_LIST:
        for (support, hardware, software), gpus in _groups(specs, recipe, caps).items():
            links = [safe.link(g.name, rel(result_path(g, recipe), page)) for g in gpus]
            names = safe.concat(
                *(p for i, link in enumerate(links) for p in ((", ", link) if i else (link,)))
            )
            table.rows.append(
                (
                    safe.breakable(recipe.name),
                    SUPPORT_SYMBOL[support],
                    names,
                    hardware,
                    software or "—",
                )
            )
    return table
