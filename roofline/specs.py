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
import math
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from roofline.errors import RooflineError, SpecError, SpecProblem, UnknownNameError, nearest
from roofline.recipes import NATIVE_FORMATS
from roofline.slugs import MAX_NAME_LENGTH, slug
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
MAX_URL_LENGTH = 2000


@dataclass(frozen=True)
class NumberRange:
    """The values a number key accepts: an interval, each end open or closed.

    One source for the lint, the JSON Schema (:func:`json_schema`) and the site's
    calculator, which range-checks its overrides with the same bounds.
    """

    low: float
    high: float
    low_inclusive: bool
    high_inclusive: bool

    def contains(self, x: object) -> bool:
        """True when ``x`` is a finite number (not a bool) within the interval."""
        if not isinstance(x, int | float) or isinstance(x, bool):
            return False
        try:
            if not math.isfinite(x):
                return False
        except OverflowError:  # an int beyond float range: finite, but far out of any range
            return False
        above_low = x >= self.low if self.low_inclusive else x > self.low
        below_high = x <= self.high if self.high_inclusive else x < self.high
        return above_low and below_high

    def text(self) -> str:
        """Interval notation: ``(0, 1]``, ``[1e+11, 5e+13]``."""
        left = "[" if self.low_inclusive else "("
        right = "]" if self.high_inclusive else ")"
        return f"{left}{self.low:g}, {self.high:g}{right}"

    def schema(self) -> dict[str, float]:
        """The JSON Schema bounds: ``minimum``/``exclusiveMinimum`` and the maximum."""
        low = "minimum" if self.low_inclusive else "exclusiveMinimum"
        high = "maximum" if self.high_inclusive else "exclusiveMaximum"
        return {low: self.low, high: self.high}


# 1 EFLOP/s: about 60x the largest dense peak of any GPU today (fp4 on B300, ~15e15),
# small enough that a figure typed in the wrong unit or with a stray exponent is caught.
PEAK_RANGE_FLOP_PER_S = NumberRange(0, 1e18, low_inclusive=False, high_inclusive=True)
BANDWIDTH_RANGE_BYTES_PER_S = NumberRange(
    MIN_BANDWIDTH_BYTES_PER_S, MAX_BANDWIDTH_BYTES_PER_S, low_inclusive=True, high_inclusive=True
)
EFFICIENCY_RANGE = NumberRange(0, 1, low_inclusive=False, high_inclusive=True)
#: The file-level ``kernel_launch_overhead_s``: positive, below a millisecond.
LAUNCH_OVERHEAD_RANGE = NumberRange(0, 1e-3, low_inclusive=False, high_inclusive=False)
#: Values of ``measured_matmul_tflops`` (TFLOP/s, not FLOP/s): 1e6 TFLOP/s = 1 EFLOP/s.
MEASURED_MATMUL_TFLOPS_RANGE = NumberRange(0, 1e6, low_inclusive=False, high_inclusive=True)


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
            if gpu.name.strip() and gpu.name.lower() == query:
                return gpu
        matches: dict[str, int] = {}
        for gpu in self._gpus.values():
            for prefix in (gpu.name, *gpu.device_prefixes):
                # An empty prefix would match every query, typos included; the lint refuses
                # them, and this guards databases built without it.
                if prefix.strip() and query.startswith(prefix.lower()):
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
    """One allowed key of a GPU entry: its type, whether required, and a description.

    ``range`` bounds every number key (for the ``table`` key, each of its values);
    ``plain`` marks text fields that refuse the markup characters ``<``, ``>`` and
    backtick (names and labels never need them). No string field accepts control
    characters.
    """

    kind: str  # number, string, string_list, table, sources
    description: str
    required: bool = False
    choices: tuple[str, ...] = ()
    range: NumberRange | None = None
    plain: bool = False


