"""The cross-validation tables of the Validation page, from the stored error bands
(:class:`roofline.analysis.error_bands.ErrorBands`) and the calibration file's own-fit
``[gpu.cv]`` records, and the source links they share with the set sections."""

from __future__ import annotations

import math
from collections.abc import Mapping
from urllib.parse import urlsplit

from roofline import units
from roofline.analysis.error_bands import SIZE_BUCKETS, ErrorBands
from roofline.analysis.support import Support
from roofline.calibration.data import CalibrationData
from site_gen.context import Cell, Table, set_links
from site_gen.markup import safe
from site_gen.pages.rows import validation as vr


def source_cell(url: str, short: bool = False) -> Cell:
    """An external link when the URL is http(s) (the lint makes sure), else plain text;
    ``short``: the link reads ``owner/repo PR #N`` or ``owner/repo path @commit``."""
    try:
        return safe.external_link(url, short_source(url) if short else None)
    except safe.UnsafeUrlError:
        return url


#: A GitHub thread's path segment -> how its short name reads.
_THREADS = {"pull": "PR", "issues": "issue"}


def short_source(url: str) -> str:
    """``pytorch/ao PR #3306``, ``NVIDIA/cutlass issue #2923``, ``pytorch/ao @46e106b8``,
    ``pytorch/ao docs/.../inference.md @36027d82`` for GitHub URLs; any other URL as it is."""
    parts = urlsplit(url).path.strip("/").split("/")
    if "github.com" not in urlsplit(url).netloc or len(parts) < 4:
        return url
    repo = "/".join(parts[:2])
    if parts[2] in _THREADS:
        return f"{repo} {_THREADS[parts[2]]} #{parts[3]}"
    if parts[2] == "commit":
        return f"{repo} @{parts[3][:8]}"
    if parts[2] == "blob" and len(parts) > 4:
        return f"{repo} {'/'.join(parts[4:])} @{parts[3][:8]}"
    return url


def weak_table(supports: tuple[Support, ...]) -> Table:
    """The stored parameters too few points or shapes pin
    (:func:`roofline.analysis.support.support`)."""
    header = ("GPU", "parameter", "points", "distinct shapes")
    rows = [
        (s.gpu or "all GPUs", safe.code(s.key), str(s.points), str(s.shapes))
        for s in supports
        if s.weak
    ]
    return Table(header, rows, ("---", "---", "--:", "--:"), name="weakly-determined")


def cv_tables(bands: ErrorBands) -> dict[str, Table]:
    """Cross-validation by source, from the stored error bands: per source (beside
    torchao's error), per GPU, per GPU family, per recipe family and per shape size."""

    def grouped(name: str, header: str, values: dict[str, float]) -> Table:
        rows = [(key, vr.percent(value)) for key, value in values.items()]
        return Table((header, "CV mean error"), rows, ("---", "--:"), name=name)

    sources = sorted(bands.sources.items(), key=lambda kv: -kv[1])
    source_rows = [
        (
            source_cell(url, short=True),
            vr.percent(cv),
            vr.percent(bands.sources_torchao.get(url, math.nan)),
        )
        for url, cv in sources
    ]
    return {
        "sources": Table(
            ("source (left out)", "calibrated, CV", "torchao"),
            source_rows,
            ("---", "--:", "--:"),
            name="cv-by-source",
        ),
        "gpus": grouped("cv-by-gpu", "GPU", dict(bands.gpus)),
        "families": grouped("cv-by-gpu-family", "GPU family", dict(bands.families)),
        "recipes": grouped("cv-by-recipe-family", "recipe family", dict(bands.recipe_families)),
        "sizes": Table(
            ("largest GEMM of the point", "points", "calibrated, CV", "torchao"),
            [
                (
                    size,
                    str(bands.size_points.get(size, 0)),
                    vr.percent(cv),
                    vr.percent(bands.sizes_torchao.get(size, math.nan)),
                )
                for size, cv in by_size(bands.sizes).items()
            ],
            ("---", "--:", "--:", "--:"),
            name="cv-by-size",
        ),
        "gpu_sizes": sized_table(bands),
        "libraries": library_table(bands),
    }


def library_table(bands: ErrorBands) -> Table:
    """Both models' CV errors per kernel library, most points first: which library's
    kernels the calibrated numbers were checked on, and how far the others fall."""
    order = sorted(bands.libraries, key=lambda name: (-bands.library_points.get(name, 0), name))
    rows = [
        (
            safe.code(name),
            str(bands.library_points.get(name, 0)),
            vr.percent(bands.libraries[name]),
            vr.percent(bands.libraries_torchao.get(name, math.nan)),
        )
        for name in order
    ]
    header = ("kernel library", "points", "calibrated, CV", "torchao")
    return Table(header, rows, ("---", "--:", "--:", "--:"), name="cv-by-library")


def sized_table(bands: ErrorBands) -> Table:
    """The bands of one size per GPU and per family (where enough points were scored):
    what a number at a known shape is quoted with."""
    buckets = [name for name, _ in SIZE_BUCKETS]

    def cells(sizes: Mapping[str, float]) -> tuple[str, ...]:
        return tuple(vr.percent(sizes[b]) if b in sizes else units.MISSING for b in buckets)

    rows = [(gpu, *cells(sizes)) for gpu, sizes in sorted(bands.gpu_sizes.items())]
    rows += [(f"{f} family", *cells(s)) for f, s in sorted(bands.family_sizes.items())]
    align = ("---", *("--:" for _ in buckets))
    return Table(("GPU or family", *buckets), rows, align, name="cv-by-gpu-and-size")


def own_cv_table(calibration: CalibrationData) -> Table:
    """The cross-validated error of each GPU its owner measured and refit, as the
    calibration file records it (``[gpu.cv]``): the band that GPU's pages show."""
    rows = [
        (
            gpu,
            vr.percent(cv.mean_error),
            str(cv.points),
            str(cv.shapes),
            cv.method,
            set_links(cv.sets, ""),
        )
        for gpu, cv in calibration.cv.items()
    ]
    header = ("GPU", "CV mean error", "points", "distinct shapes", "folds", "sets")
    return Table(header, rows, ("---", "--:", "--:", "--:", "---", "---"), name="cv-own-fit")


def by_size(values: Mapping[str, float]) -> dict[str, float]:
    """A per-size-bucket table in bucket order, smallest first (the file sorts by name)."""
    return {name: values[name] for name, _ in SIZE_BUCKETS if name in values}
