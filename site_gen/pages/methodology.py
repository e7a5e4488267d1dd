"""The model derived step by step, kernel traffic per recipe, limits and deviations."""

from __future__ import annotations

from dataclasses import dataclass

from roofline import notes
from roofline.calibration.data import load_calibration
from roofline.evaluate import calibration_of
from roofline.measurements import load_measurements
from roofline.recipes import RECIPE_LIST, Recipe
from roofline.symbols import CALIBRATION_SYMBOLS
from site_gen import config, safe, spec_rows
from site_gen import validation_rows as vr
from site_gen.context import GEN, Table, gpu_page, recipe_page, rel
from site_gen.formulas import Formula, methodology_formulas
from site_gen.pages.base import PageOutput, SiteInput, page

PAGE = f"{GEN}/methodology.md"
VALIDATION = rel(f"{GEN}/validation.md", PAGE)


@dataclass(frozen=True)
class Traffic:
    """One recipe x mode of the kernel-by-kernel traffic section."""

    recipe: Recipe
    mode: str
    link: str
    gemms: Table
    rows: Table
    structured: Formula


@dataclass(frozen=True)
class RoleSets:
    """The measurement sets of one role, linked to their section of the Validation page."""

    role: str
    text: str
    points: int
    links: list[safe.Md]


def _set_links(ids: tuple[str, ...] | list[str]) -> safe.Md:
    """Set ids, each linked to its section of the Validation page, comma-separated."""
    parts: list[object] = []
    for i, set_id in enumerate(ids):
        parts += [", "] if i else []
        parts.append(safe.link(set_id, f"{VALIDATION}#{set_id}"))
    return safe.concat(*parts)


def stored_table() -> Table:
    """Every value the calibration file stores, with its basis and the fit sets behind it."""
    symbols = {hw.spec_key: hw for hw in CALIBRATION_SYMBOLS}
    table = Table(("GPU", "parameter", "value", "basis", "from the sets"),
                  name="calibration-stored")  # fmt: skip
    for gpu, entry in load_calibration().entries():
        hw = symbols[entry.key]
        table.rows.append((gpu or "all GPUs", safe.math(hw.latex),
                           vr.parameter_text(entry.value, hw.unit), entry.basis,
                           _set_links(entry.sets)))  # fmt: skip
    return table


@dataclass(frozen=True)
class Calibrated:
    """The Calibrated model section: prose notes and what it says from data."""

    notes: tuple[notes.Note, ...]
    roles: list[RoleSets]
    stored: Table
    mamf: list[safe.Md]  # GPUs with measured matmul throughput, with its formats
    sets: int
    points: int
    assumed: int  # GPUs of the site with at least one assumed value
    gpus: int
    validation: str
    equations: str


def calibration(site: SiteInput) -> Calibrated:
    """What the Calibrated model section says from data: sets per role, stored values,
    which GPUs have measured matmul throughput and how many rely on fallbacks."""
    measurements = load_measurements()  # bundled: the GPUs it names are the bundled ones
    roles = [
        RoleSets(role.value, vr.ROLE_TEXT[role], sum(len(s.points) for s in sets),
                 [safe.link(s.id, f"{VALIDATION}#{s.id}") for s in sets])
        for role in vr.ROLE_ORDER
        if (sets := measurements.by_role(role))
    ]  # fmt: skip
    mamf = [
        safe.concat(safe.link(g.name, rel(gpu_page(g), PAGE)),
                    f" ({', '.join(g.measured_matmul_tflops)})")
        for g in site.atlas.gpus if g.measured_matmul_tflops
    ]  # fmt: skip
    assumed = [g for g in site.atlas.gpus if calibration_of(g, site.atlas.specs).assumed()]
    return Calibrated(
        notes=notes.CALIBRATED, roles=roles, stored=stored_table(), mamf=mamf,
        sets=len(measurements), points=sum(len(s.points) for s in measurements.sets),
        assumed=len(assumed), gpus=len(site.atlas.gpus), validation=VALIDATION,
        equations=rel("equations.md", PAGE),
    )  # fmt: skip


def render(site: SiteInput) -> PageOutput:
    """The Methodology page and its tables' exports."""
    traffic = []
    for recipe in RECIPE_LIST:
        for mode in recipe.modes:
            stem = config.slug(f"{mode.value}-{recipe.name}")
            traffic.append(Traffic(
                recipe=recipe, mode=mode.value, link=rel(recipe_page(recipe.name), PAGE),
                gemms=spec_rows.gemms_table(recipe, mode, f"{stem}-gemms"),
                rows=spec_rows.kernels_table(recipe, mode, f"{stem}-rows"),
                structured=site.symbolic[(mode.value, recipe.name)][0],
            ))  # fmt: skip
    symbols = spec_rows.symbols_table()
    calibrated = calibration(site)
    tables = [symbols, calibrated.stored, *(t for x in traffic for t in (x.rows, x.gemms))]
    return page(
        PAGE, "methodology.md.j2", tables, formulas=methodology_formulas(), traffic=traffic,
        symbols=symbols, recipes=RECIPE_LIST, limitations=notes.LIMITATIONS,
        deviations=notes.DEVIATIONS, calibrated=calibrated,
    )  # fmt: skip
