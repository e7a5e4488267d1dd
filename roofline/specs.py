"""GPU spec files: loading, linting and name matching.

A spec file is TOML whose GPU keys are torchao's (``bf16_peak_tops``,
``peak_mem_bw_bytes_sec`` ...) so an entry of torchao's ``gpu_name_to_specs`` pastes
straight in, plus optional provenance keys. Every load is linted: all problems of a
file are collected and reported together, each naming the file, GPU, key, what was
expected and what was received. The format is documented in ``docs/specs-format.md``
and published as a JSON Schema (:func:`json_schema`).
"""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from roofline.errors import RooflineError, SpecError, SpecProblem, UnknownNameError, nearest
from roofline.recipes import NATIVE_FORMATS
from roofline.symbols import HARDWARE_SYMBOLS

DEFAULT_LAUNCH_OVERHEAD_S = 2e-6
# torchao's measured H100 efficiencies, the default for entries that give none.
DEFAULT_GEMM_EFFICIENCY = 0.78
DEFAULT_MEM_EFFICIENCY = 0.92
ASSUMED_BASIS = "assumed: copied from NVIDIA H100 (torchao measurement: 0.78 GEMM, 0.92 memory)"
BUNDLED_NAME = "bundled database (roofline/data/gpus.toml)"

MIN_BANDWIDTH_BYTES_PER_S = 0.1e12
MAX_BANDWIDTH_BYTES_PER_S = 50e12
FP8_TO_BF16_RATIO_RANGE = (1.6, 2.4)


@dataclass(frozen=True)
class Source:
    """Where figures came from: a URL, when it was read and which keys it supports."""

    url: str
    read_on: dt.date | None = None
    figures: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class GpuSpec:
    """One GPU's figures (torchao's key names) and their provenance."""

    name: str
    bf16_peak_tops: float
    peak_mem_bw_bytes_sec: float
    pct_achievable_gemm_tops: float
    pct_achievable_mem_bw: float
    kernel_launch_overhead_s: float = DEFAULT_LAUNCH_OVERHEAD_S
    fp8_peak_tops: float | None = None
    fp4_peak_tops: float | None = None
    efficiency_basis: str = "given"
    efficiency_reference: str = ""
    vendor: str = ""
    architecture: str = ""
    sku: str = ""
    peak_basis: str = "dense"
    accumulate_dtype: str = "fp32"
    native_formats: tuple[str, ...] = ()
    native_formats_given: bool = True
    device_prefixes: tuple[str, ...] = ()
    derivation: str = ""
    notes: str = ""
    measured_matmul_tflops: Mapping[str, float] = field(default_factory=dict)
    source_records: tuple[Source, ...] = ()

    @property
    def sources(self) -> list[str]:
        """The source URLs, in file order."""
        return [s.url for s in self.source_records]

    @property
    def efficiency_assumed(self) -> bool:
        """True when the efficiency fractions were not measured on this GPU."""
        return self.efficiency_basis.startswith("assumed")

    def value(self, key: str) -> float | None:
        """The number stored under a spec key (None when the GPU lacks it)."""
        return getattr(self, key)

    def hardware_values(self) -> dict[str, float]:
        """Spec key -> number for every hardware symbol this GPU defines."""
        values = {hw.spec_key: self.value(hw.spec_key) for hw in HARDWARE_SYMBOLS}
        return {k: v for k, v in values.items() if v is not None}

    def as_torchao_dict(self) -> dict[str, float]:
        """The entry as torchao's ``gpu_name_to_specs`` holds it."""
        values = self.hardware_values()
        values.pop("kernel_launch_overhead_s")
        return values

    def ridge_point_flop_per_byte(self, peak_key: str) -> float | None:
        """Arithmetic intensity where compute and memory time meet, at peak figures."""
        peak = self.value(peak_key)
        return None if peak is None else peak / self.peak_mem_bw_bytes_sec


