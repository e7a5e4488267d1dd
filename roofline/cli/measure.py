"""``roofline measure``: time this machine's GEMMs and casts and write a measurement file.

On a CUDA GPU (the ``torch`` extra) it times, per shape, the bf16 GEMM and, for each
recipe ``torch._scaled_mm`` runs natively on the GPU (``tensorwise``, ``rowwise``; with
torchao installed also its MXFP8 and NVFP4 recipes, ``TORCHAO_RECIPES``, quantized by
torchao), the low-precision GEMM and the activation cast (:mod:`roofline.measurements.harness`), and
writes one ``time_us`` set per kernel kind and recipe that ``roofline validate
--measurements FILE`` scores and ``roofline calibrate --measurements FILE`` fits on.
Without CUDA it says so in one line and exits 2; ``--device cpu`` times the bf16 GEMMs
on the CPU (the plumbing, for tests), every set titled and noted as CPU timings with role
``context``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import shlex
import sys
from pathlib import Path

from roofline.capability import Support, classify
from roofline.cli.output import write_atomically
from roofline.errors import RooflineError
from roofline.evaluate import resolve_specs
from roofline.measurements import parse_measurements
from roofline.measurements.harness import (
    DEFAULT_URL,
    SCALED_MM_RECIPES,
    TORCHAO_RECIPES,
    Job,
    MeasureError,
    measurement_text,
    run_jobs,
)
from roofline.measurements.torch_jobs import CpuTimer, CudaTimer, environment, plan_jobs
from roofline.presets.hf import load_hf_config
from roofline.publish.slugs import slug
from roofline.recipes import Mode, get_recipe
from roofline.shapes import GENERATORS, generate, parse_shape
from roofline.specs import SpecDatabase

_ROLES = ("fit", "holdout", "context")


def add_measure_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``measure`` subcommand."""
    ms = sub.add_parser(
        "measure",
        help="time bf16 and fp8 GEMMs and casts on this GPU; write a measurement file",
        description="Time the bf16 GEMM and each natively supported torch._scaled_mm "
        "recipe's GEMM and activation cast (with torchao installed, also its MXFP8 and NVFP4 "
        "ones) at the given shapes (CUDA events, L2 flushed "
        "before each run, warm-up, median of --repeats runs with the spread) and write a "
        "measurement file for roofline validate and roofline calibrate. Needs torch; "
        "exit 2 without CUDA unless --device cpu (bf16 only, labelled CPU).",
    )
    shapes = ms.add_mutually_exclusive_group(required=True)
    shapes.add_argument("--shape", action="append", metavar="M,K,N", help="a shape (repeatable)")
    shapes.add_argument("--shape-gen", choices=sorted(GENERATORS), help="torchao shape generator")
    shapes.add_argument(
        "--hf-config", metavar="FILE", help="the dense GEMMs of a Hugging Face config.json"
    )
    ms.add_argument("--tokens", metavar="M", default="8192", help="M for --hf-config (8192)")
    ms.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ms.add_argument("--gpu", help="the spec entry the sets are for (default: the CUDA device)")
    ms.add_argument(
        "--recipes",
        metavar="A,B",
        help="of tensorwise, rowwise and, with torchao, mxfp8_cublas, mxfp8_cublas_rceil, "
        "nvfp4, nvfp4_static, nvfp4_no_global_scale (default: those native on the GPU)",
    )
    ms.add_argument("--warmup", type=_count, default=5, metavar="N", help="untimed calls (5)")
    ms.add_argument("--repeats", type=_count, default=20, metavar="N", help="timed runs (20)")
    ms.add_argument("--role", choices=_ROLES, default="fit", help="the sets' role (fit)")
    ms.add_argument(
        "--max-mean-error",
        type=float,
        default=0.25,
        metavar="F",
        help="regression guard of fit and holdout sets (0.25)",
    )
    ms.add_argument("--id-prefix", metavar="ID", help="set ids start with it")
    ms.add_argument("--source-url", metavar="URL", help="where the file will be published")
    ms.add_argument("--specs", metavar="FILE", help="spec file (default: bundled database)")
    ms.add_argument("-o", "--output", metavar="FILE", required=True, help="measurement file")
    ms.set_defaults(func=cmd_measure)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if not 1 <= value <= 10000:
        raise argparse.ArgumentTypeError(f"expected 1 to 10000, got {value}")
    return value


def _shapes(args: argparse.Namespace) -> list[tuple[int, int, int]]:
    if args.shape:
        found = [parse_shape(s) for s in args.shape]
    elif args.shape_gen:
        found = generate(args.shape_gen)
    else:
        try:
            tokens = int(args.tokens)
        except ValueError:
            expected = f"--tokens: expected a positive integer, got {args.tokens!r}"
            raise RooflineError(expected) from None
        instances = load_hf_config(args.hf_config).gemm_instances(tokens)
        skipped = sorted({i.key for i in instances if i.groups > 1})
        if skipped:
            names = ", ".join(skipped)
            print(f"note: grouped expert GEMMs are not timed: {names}", file=sys.stderr)
        return list(dict.fromkeys((i.M, i.K, i.N) for i in instances if i.groups == 1))
    return list(dict.fromkeys((s.M, s.K, s.N) for s in found))


