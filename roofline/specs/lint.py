"""Loading a spec file: every problem of a file collected, then the GPUs built.

Each key's own rules are its descriptor's (:mod:`roofline.specs.keys`); this module adds
what spans keys (keys another key requires, the fp8/bf16 and block-scaled/fp8 ratios, fp4
below fp8, a basis that contradicts a defaulted fraction) and entries (duplicate names,
colliding slugs and prefixes), and builds :class:`GpuSpec` values.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from roofline.datafiles.core import MAX_GPUS, all_finite, bundled_text
from roofline.datafiles.problems import Collector
from roofline.datafiles.text import unknown_key
from roofline.errors import SpecError, SpecProblem
from roofline.publish.slugs import MAX_NAME_LENGTH, slug
from roofline.recipes import NativeFormat
from roofline.specs.keys import EFFICIENCY_BASIS_KEYS, GPU_KEYS, PEAK_KEYS, TOP_SPECS
from roofline.specs.model import KEY_FIELDS, GpuSpec, Source, SpecDatabase
from roofline.specs.ranges import (
    DEFAULT_GEMM_EFFICIENCY,
    DEFAULT_LAUNCH_OVERHEAD_S,
    DEFAULT_MEM_EFFICIENCY,
    FP8_BLOCK_TO_FP8_RATIO_RANGE,
    FP8_TO_BF16_RATIO_RANGE,
    PEAK_RANGE_FLOP_PER_S,
)
from roofline.specs.text import KeyProblem, describe

#: measured_matmul_tflops dtype -> the peak it is a fraction of.
MAMF_PEAKS = {"bf16": "bf16_peak_tops", "fp8": "fp8_peak_tops"}

#: The least effective rate (figure x efficiency, per second) a GPU may have: with it the
#: largest GEMM (M = K = N = 2**31 - 1) takes about 2e28 s, so every time and sum of
#: times stays finite; a 1e-300 efficiency would overflow them to inf.
MIN_EFFECTIVE_RATE = 1.0
ASSUMED_BASIS = "assumed: copied from NVIDIA H100 (torchao measurement: 0.78 GEMM, 0.92 memory)"
_DEFAULT_EFFICIENCY = {
    "pct_achievable_gemm_tops": DEFAULT_GEMM_EFFICIENCY,
    "pct_achievable_mem_bw": DEFAULT_MEM_EFFICIENCY,
}
BUNDLED_NAME = "bundled database (roofline/data/gpus.toml)"


class _Linter(Collector):
    """Collects every problem of one file; builds specs for the entries it can."""

    def __init__(self, file: str, max_gpus: int = MAX_GPUS) -> None:
        super().__init__(file)
        self.max_gpus = max_gpus

    def make(
        self,
        entry: str | None,
        key: str | None,
        expected: str,
        received: str,
        severity: str = "error",
        hint: str = "",
    ) -> SpecProblem:
        """A spec problem names its entry by the GPU (``gpu 'H100'``)."""
        return SpecProblem(self.file, entry, key, expected, received, severity, hint)

    def exception(self) -> SpecError:
        return SpecError(self.problems, self.unlisted)

    def errors(self, gpu: str | None, problems: list[KeyProblem]) -> None:
        self.key_problems(gpu, problems)

    def lint_document(self, doc: dict[str, Any]) -> tuple[float, list[dict[str, Any]]]:
        """The launch floor and the GPU entries of a parsed file, top-level keys linted."""
        self.errors(None, [unknown_key(k, TOP_SPECS) for k in doc if k not in TOP_SPECS])
        launch_s = doc.get("kernel_launch_overhead_s", DEFAULT_LAUNCH_OVERHEAD_S)
        launch_problems = TOP_SPECS["kernel_launch_overhead_s"].validate(launch_s)
        self.errors(None, launch_problems)
        if launch_problems:
            launch_s = DEFAULT_LAUNCH_OVERHEAD_S
        self.errors(None, TOP_SPECS["schema_version"].validate(doc.get("schema_version", 1)))
        gpus = doc.get("gpu")
        gpu_problems = TOP_SPECS["gpu"].validate(gpus)
        self.errors(None, gpu_problems)
        if gpu_problems:
            return launch_s, []
        if len(gpus) > self.max_gpus:  # refused before any entry is linted: seconds, not hours
            expected = (
                f"at most {self.max_gpus} [[gpu]] entries (each adds about 750 site files; "
                "a team that means it raises the limit with --max-gpus N)"
            )
            self.error(None, "gpu", expected, f"{len(gpus)} entries")
            return launch_s, []
        return launch_s, gpus

    def lint_gpu(self, index: int, entry: dict[str, Any], launch_s: float) -> GpuSpec | None:
        """The GpuSpec of one entry, or None when it has errors (all recorded)."""
        label = _label(entry.get("name"), index)
        before = self.error_count()
        self.errors(label, [unknown_key(k, GPU_KEYS) for k in entry if k not in GPU_KEYS])
        for key, spec in GPU_KEYS.items():
            if key in entry:
                self.errors(label, spec.validate(entry[key]))
            elif spec.required:
                self.errors(label, [spec.missing()])
        self._check_requires(label, entry)
        self._check_ratios(label, entry)
        self._check_block_peak(label, entry)
        self._check_bases(label, entry)
        if self.error_count() == before:
            self._check_derived(label, entry)
        if self.error_count() > before:
            return None
        gpu = _build(entry, launch_s)
        self._check_measured_efficiency(label, gpu)
        return None if self.error_count() > before else gpu

    def _check_measured_efficiency(self, label: str, gpu: GpuSpec) -> None:
        """A measured matmul rate above the peak the model uses means an efficiency above
        1: a peak at the wrong clock, a sparse figure, or a wrong measurement."""
        for dtype, peak_key in MAMF_PEAKS.items():
            tflops = gpu.measured_matmul_tflops.get(dtype)
            peak = gpu.value(peak_key)
            if tflops is None or not peak or tflops * 1e12 <= peak:
                continue
            cited = [
                s.url
                for s in gpu.source_records
                if {peak_key, "measured_matmul_tflops"} & set(s.figures)
            ]
            clock = " at sustained_clock_mhz" if gpu.clock_scale != 1 else ""
            expected = (
                f"at most the {dtype} peak the model uses, {peak_key}{clock} = "
                f"{peak / 1e12:g} TFLOP/s (an efficiency above 1 is impossible)"
            )
            received = f"{tflops:g} TFLOP/s, an efficiency of {tflops * 1e12 / peak:.3f}"
            hint = (
                "if the card holds a higher clock than its peaks assume, give "
                "peak_clock_mhz and sustained_clock_mhz; sources: " + (", ".join(cited) or "none")
            )
            self.error(label, f"measured_matmul_tflops.{dtype}", expected, received, hint)

    def _check_derived(self, gpu: str, entry: dict[str, Any]) -> None:
        """Effective rates (figure x efficiency) of at least MIN_EFFECTIVE_RATE: each
        figure in range can still multiply to nearly 0 and divide to infinity (a 1e-300
        efficiency), which would print inf and fail a build late, naming no key."""
        pairs = [
            (key, "pct_achievable_gemm_tops", "FLOP/s")
            for key in (*PEAK_KEYS, "fp8_block_scaled_peak_tops")
        ]
        pairs.append(("peak_mem_bw_bytes_sec", "pct_achievable_mem_bw", "B/s"))
        for figure_key, eta_key, unit in pairs:
            if figure_key not in entry:
                continue
            eta = entry.get(eta_key, _DEFAULT_EFFICIENCY[eta_key])
            rate = float(entry[figure_key]) * float(eta)
            if all_finite(rate) and rate >= MIN_EFFECTIVE_RATE:
                continue
            expected = (
                f"an efficiency whose effective rate ({figure_key} x {eta_key}) is at least "
                f"{MIN_EFFECTIVE_RATE:g} {unit}, so every time computed from it is finite"
            )
            received = f"{describe(eta)}: {figure_key} x {eta_key} = {rate:.3g} {unit}"
            self.error(gpu, eta_key, expected, received)
            return

    def _check_requires(self, gpu: str, entry: dict[str, Any]) -> None:
        for key, spec in GPU_KEYS.items():
            for needed in spec.requires if key in entry else ():
                if needed not in entry:
                    expected = f"{needed} as well (it qualifies that figure)"
                    self.error(gpu, key, expected, f"no {needed} in the entry")

    def _check_block_peak(self, gpu: str, entry: dict[str, Any]) -> None:
        """The block-scaled fp8 peak: 1-4x the fp8 peak, on a GPU with MX hardware."""
        block, fp8 = (
            entry.get(k) if PEAK_RANGE_FLOP_PER_S.contains(entry.get(k)) else None
            for k in ("fp8_block_scaled_peak_tops", "fp8_peak_tops")
        )
        if block is None or fp8 is None:
            return
        low, high = FP8_BLOCK_TO_FP8_RATIO_RANGE
        if not low <= block / fp8 <= high:
            hint = "likely a sparse figure, a unit slip, or the plain fp8 and block peaks swapped"
            expected = f"{low:g}-{high:g}x fp8_peak_tops"
            received = f"{block / fp8:.2f}x"
            self.warn(gpu, "fp8_block_scaled_peak_tops", expected, received, hint)
        formats = entry.get("native_formats")
        if isinstance(formats, list) and NativeFormat.MXFP8 not in formats:
            expected = "an entry whose native_formats include mxfp8 (the block-scaled path)"
            self.warn(gpu, "fp8_block_scaled_peak_tops", expected, f"native_formats {formats}")

    def _check_bases(self, gpu: str, entry: dict[str, Any]) -> None:
        """A per-fraction basis that says measured for a fraction the entry leaves out (the
        H100 default stands in, so it is assumed)."""
        for key, basis_key in EFFICIENCY_BASIS_KEYS.items():
            basis = entry.get(basis_key)
            if key in entry or not isinstance(basis, str) or basis.startswith("assumed"):
                continue
            expected = f"'assumed: ...' ({key} is absent: the default {_DEFAULT_EFFICIENCY[key]}"
            self.warn(gpu, basis_key, expected + " is assumed)", describe(basis))

    def _check_ratios(self, gpu: str, entry: dict[str, Any]) -> None:
        # Only peaks within range: their errors are reported already, and inf / inf is nan.
        bf16, fp8, fp4 = (
            entry.get(k) if PEAK_RANGE_FLOP_PER_S.contains(entry.get(k)) else None
            for k in PEAK_KEYS
        )
        low, high = FP8_TO_BF16_RATIO_RANGE
        if bf16 is not None and fp8 is not None:
            ratio = fp8 / bf16
            if not low <= ratio <= high:
                cause = (
                    "fp8 given as a sparse figure, or bf16 with fp32 but fp8 with fp16 accumulate"
                    if ratio > high
                    else "bf16 given as a sparse figure or with fp16 accumulate"
                )
                expected = f"about 2x bf16_peak_tops ({low}-{high}x)"
                self.warn(gpu, "fp8_peak_tops", expected, f"{ratio:.2f}x", f"likely {cause}")
        if fp8 is not None and fp4 is not None and fp4 < fp8:
            hint = "likely a dense/sparse mix-up"
            self.warn(gpu, "fp4_peak_tops", "at least fp8_peak_tops", f"{fp4 / fp8:.2f}x fp8", hint)

    def lint_collisions(self, gpus: list[GpuSpec]) -> None:
        """Duplicate names, colliding page slugs and shared device prefixes."""
        seen_names = self._lint_names(gpus)
        owners: dict[str, str] = {}
        for gpu in gpus:
            for prefix in gpu.device_prefixes:
                key = prefix.lower()
                other = owners.get(key) or (
                    seen_names.get(key) if seen_names.get(key) != gpu.name else None
                )
                if other and other != gpu.name:
                    self.error(
                        gpu.name,
                        "device_prefixes",
                        "prefixes no other entry uses as a name or prefix",
                        f"{prefix!r}, also used by {other!r}",
                    )
                owners[key] = gpu.name

    def _lint_names(self, gpus: list[GpuSpec]) -> dict[str, str]:
        """Duplicate names and page slugs; returns lower-case name -> name."""
        seen_names: dict[str, str] = {}
        slug_owners: dict[str, str] = {}
        for gpu in gpus:
            key = gpu.name.lower()
            page = slug(gpu.name)
            if key in seen_names:
                duplicate = f"duplicate of {seen_names[key]!r}"
                self.error(gpu.name, "name", "a name no other entry uses", duplicate)
            elif page in slug_owners:
                # Pages and data files are named by slug: one GPU would overwrite the other's.
                self.error(
                    gpu.name,
                    "name",
                    "a name whose page slug differs from every other entry's",
                    f"slug {page!r}, also the slug of {slug_owners[page]!r}",
                )
            seen_names[key] = gpu.name
            slug_owners.setdefault(page, gpu.name)
        return seen_names


def _efficiencies(values: dict[str, Any]) -> str | None:
    """Fill in defaulted efficiency fractions and each fraction's basis; returns the
    entry's ``efficiency_basis`` (assumed when any fraction is defaulted, as before the
    per-fraction keys existed)."""
    given = values.pop("efficiency_basis", None)
    assumed_given = given if given and given.startswith("assumed") else None
    basis = given
    for key, basis_key in EFFICIENCY_BASIS_KEYS.items():
        own = values.get(basis_key)
        if key in values:
            values[basis_key] = own or given or ""
            continue
        values[key] = _DEFAULT_EFFICIENCY[key]
        values[basis_key] = own if own and own.startswith("assumed") else assumed_given
        values[basis_key] = values[basis_key] or ASSUMED_BASIS
        basis = assumed_given or ASSUMED_BASIS
    return basis


def _build(entry: dict[str, Any], launch_s: float) -> GpuSpec:
    """The GpuSpec of a linted entry, defaults and derived fields filled in."""
    values = {KEY_FIELDS.get(k, k): v for k, v in entry.items() if k != "sources"}
    basis = _efficiencies(values)
    sources = tuple(
        Source(s["url"], s.get("read_on"), tuple(s.get("figures", ())), s.get("note", ""))
        for s in entry.get("sources", [])
    )
    given_formats = values.pop("native_formats", None)
    formats = (
        tuple(NativeFormat(f) for f in given_formats)
        if given_formats is not None
        else _default_formats(values)
    )
    return GpuSpec(
        **{k: v for k, v in values.items() if k != "device_prefixes"},
        kernel_launch_overhead_s=launch_s,
        efficiency_basis=basis or "given",
        native_formats=formats,
        native_formats_given=given_formats is not None,
        device_prefixes=tuple(values.get("device_prefixes", ())),
        source_records=sources,
    )


def _label(name: Any, index: int) -> str:
    """How messages name entry ``index``: its name (cut short), else ``#<n>``."""
    if not isinstance(name, str) or not name.strip():
        return f"#{index + 1}"
    return name if len(name) <= MAX_NAME_LENGTH else name[:MAX_NAME_LENGTH] + "..."