class SpecDatabase(Mapping[str, GpuSpec]):
    """The GPUs of one spec file, by name, with the warnings its lint raised."""

    def __init__(
        self, gpus: Mapping[str, GpuSpec], origin: str, warnings: tuple[SpecProblem, ...] = ()
    ) -> None:
        self._gpus = dict(gpus)
        self.origin = origin
        self.warnings = warnings

    def __getitem__(self, name: str) -> GpuSpec:
        return self._gpus[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._gpus)

    def __len__(self) -> int:
        return len(self._gpus)

    def find(self, name: str) -> GpuSpec:
        """The GPU called ``name``: the exact name (any case), or a device-name prefix match.

        ``torch.cuda.get_device_name()`` strings such as "NVIDIA H100 80GB HBM3" match the
        entry with the longest name or device prefix they start with.
        """
        query = name.strip().lower()
        for gpu in self._gpus.values():
            if gpu.name.lower() == query:
                return gpu
        matches: dict[str, int] = {}
        for gpu in self._gpus.values():
            for prefix in (gpu.name, *gpu.device_prefixes):
                if query.startswith(prefix.lower()):
                    matches[gpu.name] = max(matches.get(gpu.name, 0), len(prefix))
        if matches:
            best = max(matches.values())
            winners = sorted(g for g, n in matches.items() if n == best)
            if len(winners) == 1:
                return self._gpus[winners[0]]
            raise UnknownNameError(
                f"GPU name {name!r} is ambiguous: it matches {', '.join(winners)}; "
                "pass one of those names exactly"
            )
        message = f"unknown GPU {name!r} in {self.origin}; known: {', '.join(self._gpus)}"
        guess = nearest(name, self._gpus)
        if guess:
            message += f". Closest match: {guess!r}"
        raise UnknownNameError(message)


# -- schema ------------------------------------------------------------------------


@dataclass(frozen=True)
class KeySpec:
    """One allowed key of a GPU entry: its type, whether required, and a description."""

    kind: str  # number, string, string_list, table, sources
    description: str
    required: bool = False
    choices: tuple[str, ...] = ()


GPU_KEYS: dict[str, KeySpec] = {
    "name": KeySpec("string", "display name, matched by --gpu (any case)", required=True),
    "bf16_peak_tops": KeySpec("number", "dense bf16 peak, FLOP/s", required=True),
    "peak_mem_bw_bytes_sec": KeySpec("number", "peak memory bandwidth, bytes/s", required=True),
    "fp8_peak_tops": KeySpec("number", "dense fp8 peak, FLOP/s; absent = no fp8"),
    "fp4_peak_tops": KeySpec("number", "dense fp4 peak, FLOP/s; absent = no fp4"),
    "pct_achievable_gemm_tops": KeySpec(
        "number", f"achievable fraction of peak in GEMMs, (0, 1]; default {DEFAULT_GEMM_EFFICIENCY}"
    ),
    "pct_achievable_mem_bw": KeySpec(
        "number", f"achievable fraction of bandwidth, (0, 1]; default {DEFAULT_MEM_EFFICIENCY}"
    ),
    "efficiency_basis": KeySpec(
        "string", "how the efficiencies were obtained", choices=("measured", "assumed")
    ),
    "efficiency_reference": KeySpec("string", "who measured them, or what they were copied from"),
    "vendor": KeySpec("string", "NVIDIA, AMD, ..."),
    "architecture": KeySpec("string", "e.g. Hopper, Blackwell, CDNA3"),
    "sku": KeySpec("string", "the SKU or variant the figures are for"),
    "peak_basis": KeySpec("string", "dense or sparse peak figures", choices=("dense", "sparse")),
    "accumulate_dtype": KeySpec("string", "accumulate dtype the peaks assume, e.g. fp32"),
    "native_formats": KeySpec(
        "string_list", "formats the hardware runs natively", choices=NATIVE_FORMATS
    ),
    "device_prefixes": KeySpec("string_list", "torch.cuda.get_device_name() prefixes"),
    "derivation": KeySpec("string", "how a derived figure was computed"),
    "notes": KeySpec("string", "free text"),
    "measured_matmul_tflops": KeySpec("table", "public measured matmul TFLOP/s by dtype"),
    "sources": KeySpec("sources", "array of {url, read_on, figures, note}"),
}
TOP_KEYS = {
    "schema_version": "format version, 1",
    "kernel_launch_overhead_s": (
        f"launch floor of every kernel, seconds; default {DEFAULT_LAUNCH_OVERHEAD_S}"
    ),
    "gpu": "array of GPU tables",
}
SOURCE_KEYS = ("url", "read_on", "figures", "note")
PEAK_KEYS = ("bf16_peak_tops", "fp8_peak_tops", "fp4_peak_tops")
EFFICIENCY_KEYS = ("pct_achievable_gemm_tops", "pct_achievable_mem_bw")