_PLAIN = "; no < > or `"
_PEAKS = PEAK_RANGE_FLOP_PER_S.text()
GPU_KEYS: dict[str, KeySpec] = {
    "name": KeySpec(
        "string",
        "display name, matched by --gpu (any case); at most "
        f"{MAX_NAME_LENGTH} characters, at least one letter or digit a-z 0-9, no leading or "
        "trailing spaces, page slug unique" + _PLAIN,
        required=True,
        plain=True,
    ),
    "bf16_peak_tops": KeySpec(
        "number",
        f"dense bf16 peak, FLOP/s in {_PEAKS}",
        required=True,
        range=PEAK_RANGE_FLOP_PER_S,
    ),
    "peak_mem_bw_bytes_sec": KeySpec(
        "number",
        f"peak memory bandwidth, bytes/s in {BANDWIDTH_RANGE_BYTES_PER_S.text()} (0.1-50 TB/s)",
        required=True,
        range=BANDWIDTH_RANGE_BYTES_PER_S,
    ),
    "fp8_peak_tops": KeySpec(
        "number",
        f"dense fp8 peak, FLOP/s in {_PEAKS}; absent = no fp8",
        range=PEAK_RANGE_FLOP_PER_S,
    ),
    "fp4_peak_tops": KeySpec(
        "number",
        f"dense fp4 peak, FLOP/s in {_PEAKS}; absent = no fp4",
        range=PEAK_RANGE_FLOP_PER_S,
    ),
    "pct_achievable_gemm_tops": KeySpec(
        "number",
        f"achievable fraction of peak in GEMMs, {EFFICIENCY_RANGE.text()}; "
        f"default {DEFAULT_GEMM_EFFICIENCY}",
        range=EFFICIENCY_RANGE,
    ),
    "pct_achievable_mem_bw": KeySpec(
        "number",
        f"achievable fraction of bandwidth, {EFFICIENCY_RANGE.text()}; "
        f"default {DEFAULT_MEM_EFFICIENCY}",
        range=EFFICIENCY_RANGE,
    ),
    "efficiency_basis": KeySpec(
        "string", "how the efficiencies were obtained", choices=("measured", "assumed")
    ),
    "efficiency_reference": KeySpec("string", "who measured them, or what they were copied from"),
    "vendor": KeySpec("string", "NVIDIA, AMD, ..." + _PLAIN, plain=True),
    "architecture": KeySpec("string", "e.g. Hopper, Blackwell, CDNA3" + _PLAIN, plain=True),
    "sku": KeySpec("string", "the SKU or variant the figures are for" + _PLAIN, plain=True),
    "peak_basis": KeySpec("string", "dense or sparse peak figures", choices=("dense", "sparse")),
    "accumulate_dtype": KeySpec(
        "string", "accumulate dtype the peaks assume, e.g. fp32" + _PLAIN, plain=True
    ),
    "native_formats": KeySpec(
        "string_list", "formats the hardware runs natively", choices=NATIVE_FORMATS
    ),
    "device_prefixes": KeySpec(
        "string_list",
        "torch.cuda.get_device_name() prefixes; non-empty, no leading spaces" + _PLAIN,
        plain=True,
    ),
    "derivation": KeySpec("string", "how a derived figure was computed"),
    "notes": KeySpec("string", "free text"),
    "measured_matmul_tflops": KeySpec(
        "table",
        "public measured matmul TFLOP/s by dtype, values in "
        f"{MEASURED_MATMUL_TFLOPS_RANGE.text()}; dtype names: no < > or `",
        range=MEASURED_MATMUL_TFLOPS_RANGE,
    ),
    "sources": KeySpec("sources", "array of {url, read_on, figures, note}"),
}
TOP_KEYS = {
    "schema_version": "format version, 1",
    "kernel_launch_overhead_s": (
        f"launch floor of every kernel, seconds in {LAUNCH_OVERHEAD_RANGE.text()}; "
        f"default {DEFAULT_LAUNCH_OVERHEAD_S}"
    ),
    "gpu": "array of GPU tables",
}
SOURCE_KEYS = ("url", "read_on", "figures", "note")
PEAK_KEYS = ("bf16_peak_tops", "fp8_peak_tops", "fp4_peak_tops")
EFFICIENCY_KEYS = ("pct_achievable_gemm_tops", "pct_achievable_mem_bw")


# Names of the ranges in lint messages: "expected a finite <noun> in <range>".
_RANGE_NOUNS = {
    **dict.fromkeys(PEAK_KEYS, "number of FLOP/s"),
    "peak_mem_bw_bytes_sec": "number of bytes/s",
    **dict.fromkeys(EFFICIENCY_KEYS, "fraction"),
}
NON_FINITE_HINT = (
    "nan, inf and numbers beyond the float range (about 1.8e308; TOML reads 1e400 as inf) "
    "are not figures"
)
# C0 controls (tab and newline included: no field needs them), DEL and C1 controls: they
# would move the cursor or recolour a terminal that prints the field.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Markup characters, refused in fields that are names or labels (KeySpec.plain).
_MARKUP = re.compile(r"[<>`]")
_MARKUP_OR_CONTROL = re.compile(r"[<>`\x00-\x1f\x7f-\x9f]")
# Characters refused in source URLs: whitespace, controls, those that end an HTML
# attribute, a Markdown autolink or a code span, and the backslash (browsers read it as "/").
_URL_REFUSED = re.compile(r'[\s<>"\\`\x00-\x1f\x7f-\x9f]')
URL_EXPECTED = (
    f"an http:// or https:// URL with a host, at most {MAX_URL_LENGTH} characters, "
    'without whitespace, control characters or any of < > " \\ `'
)


