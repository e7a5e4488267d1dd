"""``roofline diff``: what changed between two spec files (or a file and a git revision)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from roofline.analysis.diff import diff_specs
from roofline.analysis.diff_report import to_json, to_markdown
from roofline.analysis.history import load_specs_at_rev
from roofline.cli.output import named_inputs, output, output_path
from roofline.errors import RooflineError
from roofline.specs import load_specs

BUNDLED_SPEC_PATH = Path(__file__).resolve().parents[1] / "data" / "gpus.toml"


def cmd_diff(args: argparse.Namespace) -> int:
    """``roofline diff``: what changed between two spec files, as Markdown or JSON."""
    path = output_path(args.output, named_inputs(args))
    if args.base_rev is not None:
        if len(args.files) > 1:
            raise RooflineError("with --base-rev give at most one file (HEAD)")
        head_path = Path(args.files[0]) if args.files else BUNDLED_SPEC_PATH
        head = load_specs(head_path)
        base = load_specs_at_rev(args.base_rev, head_path)
    elif len(args.files) == 2:
        base, head = load_specs(args.files[0]), load_specs(args.files[1])
    else:
        raise RooflineError("give two spec files (BASE HEAD), or --base-rev REV [HEAD]")
    for warning in (*base.warnings, *head.warnings):
        print(f"warning: {warning}", file=sys.stderr)
    result = diff_specs(base, head)
    render = to_json if args.format == "json" else to_markdown
    text = render(result)
    with output(path) as out:
        out.write(text)
    return 0