def _gpu(args: argparse.Namespace, specs: SpecDatabase) -> str:
    """The spec entry the sets name: --gpu, else the CUDA device's (else the first, CPU)."""
    if args.gpu is not None:
        return specs.match(args.gpu).gpu.name
    if args.device == "cpu":
        return next(iter(specs.values())).name
    import torch

    return specs.match(torch.cuda.get_device_name()).gpu.name


def _recipes(args: argparse.Namespace, gpu: str, specs: SpecDatabase) -> list[str]:
    if args.device == "cpu":
        if args.recipes:
            raise RooflineError("--recipes: --device cpu times the bf16 GEMMs only")
        return []
    spec = specs[gpu]
    timeable = SCALED_MM_RECIPES + TORCHAO_RECIPES
    native = [
        r
        for r in timeable
        if classify(spec, get_recipe(r, Mode.INFERENCE)).support is Support.NATIVE
    ]
    if args.recipes is None:  # torchao's recipes only where torchao is installed
        have_torchao = importlib.util.find_spec("torchao") is not None
        return [r for r in native if r in SCALED_MM_RECIPES or have_torchao]
    names = [n.strip() for n in args.recipes.split(",") if n.strip()]
    asked = [get_recipe(n, Mode.INFERENCE).name for n in names]
    for name in asked:
        if name not in timeable:
            timed = ", ".join(timeable)
            raise RooflineError(f"--recipes: {name} cannot be timed; measure times {timed}")
        if name not in native:
            raise RooflineError(f"--recipes: {name} is not native on {gpu}: its GEMM cannot run")
    return list(dict.fromkeys(asked))


def _check_device(device: str) -> None:
    try:
        import torch
    except ImportError:
        raise MeasureError(
            "roofline measure needs torch: pip install roofline-atlas[torch]"
        ) from None
    if device == "cuda" and not torch.cuda.is_available():
        raise MeasureError(
            "no CUDA device (torch.cuda.is_available() is False): roofline measure times GPU "
            "kernels; --device cpu times the bf16 GEMMs on the CPU, labelled as CPU timings"
        )


class _Progress:
    """A bar on a terminal, one line per job otherwise (stderr)."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()

    def __call__(self, done: int, total: int, job: Job) -> None:
        shape = "x".join(map(str, job.shape))
        what = f"{job.kind.replace('_', ' ')} {job.recipe if job.kind != 'bf16_gemm' else ''}"
        if self.tty:
            filled = int(30 * done / max(total, 1))
            bar = "#" * filled + "-" * (30 - filled)
            end = "\n" if done == total else ""
            sys.stderr.write(f"\r[measure] [{bar}] {done}/{total} {what.strip()} {shape}   {end}")
            sys.stderr.flush()
        elif done < total:
            print(f"[measure] {done + 1}/{total} {what.strip()} {shape}", file=sys.stderr)


def cmd_measure(args: argparse.Namespace) -> int:
    """``roofline measure``: time, summarize, lint the file, write it."""
    _check_device(args.device)
    specs = resolve_specs(args.specs)
    shapes = _shapes(args)
    gpu = _gpu(args, specs)
    recipes = _recipes(args, gpu, specs)
    jobs = plan_jobs(shapes, recipes, args.device)
    timer = CpuTimer() if args.device == "cpu" else CudaTimer()
    env = environment(args.device)
    print(
        f"[measure] {len(jobs)} kernels on {env.device_name} ({args.device}), {args.warmup} "
        f"warm-up and {args.repeats} timed runs each",
        file=sys.stderr,
    )
    results = run_jobs(jobs, timer, warmup=args.warmup, repeats=args.repeats, progress=_Progress())
    prefix = args.id_prefix or slug(f"measured-{gpu}-{dt.date.today().isoformat()}")
    text = measurement_text(
        results,
        env,
        gpu,
        prefix=prefix,
        command=shlex.join(["roofline", *sys.argv[1:]]),
        url=args.source_url or DEFAULT_URL,
        role=args.role,
        max_mean_error=args.max_mean_error,
        warmup=args.warmup,
    )
    parse_measurements(text, args.output, specs)  # the file loads, or nothing is written
    write_atomically(Path(args.output), text)
    print(
        f"[measure] wrote {len(results)} points to {args.output}"
        + (" (CPU timings: role context)" if args.device == "cpu" else ""),
        file=sys.stderr,
    )
    return 0