def _describe(value: Any) -> str:
    """Kind and repr of a received value, cut to 60 characters (repr escapes controls)."""
    kind = "boolean" if isinstance(value, bool) else type(value).__name__
    text = repr(value)
    return f"{kind} {text if len(text) < 60 else text[:57] + '...'}"


def _found(value: str, match: re.Match[str]) -> str:
    """A received string and the refused character in it, both escaped."""
    return f"{_describe(value)}, with {match.group()!r} at index {match.start()}"


def _escape_controls(text: str) -> str:
    """``text`` with every control character written as its escape (``\\x1b``)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_finite(value: Any) -> bool:
    """True for a number that fits a float and is neither nan nor infinite."""
    try:
        return _is_number(value) and math.isfinite(value)
    except OverflowError:  # an int beyond the float range
        return False


def _range_hint(key: str, value: float) -> str:
    """The likely mistake behind an out-of-range number, or ""."""
    if not _is_finite(value):
        return NON_FINITE_HINT
    if key == "peak_mem_bw_bytes_sec":
        return _bandwidth_hint(value)
    if key in EFFICIENCY_KEYS and 1 < value <= 100:
        return f"a percentage? write {value / 100:g} for {value:g}%"
    return ""


def _bandwidth_hint(bandwidth: float) -> str:
    if bandwidth > MAX_BANDWIDTH_BYTES_PER_S:
        return f"{bandwidth / 1e12:g} TB/s is implausible; 1000x too large? ({bandwidth / 1e3:g})"
    return f"{bandwidth / 1e12:g} TB/s is implausible; given in GB/s or TB/s instead of bytes/s?"


def _name_problem(name: str) -> tuple[str, str] | None:
    """(expected, received) when ``name`` cannot name a GPU and its pages, else None."""
    received = _describe(name)
    if not name.strip():
        return "a non-empty name", received
    if name != name.strip():
        return "a name without leading or trailing whitespace", received
    if len(name) > MAX_NAME_LENGTH:
        expected = f"a name of at most {MAX_NAME_LENGTH} characters"
        return expected, f"{len(name)} characters: {received}"
    page = slug(name)
    if not page:
        expected = "a name with at least one letter or digit (a-z, 0-9: they make its page slug)"
        return expected, f"{received}, whose page slug is empty"
    if len(page) > MAX_NAME_LENGTH:
        expected = f"a name whose page slug has at most {MAX_NAME_LENGTH} characters"
        return expected, f"{received}, whose slug has {len(page)}"
    return None


def _url_problem(url: Any) -> str | None:
    """What is wrong with a source URL (the received text), or None when it is accepted."""
    if url is None:
        return "nothing (missing)"
    if not isinstance(url, str):
        return _describe(url)
    if len(url) > MAX_URL_LENGTH:
        return f"{len(url)} characters: {_describe(url)}"
    refused = _URL_REFUSED.search(url)
    if refused:
        return _found(url, refused)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a port that is not a number)
    except ValueError:
        return f"{_describe(url)}, which does not parse as a URL"
    if not url.startswith(("http://", "https://")):  # lower case, as the schema's pattern
        return f"{_describe(url)}, scheme {parts.scheme!r}"
    if not parts.hostname:
        return f"{_describe(url)}, with no host"
    return None


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
        if not LAUNCH_OVERHEAD_RANGE.contains(launch_s):
            self.error(
                None,
                "kernel_launch_overhead_s",
                f"a finite number of seconds in {LAUNCH_OVERHEAD_RANGE.text()}",
                _describe(launch_s),
                NON_FINITE_HINT if _is_number(launch_s) and not _is_finite(launch_s) else "",
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
        label = _label(entry.get("name"), index)
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
            self._check_string(gpu, key, spec, value)
        elif spec.kind == "string_list":
            self._check_string_list(gpu, key, spec, value)
        elif spec.kind == "table":
            if not isinstance(value, dict) or not all(_is_number(v) for v in value.values()):
                self.error(gpu, key, "a table of numbers, e.g. { bf16 = 794.0 }", _describe(value))
            else:
                for dtype in value:
                    self._check_text(gpu, key, dtype, plain=True)
        elif spec.kind == "sources":
            self._check_sources(gpu, value)

    def _check_string(self, gpu: str, key: str, spec: KeySpec, value: Any) -> None:
        if not isinstance(value, str):
            self.error(gpu, key, f"a string ({spec.description})", _describe(value))
            return
        self._check_text(gpu, key, value, spec.plain)
        if spec.choices and value.split(":")[0].strip() not in spec.choices:
            self.error(gpu, key, f"one of {', '.join(spec.choices)}", _describe(value))
        if key == "name":
            problem = _name_problem(value)
            if problem:
                self.error(gpu, key, *problem)

    def _check_string_list(self, gpu: str, key: str, spec: KeySpec, value: Any) -> None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.error(gpu, key, "a list of strings", _describe(value))
            return
        for item in value:
            self._check_text(gpu, key, item, spec.plain)
            if spec.choices and item not in spec.choices:
                self.error(gpu, key, f"items from {', '.join(spec.choices)}", _describe(item))
            if key == "device_prefixes" and not item.strip():
                expected = "non-empty prefixes (an empty one matches every query)"
                self.error(gpu, key, expected, _describe(item))
            elif key == "device_prefixes" and item != item.lstrip():
                self.error(
                    gpu,
                    key,
                    "prefixes without leading whitespace (queries are stripped: it never matches)",
                    _describe(item),
                )

    def _check_text(self, gpu: str, key: str, value: str, plain: bool) -> None:
        """Refuse control characters in any text, and markup in ``plain`` fields."""
        control = _CONTROL.search(value)
        if control:
            self.error(gpu, key, "text without control characters", _found(value, control))
        markup = _MARKUP.search(value) if plain else None
        if markup:
            self.error(gpu, key, "plain text without the characters < > `", _found(value, markup))

    def _check_sources(self, gpu: str, value: Any) -> None:
        if not isinstance(value, list) or not all(isinstance(s, dict) for s in value):
            self.error(gpu, "sources", "an array of [[gpu.sources]] tables", _describe(value))
            return
        for i, source in enumerate(value):
            where = f"sources[{i}]"
            for key in source:
                if key not in SOURCE_KEYS:
                    self._unknown(gpu, f"{where}.{key}", SOURCE_KEYS)
            problem = _url_problem(source.get("url"))
            if problem:
                self.error(gpu, f"{where}.url", URL_EXPECTED, problem)
            read_on = source.get("read_on")
            if read_on is not None and not isinstance(read_on, dt.date):
                self.error(
                    gpu, f"{where}.read_on", "a TOML date, e.g. 2026-11-29", _describe(read_on)
                )
            figures = source.get("figures", [])
            if not isinstance(figures, list) or not all(
                isinstance(f, str) and f in GPU_KEYS for f in figures
            ):
                self.error(gpu, f"{where}.figures", "a list of spec key names", _describe(figures))
            note = source.get("note", "")
            if isinstance(note, str):
                self._check_text(gpu, f"{where}.note", note, plain=False)
            else:
                self.error(gpu, f"{where}.note", "a string", _describe(note))

    def _check_ranges(self, gpu: str, entry: dict[str, Any]) -> None:
        for key, spec in GPU_KEYS.items():
            value = entry.get(key)
            if spec.kind != "number" or spec.range is None or not _is_number(value):
                continue  # absent or not a number: reported by _check_type
            if not spec.range.contains(value):
                expected = f"a finite {_RANGE_NOUNS.get(key, 'number')} in {spec.range.text()}"
                self.error(gpu, key, expected, _describe(value), _range_hint(key, value))
        self._check_measured(gpu, entry.get("measured_matmul_tflops"))
        self._check_ratios(gpu, entry)

    def _check_measured(self, gpu: str, table: Any) -> None:
        if not isinstance(table, dict):
            return
        for dtype, value in table.items():
            if _is_number(value) and not MEASURED_MATMUL_TFLOPS_RANGE.contains(value):
                hint = "given in FLOP/s instead of TFLOP/s?" if _is_finite(value) else ""
                self.error(
                    gpu,
                    "measured_matmul_tflops",
                    f"finite TFLOP/s values in {MEASURED_MATMUL_TFLOPS_RANGE.text()}",
                    f"{dtype!r} = {_describe(value)}",
                    hint if value > 0 else "",
                )

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
                self.warn(
                    gpu,
                    "fp8_peak_tops",
                    f"about 2x bf16_peak_tops ({low}-{high}x)",
                    f"{ratio:.2f}x",
                    f"likely {cause}",
                )
        if fp8 is not None and fp4 is not None and fp4 < fp8:
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
        slug_owners: dict[str, str] = {}
        owners: dict[str, str] = {}
        for gpu in gpus:
            key = gpu.name.lower()
            page = slug(gpu.name)
            if key in seen_names:
                self.error(
                    gpu.name,
                    "name",
                    "a name no other entry uses",
                    f"duplicate of {seen_names[key]!r}",
                )
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


def _label(name: Any, index: int) -> str:
    """How messages name entry ``index``: its name (cut short), else ``#<n>``."""
    if not isinstance(name, str) or not name.strip():
        return f"#{index + 1}"
    return name if len(name) <= MAX_NAME_LENGTH else name[:MAX_NAME_LENGTH] + "..."


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
        linter.error(None, None, "valid TOML", f"syntax error: {_escape_controls(str(exc))}")
        raise SpecError(linter.problems) from None
    except ValueError as exc:  # an integer beyond Python's 4300-digit conversion limit
        reason = _escape_controls(str(exc).split(";")[0])
        linter.error(None, None, "valid TOML", f"unreadable number: {reason}")
        raise SpecError(linter.problems) from None
    except RecursionError:
        linter.error(None, None, "valid TOML", "arrays or tables nested too deeply to read")
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


