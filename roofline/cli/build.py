"""``roofline build``: the outer edge that starts the site build (:mod:`site_gen`), lazily,
so the model never imports the build step."""

from __future__ import annotations

import argparse
from pathlib import Path


def cmd_build(args: argparse.Namespace) -> int:
    """``roofline build``: the site (see :mod:`site_gen`)."""
    from site_gen.build import build_site
    from site_gen.inputs import DataPaths

    optional = {"calibration": args.calibration, "measurements": args.measurements}
    build_site(
        specs_path=args.specs,
        site_dir=Path(args.site_dir),
        serve=args.serve,
        use_cache=not args.no_cache,
        max_gpus=args.max_gpus,
        docs_dir=Path(args.docs_dir) if args.docs_dir else None,
        data=DataPaths(**{k: Path(v) if v else None for k, v in optional.items()}),
    )
    return 0
