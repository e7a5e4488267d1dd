"""The ``roofline`` command: eval, latex, specs, diff, recipes, model(s), validate, calibrate,
build.

Exit status: 0 on success, 2 on bad input (with a message, never a traceback); validate
and calibrate --check exit 1 when their gate fails. The parser and :func:`main` live
here; the commands in :mod:`.rows` (eval), :mod:`.validate` (its output in
:mod:`.validate_report`), :mod:`.calibrated` (calibrate, the --calibrated options),
:mod:`.model` (model, models; output in :mod:`.model_table` and :mod:`.model_export`),
:mod:`.measure`, :mod:`.latex`, :mod:`.specs`, :mod:`.diff`, :mod:`.recipes` and
:mod:`.build` (one module per command), output files in :mod:`.output`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import NoReturn, TextIO

from roofline.cli.build import cmd_build
from roofline.cli.calibrated import add_calibrate_parser, add_calibrated_args
from roofline.cli.diff import BUNDLED_SPEC_PATH, cmd_diff
from roofline.cli.latex import cmd_latex
from roofline.cli.measure import add_measure_parser
from roofline.cli.model import add_model_parsers
from roofline.cli.output import atomic_writer, named_inputs, write_atomically
from roofline.cli.recipes import cmd_recipes
from roofline.cli.rows import cmd_eval, groups_arg
from roofline.cli.specs import (
    EXIT_WARNINGS,
    add_max_gpus_arg,
    cmd_specs_check,
    cmd_specs_list,
    cmd_specs_schema,
    cmd_specs_show,
)
from roofline.cli.validate import add_validate_parser
from roofline.errors import ProblemsError, RooflineError, printable
from roofline.model.build import MODEL_VERSION
from roofline.model.terms import Quantity
from roofline.publish import cite
from roofline.shapes import GENERATORS

__all__ = [
    "BUNDLED_SPEC_PATH",
    "EXIT_BAD_INPUT",
    "EXIT_INTERRUPTED",
    "EXIT_WARNINGS",
    "atomic_writer",
    "build_parser",
    "main",
    "write_atomically",
]

EXIT_BAD_INPUT = 2


def _add_model_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gpu",
        help="GPU name or torch device name (default: the current "
        "CUDA device, needs the torch extra)",
    )
    parser.add_argument("--mode", default="training", help="training (default) or inference")
    parser.add_argument("--recipe", required=True, help="recipe name (see `roofline recipes`)")
    parser.add_argument(
        "--fusion",
        action="store_true",
        help="model fusing the cast's bf16 read with the previous op",
    )
    parser.add_argument("--specs", metavar="FILE", help="spec file (default: bundled database)")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (usage stays in ``--help``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        """Print ``error: MESSAGE`` and where the options are listed; exit 2."""
        self.exit(EXIT_BAD_INPUT, f"error: {message} (see: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(
        prog="roofline",
        description="Roofline model of low-precision GEMM training and inference "
        f"(model {MODEL_VERSION}).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ev = sub.add_parser("eval", help="evaluate a recipe on a GPU over shapes")
    _add_model_args(ev)
    shapes = ev.add_mutually_exclusive_group(required=True)
    shapes.add_argument("--shape", action="append", metavar="M,K,N", help="a shape (repeatable)")
    shapes.add_argument("--shape-gen", choices=sorted(GENERATORS), help="torchao shape generator")
    shapes.add_argument("--shapes-file", metavar="CSV", help="CSV with header M,K,N[,name]")
    ev.add_argument("--format", choices=("table", "csv", "json"), default="table")
    ev.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    ev.add_argument(
        "--groups",
        type=groups_arg,
        metavar="G",
        help="a grouped (mixture-of-experts) layer of G experts: M tokens in all, split over "
        "G experts, weights G x K x N (1 equals the dense layer; default: dense)",
    )
    add_calibrated_args(ev)
    ev.set_defaults(func=cmd_eval)

    lx = sub.add_parser("latex", help="print a formula's LaTeX")
    _add_model_args(lx)
    add_calibrated_args(lx)
    lx.add_argument(
        "--quantity",
        default="speedup",
        choices=[q.value for q in Quantity],
        help="which total (default speedup)",
    )
    lx.add_argument(
        "--grouped",
        action="store_true",
        help="the grouped (mixture-of-experts) layer's formula, in G, the expert count",
    )
    lx.add_argument(
        "--symbolic",
        action="store_true",
        help="named hardware symbols instead of the GPU's numbers",
    )
    lx.add_argument(
        "--cite",
        action="store_true",
        help="print the site's cite snippet (Markdown permalink + $$ block) instead; "
        f"permalinks start at ${{{cite.SITE_URL_ENV}}} or {cite.DEFAULT_SITE_URL}",
    )
    lx.set_defaults(func=cmd_latex)

    sp = sub.add_parser("specs", help="list or lint spec files")
    sp_sub = sp.add_subparsers(dest="specs_command", required=True, metavar="ACTION")
    for action, func, text in (
        ("list", cmd_specs_list, "GPUs and the capability matrix"),
        ("check", cmd_specs_check, "lint a spec file"),
    ):
        p = sp_sub.add_parser(action, help=text)
        p.add_argument("file", nargs="?", help="spec file (default: bundled database)")
        add_max_gpus_arg(p)
        p.set_defaults(func=func)
        if action == "list":
            p.add_argument(
                "--format",
                choices=("text", "json"),
                default="text",
                help="text (a matrix of marks) or json (each capability with its reason)",
            )

    show = sp_sub.add_parser("show", help="one GPU's figures with sources and efficiency basis")
    show.add_argument("gpu", help="GPU name or device name")
    show.add_argument("--specs", metavar="FILE", help="spec file (default: bundled database)")
    add_calibrated_args(show)
    show.set_defaults(func=cmd_specs_show)

    schema = sp_sub.add_parser("schema", help="print the spec file's JSON Schema")
    schema.set_defaults(func=cmd_specs_schema)

    df = sub.add_parser(
        "diff",
        help="compare two spec files: fields, speedups, recommendations, break-even",
        description="Compare spec files BASE and HEAD (or HEAD with the same file at git "
        "revision --base-rev). Exit 0 whether or not they differ; 2 on invalid input.",
    )
    df.add_argument("files", nargs="*", metavar="FILE", help="BASE HEAD, or HEAD with --base-rev")
    df.add_argument(
        "--base-rev", metavar="REV", help="take BASE from git: HEAD's file at revision REV"
    )
    df.add_argument("--format", choices=("markdown", "json"), default="markdown")
    df.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    df.set_defaults(func=cmd_diff)

    rc = sub.add_parser("recipes", help="list the recipes")
    rc.set_defaults(func=cmd_recipes)

    add_model_parsers(sub)
    add_validate_parser(sub)
    add_calibrate_parser(sub)
    add_measure_parser(sub)

    bd = sub.add_parser("build", help="build the reference site")
    bd.add_argument("--specs", metavar="FILE", help="spec file (default: bundled database)")
    bd.add_argument("--site-dir", default="site", help="output folder (default: site/)")
    bd.add_argument("--serve", action="store_true", help="serve the built site afterwards")
    bd.add_argument(
        "--docs-dir",
        metavar="DIR",
        help="a folder of your own Markdown pages, published under 'Team pages'",
    )
    bd.add_argument(
        "--no-cache",
        action="store_true",
        help="ignore the build cache (a cold build); default: reuse what is unchanged",
    )
    bd.add_argument(
        "--calibration",
        metavar="FILE",
        help="calibration file to publish instead of the bundled one (e.g. from "
        "roofline calibrate --gpu NAME -o FILE: that GPU then shows its own fit and band)",
    )
    bd.add_argument(
        "--measurements",
        metavar="FILE",
        help="measurement sets to publish on the Validation page beside the bundled ones "
        "(the sets the --calibration file was fitted on)",
    )
    add_max_gpus_arg(bd)
    bd.set_defaults(func=cmd_build)
    return parser


EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class _PrintableStream:
    """A text stream whose writes pass through :func:`roofline.errors.printable`.

    main() puts it in place of sys.stdout and sys.stderr while a command runs, so no
    name, note or path from a spec or shapes file can send terminal control sequences."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(printable(text))
        return len(text)

    def writelines(self, lines: Iterator[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> object:  # flush, fileno, isatty, encoding ...
        return getattr(self._stream, name)


@contextlib.contextmanager
def _printable_output() -> Iterator[None]:
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _PrintableStream(saved[0]), _PrintableStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _os_error_message(exc: OSError) -> str:
    """One line for an OSError: the path it names and the reason."""
    reason = exc.strerror or str(exc)
    if exc.filename is None:
        return reason
    return f"{os.fsdecode(exc.filename)!r}: {reason}"


def _silence_stdout() -> None:
    # The reader went away (`roofline eval ... | head`): point stdout at /dev/null so
    # Python's flush at exit does not complain about the broken pipe.
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``roofline`` console script.

    Exit 0 on success, 2 with a one-line message on any input a user can get wrong (a
    RooflineError, or an OSError or UnicodeDecodeError from a file they named), 130 on
    Ctrl-C. Everything printed passes through :func:`roofline.errors.printable`."""
    args = argparse.Namespace()
    with _printable_output():
        try:
            args = build_parser().parse_args(argv)
            return args.func(args)
        except SystemExit as exc:  # --help, or a usage error argparse printed
            if exc.code is None or isinstance(exc.code, int):
                return exc.code or 0
            print(f"error: {exc.code}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except ProblemsError as exc:  # a data file: one "error:" line per problem, capped
            print("\n".join(exc.report_lines()), file=sys.stderr)
            return EXIT_BAD_INPUT
        except RooflineError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except BrokenPipeError:  # e.g. `roofline eval ... | head`
            _silence_stdout()
            return 0
        except OSError as exc:  # a file the user named: unreadable, a folder, read-only
            print(f"error: {_os_error_message(exc)}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except UnicodeDecodeError as exc:  # the readers name their file; this is a backstop
            files = ", ".join(map(repr, named_inputs(args))) or "a file given"
            print(
                f"error: {files}: not UTF-8 text (byte {exc.start}: {exc.reason})", file=sys.stderr
            )
            return EXIT_BAD_INPUT
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