def _text_schema(plain: bool) -> dict[str, Any]:
    """A string without control characters (nor markup when ``plain``), as JSON Schema."""
    refused = _MARKUP_OR_CONTROL if plain else _CONTROL
    return {"type": "string", "not": {"pattern": refused.pattern}}


def _key_schema(key: str, spec: KeySpec) -> dict[str, Any]:
    """The JSON Schema of one GPU key; bounds and refused characters as the lint has them."""
    if spec.kind == "number":
        prop: dict[str, Any] = {"type": "number", **(spec.range.schema() if spec.range else {})}
    elif spec.kind == "string":
        prop = _text_schema(spec.plain)
        if spec.choices:
            prop["pattern"] = "^(" + "|".join(spec.choices) + ")"
    elif spec.kind == "string_list":
        items = {"enum": list(spec.choices)} if spec.choices else _text_schema(spec.plain)
        prop = {"type": "array", "items": items}
    elif spec.kind == "table":
        values = {"type": "number", **(spec.range.schema() if spec.range else {})}
        prop = {
            "type": "object",
            "propertyNames": {"not": {"pattern": _MARKUP_OR_CONTROL.pattern}},
            "additionalProperties": values,
        }
    else:
        prop = _sources_schema()
    if key == "name":
        # At least one slug character; no leading or trailing whitespace.
        prop.update(minLength=1, maxLength=MAX_NAME_LENGTH, pattern="[A-Za-z0-9]")
        prop["not"] = {"anyOf": [prop["not"], {"pattern": r"^\s|\s$"}]}
    elif key == "device_prefixes":
        prop["items"]["pattern"] = r"^\S"
    return dict(prop, description=spec.description)


def _sources_schema() -> dict[str, Any]:
    url = {
        "type": "string",
        "pattern": "^https?://[^/?#]",
        "maxLength": MAX_URL_LENGTH,
        "not": {"pattern": _URL_REFUSED.pattern},
    }
    return {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["url"],
            "additionalProperties": False,
            "properties": {
                "url": url,
                "read_on": {"type": "string", "format": "date"},
                "figures": {"type": "array", "items": {"enum": sorted(GPU_KEYS)}},
                "note": _text_schema(plain=False),
            },
        },
    }


def json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of the spec file, generated from the key table.

    Number bounds come from the same :class:`NumberRange` objects the lint uses, so the two
    agree; JSON has no nan or inf, so "finite" needs no keyword. Checks that span entries
    (duplicate names, colliding slugs and prefixes) are the lint's alone.
    """
    properties = {key: _key_schema(key, spec) for key, spec in GPU_KEYS.items()}
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
                **LAUNCH_OVERHEAD_RANGE.schema(),
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
