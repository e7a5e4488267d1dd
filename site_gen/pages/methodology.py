"""The model derived step by step, kernel traffic per recipe, limits and deviations."""

from __future__ import annotations

from dataclasses import dataclass

from roofline import units
from roofline.calibration.data import CalibrationData
from roofline.calibration.params import Basis
from roofline.measurements import MeasurementSet
from roofline.publish import notes
from roofline.publish.site_paths import grouped_result_page
from roofline.recipes import RECIPE_LIST, Mode, Recipe
from roofline.symbols import CALIBRATION_SYMBOLS, RHO_2D2D, RHO_2D3D, RHO_BF16
from site_gen import config
from site_gen.context import (
    GEN,
    Table,
    gpu_page,
    recipe_page,
    recipe_result_page,
    rel,
    set_links,
)
from site_gen.markup import safe
from site_gen.markup.formulas import Formula, methodology_formulas
from site_gen.markup.grouped_formulas import (
    GROUPED_RECIPE,
    NVFP4,
    grouped_formulas,
    nvfp4_training_formulas,
)
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows import specs as spec_rows
from site_gen.pages.rows import validation as vr

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


def stored_table(calibration: CalibrationData) -> Table:
    """Every value ``calibration`` stores, with its basis and the fit sets behind it."""
    symbols = {hw.spec_key: hw for hw in CALIBRATION_SYMBOLS}
    table = Table(
        ("GPU", "parameter", "value", "basis", "from the sets"), name="calibration-stored"
    )
    for gpu, entry in calibration.entries():
        hw = symbols[entry.key]
        table.rows.append(
            (
                gpu or "all GPUs",
                safe.math(hw.latex),
                vr.parameter_text(entry.value, hw.unit),
                entry.basis,
                set_links(entry.sets, VALIDATION),
            )
        )
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
    measurements = site.atlas.published()
    roles = [
        RoleSets(
            role.value,
            vr.ROLE_TEXT[role],
            sum(len(s.points) for s in sets),
            [safe.link(s.id, f"{VALIDATION}#{s.id}") for s in sets],
        )
        for role in vr.ROLE_ORDER
        if (sets := measurements.by_role(role))
    ]
    mamf = [
        safe.concat(
            safe.link(g.name, rel(gpu_page(g), PAGE)), f" ({', '.join(g.measured_matmul_tflops)})"
        )
        for g in site.atlas.gpus
        if g.measured_matmul_tflops
    ]
    assumed = [g for g in site.atlas.gpus if site.atlas.calibration(g.name).assumed()]
    return Calibrated(
        notes=notes.CALIBRATED,
        roles=roles,
        mamf=mamf,
        stored=stored_table(site.atlas.inputs.calibration),
        sets=len(measurements),
        points=sum(len(s.points) for s in measurements.sets),
        assumed=len(assumed),
        gpus=len(site.atlas.gpus),
        validation=VALIDATION,
        equations=rel("equations.md", PAGE),
    )


def _role_sets(sets: list[MeasurementSet]) -> list[RoleSets]:
    """``sets`` per role (held out first), each set linked to its Validation section."""
    out = []
    for role in vr.ROLE_ORDER:
        chosen = [s for s in sets if s.role is role]
        if chosen:
            links = [safe.link(s.id, f"{VALIDATION}#{s.id}") for s in chosen]
            points = sum(len(s.points) for s in chosen)
            out.append(RoleSets(role.value, vr.ROLE_TEXT[role], points, links))
    return out


@dataclass(frozen=True)
class Grouped:
    """The Grouped GEMMs section: formulas, the sets behind it, where rho is measured."""

    formulas: dict[str, Formula]
    roles: list[RoleSets]
    measured: list[safe.Md]  # "NVIDIA B200 (0.741, 0.589)": the GPUs with measured rho
    assumed: str  # the source of an assumed GPU's rho
    example: str  # a grouped page (the first GPU with measured rho, MXFP8 training)
    example_gpu: str
    rho: tuple[safe.Md, safe.Md]
    rho_bf16: safe.Md  # the bf16 grouped GEMM's rate over dense bf16
    rho_bf16_known: list[safe.Md]  # the GPUs where it is measured or fitted, with the value


