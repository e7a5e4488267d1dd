"""``python -m roofline.cli``: the console script."""

from __future__ import annotations

import sys

from roofline.cli import main

sys.exit(main())
