"""Page slugs of names, and the longest name the spec lint accepts.

A GPU's name becomes a folder name (``generated/gpus/<slug>/``, ``generated/data/<slug>/``)
and a formula anchor, so the spec lint (:mod:`roofline.specs`) refuses names whose slug is
empty, too long or shared with another GPU. This module imports nothing from the package
so both the lint and the citation code (:mod:`roofline.publish.cite`) can use it.
"""

from __future__ import annotations

import re

#: Longest GPU name the spec lint accepts, in characters (and the longest slug). It bounds
#: the folder and file names built from the name far below the 255-byte limit of common
#: file systems (slug + "/<mode>-<recipe>-fusion1.json" stays under 100 bytes), and keeps
#: page titles, nav entries and chart titles readable. The longest real name is about 20.
MAX_NAME_LENGTH = 64

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    """Lower-case, dash-separated: ``NVIDIA H100 SXM`` -> ``nvidia-h100-sxm``.

    Only ASCII letters and digits survive, so a name without any slugifies to ``""``.
    """
    return _NOT_SLUG.sub("-", text.lower()).strip("-")