def _describe(value: Any) -> str:
    kind = "boolean" if isinstance(value, bool) else type(value).__name__
    text = repr(value)
    return f"{kind} {text if len(text) < 60 else text[:57] + '...'}"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class _Linter:
    """Collects every problem of one file; builds specs for the entries it can."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[SpecProblem] = []

    def error(
        self, gpu: str | None, key: str | None, expected: str, received: str, hint: str = ""
    ) -> None:
        self.problems.append(SpecProblem(self.file, gpu, key, expected, received, "error", hint))

    def warn(
        self, gpu: str | None, key: str | None, expected: str, received: str, hint: str = ""
    ) -> None:
        self.problems.append(SpecProblem(self.file, gpu, key, expected, received, "warning", hint))

    # top level ------------------------------------------------------------------

    def lint_document(self, doc: dict[str, Any]) -> tuple[float, list[dict[str, Any]]]:
        for key in doc:
            if key not in TOP_KEYS:
                self._unknown(None, key, TOP_KEYS)
        launch_s = doc.get("kernel_launch_overhead_s", DEFAULT_LAUNCH_OVERHEAD_S)
        if not _is_number(launch_s) or not 0 < launch_s < 1e-3:
            self.error(
                None,
                "kernel_launch_overhead_s",
                "a number of seconds in (0, 1e-3)",
                _describe(launch_s),
            )
            launch_s = DEFAULT_LAUNCH_OVERHEAD_S
        version = doc.get("schema_version", 1)
        if version != 1:
            self.error(None, "schema_version", "1", _describe(version))
        gpus = doc.get("gpu")
        if not isinstance(gpus, list) or not gpus or not all(isinstance(g, dict) for g in gpus):
            self.error(None, "gpu", "at least one [[gpu]] table", _describe(gpus))
            return launch_s, []
        return launch_s, gpus

    def _unknown(
        self, gpu: str | None, key: str, valid: Mapping[str, Any] | tuple[str, ...]
    ) -> None:
        guess = nearest(key, valid)
        hint = f"did you mean {guess!r}?" if guess else f"valid keys: {', '.join(valid)}"
        self.error(gpu, key, "a known key", f"unknown key {key!r}", hint)

    # one GPU ---------------------------------------------------------------------

    def lint_gpu(self, index: int, entry: dict[str, Any], launch_s: float) -> GpuSpec | None:
        raw_name = entry.get("name")
        label = raw_name if isinstance(raw_name, str) and raw_name else f"#{index + 1}"
        before = len([p for p in self.problems if p.severity == "error"])
        for key in entry:
            if key not in GPU_KEYS:
                self._unknown(label, key, GPU_KEYS)
        for key, spec in GPU_KEYS.items():
            if key not in entry:
                if spec.required:
                    self.error(label, key, f"{spec.kind} ({spec.description})", "nothing (missing)")
                continue
            self._check_type(label, key, spec, entry[key])
        self._check_ranges(label, entry)
        after = len([p for p in self.problems if p.severity == "error"])
        if after > before:
            return None
        return self._build(entry, launch_s)

    def _check_type(self, gpu: str, key: str, spec: KeySpec, value: Any) -> None:
        if spec.kind == "number" and not _is_number(value):
            self.error(gpu, key, f"a number ({spec.description})", _describe(value))
        elif spec.kind == "string":
            if not isinstance(value, str):
                self.error(gpu, key, f"a string ({spec.description})", _describe(value))
            elif spec.choices and value.split(":")[0].strip() not in spec.choices:
                self.error(gpu, key, f"one of {', '.join(spec.choices)}", _describe(value))
        elif spec.kind == "string_list":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                self.error(gpu, key, "a list of strings", _describe(value))
            elif spec.choices:
                for item in value:
                    if item not in spec.choices:
                        self.error(
                            gpu, key, f"items from {', '.join(spec.choices)}", _describe(item)
                        )
        elif spec.kind == "table":
            if not isinstance(value, dict) or not all(_is_number(v) for v in value.values()):
                self.error(gpu, key, "a table of numbers, e.g. { bf16 = 794.0 }", _describe(value))
        elif spec.kind == "sources":
            self._check_sources(gpu, value)

    def _check_sources(self, gpu: str, value: Any) -> None:
        if not isinstance(value, list) or not all(isinstance(s, dict) for s in value):
            self.error(gpu, "sources", "an array of [[gpu.sources]] tables", _describe(value))
            return
        for i, source in enumerate(value):
            where = f"sources[{i}]"
            for key in source:
                if key not in SOURCE_KEYS:
                    self._unknown(gpu, f"{where}.{key}", SOURCE_KEYS)
            url = source.get("url")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                self.error(gpu, f"{where}.url", "an http(s) URL", _describe(url))
            read_on = source.get("read_on")
            if read_on is not None and not isinstance(read_on, dt.date):
                self.error(
                    gpu, f"{where}.read_on", "a TOML date, e.g. 2026-11-29", _describe(read_on)
                )
            figures = source.get("figures", [])
            if not isinstance(figures, list) or not all(f in GPU_KEYS for f in figures):
                self.error(gpu, f"{where}.figures", "a list of spec key names", _describe(figures))

    def _check_ranges(self, gpu: str, entry: dict[str, Any]) -> None:
        for key in PEAK_KEYS:
            value = entry.get(key)
            if _is_number(value) and value <= 0:
                self.error(gpu, key, "a positive FLOP/s figure", _describe(value))
        bandwidth = entry.get("peak_mem_bw_bytes_sec")
        if _is_number(bandwidth) and not (
            MIN_BANDWIDTH_BYTES_PER_S <= bandwidth <= MAX_BANDWIDTH_BYTES_PER_S
        ):
            self.error(
                gpu,
                "peak_mem_bw_bytes_sec",
                "bytes/s within 0.1-50 TB/s (1e11-5e13)",
                _describe(bandwidth),
                self._bandwidth_hint(bandwidth),
            )
        for key in EFFICIENCY_KEYS:
            value = entry.get(key)
            if _is_number(value) and not 0 < value <= 1:
                self.error(
                    gpu,
                    key,
                    "a fraction in (0, 1]",
                    _describe(value),
                    f"a percentage? write {value / 100:g} for {value:g}%"
                    if 1 < value <= 100
                    else "",
                )
        self._check_ratios(gpu, entry)

    @staticmethod
    def _bandwidth_hint(bandwidth: float) -> str:
        if bandwidth > MAX_BANDWIDTH_BYTES_PER_S:
            return (
                f"{bandwidth / 1e12:g} TB/s is implausible; 1000x too large? ({bandwidth / 1e3:g})"
            )
        return (
            f"{bandwidth / 1e12:g} TB/s is implausible; given in GB/s or TB/s instead of bytes/s?"
        )

    def _check_ratios(self, gpu: str, entry: dict[str, Any]) -> None:
        bf16, fp8, fp4 = (entry.get(k) for k in PEAK_KEYS)
        low, high = FP8_TO_BF16_RATIO_RANGE
        if _is_number(bf16) and _is_number(fp8) and bf16 > 0:
            ratio = fp8 / bf16
            if not low <= ratio <= high:
                cause = (
                    "fp8 given as a sparse figure, or bf16 with fp32 but fp8 with fp16 accumulate"
                    if ratio > high
                    else "bf16 given as a sparse figure or with fp16 accumulate"
                )
                self.warn(
                    gpu,
                    "fp8_peak_tops",
                    f"about 2x bf16_peak_tops ({low}-{high}x)",
                    f"{ratio:.2f}x",
                    f"likely {cause}",
                )
        if _is_number(fp8) and _is_number(fp4) and fp4 < fp8:
            self.warn(
                gpu,
                "fp4_peak_tops",
                "at least fp8_peak_tops",
                f"{fp4 / fp8:.2f}x fp8",
                "likely a dense/sparse mix-up",
            )

    def _build(self, entry: dict[str, Any], launch_s: float) -> GpuSpec:
        values = dict(entry)
        basis = values.pop("efficiency_basis", None)
        if not all(k in values for k in EFFICIENCY_KEYS):
            values.setdefault("pct_achievable_gemm_tops", DEFAULT_GEMM_EFFICIENCY)
            values.setdefault("pct_achievable_mem_bw", DEFAULT_MEM_EFFICIENCY)
            basis = basis if basis and basis.startswith("assumed") else ASSUMED_BASIS
        sources = tuple(
            Source(s["url"], s.get("read_on"), tuple(s.get("figures", ())), s.get("note", ""))
            for s in values.pop("sources", [])
        )
        given_formats = values.pop("native_formats", None)
        formats = tuple(given_formats) if given_formats is not None else _default_formats(values)
        return GpuSpec(
            **{k: v for k, v in values.items() if k != "device_prefixes"},
            kernel_launch_overhead_s=launch_s,
            efficiency_basis=basis or "given",
            native_formats=formats,
            native_formats_given=given_formats is not None,
            device_prefixes=tuple(values.get("device_prefixes", ())),
            source_records=sources,
        )

    # across GPUs -----------------------------------------------------------------

    def lint_collisions(self, gpus: list[GpuSpec]) -> None:
        seen_names: dict[str, str] = {}
        owners: dict[str, str] = {}
        for gpu in gpus:
            key = gpu.name.lower()
            if key in seen_names:
                self.error(
                    gpu.name,
                    "name",
                    "a name no other entry uses",
                    f"duplicate of {seen_names[key]!r}",
                )
            seen_names[key] = gpu.name
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


def _default_formats(values: Mapping[str, Any]) -> tuple[str, ...]:
    """Native formats of an entry that names none: fp8 with an fp8 peak, MX/NV with fp4."""
    formats = []
    if "fp8_peak_tops" in values:
        formats.append("fp8")
    if "fp4_peak_tops" in values:
        formats += ["mxfp8", "mxfp4", "nvfp4"]
    return tuple(formats)


def parse_specs(text: str, origin: str) -> SpecDatabase:
    """Lint and load spec-file ``text``; ``origin`` names it in messages.

    Raises :class:`SpecError` listing every error (and warning) when any error is found.
    """
    linter = _Linter(origin)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        linter.error(None, None, "valid TOML", f"syntax error: {exc}")
        raise SpecError(linter.problems) from None
    launch_s, entries = linter.lint_document(doc)
    built = [linter.lint_gpu(i, entry, launch_s) for i, entry in enumerate(entries)]
    gpus = [g for g in built if g is not None]
    linter.lint_collisions(gpus)
    if any(p.severity == "error" for p in linter.problems):
        raise SpecError(linter.problems)
    warnings = tuple(p for p in linter.problems if p.severity == "warning")
    return SpecDatabase({g.name: g for g in gpus}, origin, warnings)


def load_specs(path: str | Path | None = None) -> SpecDatabase:
    """Load and lint a spec file, or the bundled database when ``path`` is None."""
    if path is None:
        text = resources.files("roofline").joinpath("data/gpus.toml").read_text("utf-8")
        return parse_specs(text, BUNDLED_NAME)
    file = Path(path)
    try:
        text = file.read_text("utf-8")
    except OSError as exc:
        raise RooflineError(f"cannot read spec file {str(file)!r}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise SpecError([SpecProblem(str(file), None, None, "UTF-8 text", "binary data")]) from None
    return parse_specs(text, str(file))


def json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of the spec file, generated from the key table."""
    kinds: dict[str, dict[str, Any]] = {
        "number": {"type": "number"},
        "string": {"type": "string"},
        "string_list": {"type": "array", "items": {"type": "string"}},
        "table": {"type": "object", "additionalProperties": {"type": "number"}},
        "sources": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["url"],
                "additionalProperties": False,
                "properties": {
                    "url": {"type": "string", "pattern": "^https?://"},
                    "read_on": {"type": "string", "format": "date"},
                    "figures": {"type": "array", "items": {"enum": sorted(GPU_KEYS)}},
                    "note": {"type": "string"},
                },
            },
        },
    }
    properties: dict[str, Any] = {}
    for key, spec in GPU_KEYS.items():
        prop = dict(kinds[spec.kind], description=spec.description)
        if spec.choices and spec.kind == "string_list":
            prop["items"] = {"enum": list(spec.choices)}
        elif spec.choices:
            prop["pattern"] = "^(" + "|".join(spec.choices) + ")"
        properties[key] = prop
    properties["bf16_peak_tops"]["exclusiveMinimum"] = 0
    properties["fp8_peak_tops"]["exclusiveMinimum"] = 0
    properties["fp4_peak_tops"]["exclusiveMinimum"] = 0
    properties["peak_mem_bw_bytes_sec"].update(
        minimum=MIN_BANDWIDTH_BYTES_PER_S, maximum=MAX_BANDWIDTH_BYTES_PER_S
    )
    for key in EFFICIENCY_KEYS:
        properties[key].update(exclusiveMinimum=0, maximum=1)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://roofline-atlas.invalid/spec-file.schema.json",
        "title": "Roofline Atlas GPU spec file",
        "type": "object",
        "additionalProperties": False,
        "required": ["gpu"],
        "properties": {
            "schema_version": {"const": 1, "description": TOP_KEYS["schema_version"]},
            "kernel_launch_overhead_s": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": TOP_KEYS["kernel_launch_overhead_s"],
            },
            "gpu": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": [k for k, s in GPU_KEYS.items() if s.required],
                    "properties": properties,
                },
            },
        },
    }
