"""The last output step: ``mkdocs build --strict`` over the written docs, and serving a site.

With an enabled build cache, unchanged pages come from :mod:`site_gen.output.mkdocs_cache`.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import logging
import os
import sys
from pathlib import Path

from roofline.publish.cite import SITE_URL_ENV, site_url
from site_gen import config
from site_gen.cache import BuildCache
from site_gen.output import mkdocs_cache


def run_mkdocs(
    site_dir: Path, mkdocs_yml: Path = config.MKDOCS_YML, cache: BuildCache | None = None
) -> None:
    """``mkdocs build --strict`` into ``site_dir``; raises on any warning.

    With ``$ROOFLINE_ATLAS_SITE_URL`` set, it is mkdocs' ``site_url`` (canonical links and
    a sitemap with real addresses); unset, mkdocs.yml's own (none) stays. With an enabled
    ``cache``, unchanged pages come from it (:mod:`site_gen.output.mkdocs_cache`).
    """
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    logger = logging.getLogger("mkdocs")
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("[mkdocs] %(levelname)s %(message)s"))
    logger.addHandler(handler)
    url = site_url() if os.environ.get(SITE_URL_ENV) else None
    # Loading the hooks would leave __pycache__/ in docs/, which mkdocs would then publish.
    no_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        cfg = load_config(
            str(mkdocs_yml), site_dir=str(site_dir.resolve()), strict=True, site_url=url
        )
        # Snippet paths are relative to the working directory; pin them to this docs_dir.
        cfg.mdx_configs.setdefault("pymdownx.snippets", {})["base_path"] = [cfg.docs_dir]
        if cache is None or not cache.enabled:
            build(cfg)
            return
        generated = Path(cfg.docs_dir) / config.GENERATED_DIRNAME
        with mkdocs_cache.installed(cfg, cache, generated, config.HELPERS) as pages:
            build(cfg)
        pages.flush()  # only a run that succeeded stores its pages
    finally:
        sys.dont_write_bytecode = no_bytecode
        logger.removeHandler(handler)


def serve_site(site_dir: Path, port: int = 8000) -> None:
    """Serve ``site_dir`` on http://127.0.0.1:port until interrupted."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site_dir))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"[build] serving {site_dir} at http://127.0.0.1:{port}/ (Ctrl-C to stop)")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
