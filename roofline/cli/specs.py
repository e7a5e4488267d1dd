"""``roofline specs``: list, check, show and schema of spec files, and ``--max-gpus``."""

from __future__ import annotations

import argparse
import json
import sys

from roofline import units
from roofline.cli import capabilities
from roofline.cli.calibrated import gpu_calibration, print_calibration
from roofline.cli.rows import warn_fallback
from roofline.datafiles.core import MAX_GPUS
from roofline.errors import printable
from roofline.evaluate import resolve_specs
from roofline.specs import json_schema, load_specs
from roofline.symbols import HARDWARE_SYMBOLS

EXIT_WARNINGS = 1
#: The most GPUs --max-gpus may allow (a site of 4096 GPUs is about 72 GB).
MAX_GPUS_LIMIT = 4096


def _max_gpus(text: str) -> int:
    """``--max-gpus N``: an integer from 1 to :data:`MAX_GPUS_LIMIT`."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_GPUS_LIMIT:
        raise argparse.ArgumentTypeError(
            f"expected an integer from 1 to {MAX_GPUS_LIMIT}, got {text!r}"
        )
    return int(text)


def add_max_gpus_arg(parser: argparse.ArgumentParser) -> None:
    """``--max-gpus N``: raise the spec file's GPU limit, for a team that means it."""
    parser.add_argument(
        "--max-gpus",
        type=_max_gpus,
        default=MAX_GPUS,
        metavar="N",
        help=f"accept a spec file of up to N GPUs (default {MAX_GPUS}; each GPU adds about "
        "750 files and 18 MB to a site)",
    )


def _fmt_peak(value: float | None) -> str:
    return "-" if value is None else units.tflops(value)


def _basis_word(assumed: bool) -> str:
    return "assumed" if assumed else "measured"


def cmd_specs_list(args: argparse.Namespace) -> int:
    """``roofline specs list``: each GPU's figures, then the capability matrix (``--format
    json``: both, with each capability's reason)."""
    specs = load_specs(args.file, args.max_gpus)
    if args.format == "json":
        print(json.dumps(capabilities.specs_json(specs), indent=2))
        for warning in specs.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        return 0
    print(f"{len(specs)} GPUs in {specs.origin}\n")
    width = max(len("GPU"), *(len(name) for name in specs))
    header = (
        f"{'GPU':{width}} {'bf16':>7} {'fp8':>7} {'fp4':>7} {'TB/s':>6} {'eta_gemm':>8} "
        f"{'eta_mem':>7}"
    )
    print(header + "  efficiencies (GEMM, memory)")
    for gpu in specs.values():
        print(
            f"{printable(gpu.name):{width}} {_fmt_peak(gpu.bf16_peak_tops):>7} "
            f"{_fmt_peak(gpu.fp8_peak_tops):>7} {_fmt_peak(gpu.fp4_peak_tops):>7} "
            f"{gpu.peak_mem_bw_bytes_sec / 1e12:>6.3g} "
            f"{gpu.pct_achievable_gemm_tops:>8} {gpu.pct_achievable_mem_bw:>7}  "
            f"{_basis_word(gpu.gemm_efficiency_assumed)}, {_basis_word(gpu.mem_efficiency_assumed)}"
        )
    print("\n(peaks in dense TFLOP/s)\n")
    print(capabilities.legend())
    print("  reasons: roofline specs show GPU, or roofline specs list --format json\n")
    print("\n".join(capabilities.matrix_lines(specs)))
    for warning in specs.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def cmd_specs_check(args: argparse.Namespace) -> int:
    """``roofline specs check``: lint; errors exit 2, warnings alone exit 1.

    Loading for ``eval`` only prints warnings; ``check`` is the gate a spec change must
    pass, so a likely mix-up (sparse fp8, fp4 below fp8) fails it too.
    """
    specs = load_specs(args.file, args.max_gpus)
    for warning in specs.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if specs.warnings:
        print(
            f"{specs.origin}: {len(specs.warnings)} warning(s); fix them or note why in the "
            "entry's notes and correct the figure",
            file=sys.stderr,
        )
        return EXIT_WARNINGS
    print(f"ok: {specs.origin}: {len(specs)} GPUs, no problems")
    return 0


def cmd_specs_show(args: argparse.Namespace) -> int:
    """``roofline specs show``: one GPU's figures, provenance and capabilities
    (``--calibrated``: its calibrated model parameters too)."""
    specs = resolve_specs(args.specs)
    match = specs.match(args.gpu)
    gpu = match.gpu
    calibration = gpu_calibration(args, gpu, specs)
    warn_fallback(match)
    print(f"{gpu.name}  ({gpu.vendor} {gpu.architecture}, {gpu.sku})".replace(" ,", ""))
    for hw in HARDWARE_SYMBOLS:
        value = gpu.value(hw.spec_key)
        unit = "" if hw.unit == "1" else f" {hw.unit}"
        shown = "absent" if value is None else f"{units.significant(value, None)}{unit}"
        print(f"  {hw.spec_key:26} {shown}")
    print(f"  efficiency basis           {gpu.efficiency_basis}")
    if gpu.efficiency_reference:
        print(f"  efficiency reference       {gpu.efficiency_reference}")
    print(f"  peaks                      {gpu.peak_basis}, {gpu.accumulate_dtype} accumulate")
    print(f"  native formats             {', '.join(gpu.native_formats) or 'none'}")
    if gpu.derivation:
        print(f"  derivation                 {gpu.derivation}")
    print("  sources:")
    for source in gpu.source_records:
        read = f" (read {source.read_on})" if source.read_on else ""
        print(f"    {source.url}{read}: {', '.join(source.figures)}")
    if gpu.notes:
        print(f"  notes: {gpu.notes}")
    print("\n".join(capabilities.gpu_lines(gpu)))
    if calibration is not None:
        print_calibration(calibration)
    return 0


def cmd_specs_schema(args: argparse.Namespace) -> int:
    """``roofline specs schema``: the JSON Schema of spec files."""
    print(json.dumps(json_schema(), indent=2))
    return 0