@dataclass(frozen=True)
class Nvfp4Training:
    """The NVFP4 training section: the kernels' formulas and the sets behind them."""

    formulas: dict[str, Formula]
    roles: list[RoleSets]
    example: str  # the NVFP4 training page of the first GPU measured
    example_gpu: str


def grouped_section(site: SiteInput) -> Grouped:
    """What the Grouped GEMMs section says from data."""
    measurements = site.atlas.published()
    measured, assumed, first, bf16 = [], "", None, []
    for gpu in site.atlas.gpus:
        values = site.atlas.calibration(gpu.name).values
        rho = (values[RHO_2D3D.spec_key], values[RHO_2D2D.spec_key])
        if values[RHO_BF16.spec_key].basis is not Basis.ASSUMED:
            rho_bf16 = values[RHO_BF16.spec_key]
            text = f"{units.significant(rho_bf16.value, 3)}, {rho_bf16.basis}"
            bf16.append(safe.concat(safe.link(gpu.name, rel(gpu_page(gpu), PAGE)), f" ({text})"))
        if rho[0].basis is Basis.MEASURED:
            text = ", ".join(units.significant(v.value, 3) for v in rho)
            measured.append(
                safe.concat(safe.link(gpu.name, rel(gpu_page(gpu), PAGE)), f" ({text})")
            )
            first = first or gpu
        elif not assumed:
            assumed = rho[0].source
    gpu = first or site.atlas.gpus[0]
    example = rel(grouped_result_page(gpu.name, Mode.TRAINING, GROUPED_RECIPE), PAGE)
    return Grouped(
        grouped_formulas(),
        _role_sets([s for s in measurements.sets if s.groups]),
        measured,
        assumed,
        example,
        gpu.name,
        (safe.math(RHO_2D3D.latex), safe.math(RHO_2D2D.latex)),
        safe.math(RHO_BF16.latex),
        bf16,
    )


def nvfp4_section(site: SiteInput) -> Nvfp4Training:
    """What the NVFP4 training section says from data."""
    sets = [s for s in site.atlas.published().sets if s.recipe == NVFP4 and s.mode is Mode.TRAINING]
    gpu = next(
        (g for g in site.atlas.gpus if any(s.gpu == g.name for s in sets)), site.atlas.gpus[0]
    )
    example = rel(recipe_result_page(gpu, Mode.TRAINING, NVFP4), PAGE)
    return Nvfp4Training(nvfp4_training_formulas(), _role_sets(sets), example, gpu.name)


def render(site: SiteInput) -> PageOutput:
    """The Methodology page and its tables' exports."""
    traffic = []
    for recipe in RECIPE_LIST:
        for mode in recipe.modes:
            stem = config.slug(f"{mode.value}-{recipe.name}")
            traffic.append(
                Traffic(
                    recipe=recipe,
                    mode=mode.value,
                    link=rel(recipe_page(recipe.name), PAGE),
                    gemms=spec_rows.gemms_table(recipe, mode, f"{stem}-gemms"),
                    rows=spec_rows.kernels_table(recipe, mode, f"{stem}-rows"),
                    structured=site.symbolic[(mode.value, recipe.name)][0],
                )
            )
    symbols = spec_rows.symbols_table()
    calibrated = calibration(site)
    tables = [symbols, calibrated.stored, *(t for x in traffic for t in (x.rows, x.gemms))]
    return page(
        PAGE,
        "methodology.md.j2",
        tables,
        formulas=methodology_formulas(),
        traffic=traffic,
        symbols=symbols,
        recipes=RECIPE_LIST,
        limitations=notes.LIMITATIONS,
        deviations=notes.DEVIATIONS,
        calibrated=calibrated,
        grouped=grouped_section(site),
        nvfp4=nvfp4_section(site),
    )
