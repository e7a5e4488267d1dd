"""Citable formulas: stable ids, content hashes and the "cite" snippet.

Every symbolic formula on the site has two names:

* an **anchor**, ``f-<mode>-<recipe>[-fused]-<quantity>`` (``f-model-<name>`` for the
  methodology's building blocks). It is derived from names only, never from the order
  of anything, so links keep working across builds and across formula changes;
* a **citation id**, ``<anchor>@<hash>``, where ``<hash>`` is the first 8 hex digits of
  the SHA-256 of the formula's LaTeX (left-hand side included). It is identical
  across builds and changes exactly when the printed formula changes, so a review
  comment that quotes it says which version of the formula it meant.

The snippet (:func:`cite_snippet`) is a Markdown permalink followed by a ``$$ ... $$``
block, which GitHub renders as math. ``roofline latex --cite`` and the site's "Cite"
buttons both print it with this module, so they are byte-identical.

This module imports no plotting or site code: the CLI uses it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from roofline.model.build import MODEL_VERSION, build_model
from roofline.model.terms import QUANTITY_LATEX, QUANTITY_SYMBOLS, Quantity
from roofline.publish import latex as latex_printer
from roofline.publish import site_paths
from roofline.publish.slugs import slug  # re-exported: site_gen.config and tests import cite.slug
from roofline.recipes import Mode
from roofline.specs import GpuSpec

#: Where the site is published; permalinks in cite snippets start here. Override with
#: the ``ROOFLINE_ATLAS_SITE_URL`` environment variable (read at build and CLI time).
DEFAULT_SITE_URL = "https://roofline-atlas.example/"
SITE_URL_ENV = "ROOFLINE_ATLAS_SITE_URL"

#: Site path of the equation index page.
EQUATIONS_PATH = site_paths.url_path(site_paths.EQUATIONS_PAGE)

HASH_DIGITS = 8

QUANTITY_CAPTIONS: dict[Quantity, str] = {
    Quantity.SPEEDUP: "speedup",
    Quantity.BF16_GEMM: "bf16 GEMM time (baseline), seconds",
    Quantity.LOWP_GEMM: "low-precision GEMM time, seconds",
    Quantity.OVERHEAD: "cast-kernel overhead, seconds",
    Quantity.BF16_OVERHEAD: "bf16 activation kernel (baseline), seconds",
}


def site_url() -> str:
    """The published site's base URL, ending in ``/``."""
    url = os.environ.get(SITE_URL_ENV) or DEFAULT_SITE_URL
    return url if url.endswith("/") else url + "/"


def formula_id(
    mode: Mode, recipe: str, quantity: str, gpu: str | None = None, fusion: bool = False
) -> str:
    """Stable anchor of a formula: ``f-[<gpu-slug>-]<mode>-<recipe>[-fused]-<quantity>``."""
    parts = ["f"] + ([slug(gpu)] if gpu else []) + [mode.value, recipe]
    parts += ["fused"] if fusion else []
    parts.append(quantity)
    return "-".join(p.replace("_", "-") for p in parts)


def quantity_lhs(quantity: Quantity) -> str:
    """The left-hand side symbol of a quantity, from the model's own LaTeX names."""
    if quantity is Quantity.SPEEDUP:
        return r"\mathrm{speedup}"
    return QUANTITY_LATEX[QUANTITY_SYMBOLS[quantity]]


def equation(lhs: str, latex: str) -> str:
    """The whole equation as displayed and cited: ``lhs = latex``."""
    return f"{lhs} = {latex}"


def content_hash(lhs: str, latex: str) -> str:
    """First :data:`HASH_DIGITS` hex digits of the SHA-256 of the equation's LaTeX."""
    return hashlib.sha256(equation(lhs, latex).encode("utf-8")).hexdigest()[:HASH_DIGITS]


def citation_id(anchor: str, lhs: str, latex: str) -> str:
    """``<anchor>@<hash>``: the same across builds, different when the formula changes."""
    return f"{anchor}@{content_hash(lhs, latex)}"


def equations_url(anchor: str) -> str:
    """Permalink of a symbolic formula on the equation index page."""
    return f"{site_url()}{EQUATIONS_PATH}#{anchor}"


def gpu_recipe_url(gpu: str, mode: Mode, recipe: str, anchor: str) -> str:
    """Permalink of an instantiated formula on its GPU x mode x recipe page."""
    page = site_paths.recipe_result_page(gpu, mode, recipe)
    return f"{site_url()}{site_paths.url_path(page)}#{anchor}"


def cite_snippet(anchor: str, caption: str, lhs: str, latex: str, url: str) -> str:
    """Markdown permalink plus a ``$$`` block (renders on GitHub), for review comments."""
    cid = citation_id(anchor, lhs, latex)
    return (
        f"[Roofline Atlas `{cid}`]({url}) ({caption}; model `{MODEL_VERSION}`)\n"
        f"\n$$\n{equation(lhs, latex)}\n$$\n"
    )


def symbolic_caption(mode: Mode, recipe: str, fusion: bool, what: str) -> str:
    """``speedup; training, rowwise``: a symbolic formula's caption on the index page."""
    return f"{what}; {mode.value}, {recipe}" + (", fusion modelled" if fusion else "")


def instantiated_caption(gpu: str, quantity: Quantity) -> str:
    """``speedup on NVIDIA H100`` / ``..., seconds, on NVIDIA H100``."""
    if quantity is Quantity.SPEEDUP:
        return f"speedup on {gpu}"
    return f"{QUANTITY_CAPTIONS[quantity]}, on {gpu}"


@dataclass(frozen=True)
class Citable:
    """A formula with everything its citation needs (the site's displayed formulas,
    ``site_gen.markup.formulas.Formula``, are Citables too; ``url`` "" there when a formula
    has no permalink)."""

    anchor: str
    caption: str
    lhs: str
    latex: str
    url: str = ""

    @property
    def citation_id(self) -> str:
        """``<anchor>@<hash>``."""
        return citation_id(self.anchor, self.lhs, self.latex)

    @property
    def snippet(self) -> str:
        """The cite snippet (Markdown permalink plus ``$$`` block)."""
        return cite_snippet(self.anchor, self.caption, self.lhs, self.latex, self.url)


def symbolic_total(mode: Mode, recipe: str, quantity: Quantity, fusion: bool) -> Citable:
    """One total (or the speedup) of a model in symbols, as the equation index cites it."""
    model = build_model(mode, recipe, fusion)
    anchor = formula_id(mode, recipe, quantity.value, fusion=fusion)
    return Citable(
        anchor,
        symbolic_caption(mode, recipe, fusion, QUANTITY_CAPTIONS[quantity]),
        quantity_lhs(quantity),
        latex_printer.symbolic(model.total(quantity)),
        equations_url(anchor),
    )


def instantiated_total(gpu: GpuSpec, mode: Mode, recipe: str, quantity: Quantity) -> Citable:
    """One total (or the speedup) with ``gpu``'s figures, as its GPU x recipe page shows it.

    The site shows instantiated formulas without fusion modelling only.
    """
    model = build_model(mode, recipe)
    anchor = formula_id(mode, recipe, quantity.value, gpu=gpu.name)
    return Citable(
        anchor,
        instantiated_caption(gpu.name, quantity),
        quantity_lhs(quantity),
        latex_printer.instantiated(model.total(quantity), gpu),
        gpu_recipe_url(gpu.name, mode, recipe, anchor),
    )