def _default_formats(values: Mapping[str, Any]) -> tuple[NativeFormat, ...]:
    """Native formats of an entry that names none: fp8 with an fp8 peak, MX/NV with fp4."""
    formats = []
    if "fp8_peak_tops" in values:
        formats.append(NativeFormat.FP8)
    if "fp4_peak_tops" in values:
        formats += [NativeFormat.MXFP8, NativeFormat.MXFP4, NativeFormat.NVFP4]
    return tuple(formats)


def parse_specs(text: str, origin: str, max_gpus: int = MAX_GPUS) -> SpecDatabase:
    """Lint and load spec-file ``text``; ``origin`` names it in messages; at most
    ``max_gpus`` entries (:data:`roofline.datafiles.core.MAX_GPUS` unless raised).

    Raises :class:`SpecError` listing every error (and warning) when any error is found.
    """
    linter = _Linter(origin, max_gpus)
    doc = linter.parse(text)
    launch_s, entries = linter.lint_document(doc)
    built = [linter.lint_gpu(i, entry, launch_s) for i, entry in enumerate(entries)]
    gpus = [g for g in built if g is not None]
    linter.lint_collisions(gpus)
    linter.strings(doc)
    linter.raise_if_any()
    warnings = tuple(p for p in linter.problems if p.severity == "warning")
    return SpecDatabase({g.name: g for g in gpus}, origin, warnings)


def load_specs(path: str | Path | None = None, max_gpus: int = MAX_GPUS) -> SpecDatabase:
    """Load and lint a spec file, or the bundled database when ``path`` is None.

    The file is read by :func:`roofline.datafiles.core.read_text`: a device, FIFO, folder, a
    file over the size limit, text that is not UTF-8 or starts with a byte-order mark is
    one problem naming the file, never a hang or a traceback.
    """
    if path is None:
        text = bundled_text("gpus.toml")
        return parse_specs(text, BUNDLED_NAME, max_gpus)
    file = str(Path(path))
    text = _Linter(file, max_gpus).read(path, "spec file")
    return parse_specs(text, file, max_gpus)
