"""Put ``tests/`` on sys.path so ``browser.site_fixtures`` imports from the browser tests."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = str(Path(__file__).resolve().parent.parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
