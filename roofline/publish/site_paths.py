"""The site's URL scheme, in one place: where every generated page lives, and its URL.

The site generator writes pages at these docs-relative paths and links between them; the
CLI's ``roofline latex --cite`` and the site's Cite buttons print permalinks from the same
functions, so a page move changes both or neither. MkDocs serves ``a/b.md`` at ``a/b/``
and ``a/index.md`` at ``a/`` (``use_directory_urls``).
"""

from __future__ import annotations

import posixpath

from roofline.publish.slugs import slug
from roofline.recipes import Mode

#: Folder of every generated page under ``docs/`` (git-ignored).
GENERATED_DIRNAME = "generated"
#: The hand-written equation index page.
EQUATIONS_PAGE = "equations.md"


def gpu_dir(gpu_name: str) -> str:
    """Docs-relative folder of a GPU's pages: ``generated/gpus/<slug>``."""
    return f"{GENERATED_DIRNAME}/gpus/{slug(gpu_name)}"


def gpu_page(gpu_name: str) -> str:
    """Docs-relative path of a GPU page."""
    return f"{gpu_dir(gpu_name)}/index.md"


def recipe_page_name(mode: Mode, recipe: str) -> str:
    """File stem of a GPU x mode x recipe page, e.g. ``training-rowwise``."""
    return f"{mode.value}-{recipe}"


def recipe_result_page(gpu_name: str, mode: Mode, recipe: str) -> str:
    """Docs-relative path of a GPU x mode x recipe page."""
    return f"{gpu_dir(gpu_name)}/{recipe_page_name(mode, recipe)}.md"


def grouped_result_page(gpu_name: str, mode: Mode, recipe: str) -> str:
    """Docs-relative path of a GPU x mode x recipe page of grouped (MoE) GEMMs:
    ``generated/gpus/<slug>/grouped/<mode>-<recipe>.md`` (a folder of its own, so no
    recipe name can collide with a dense page)."""
    return f"{gpu_dir(gpu_name)}/grouped/{recipe_page_name(mode, recipe)}.md"


def recipe_page(recipe: str) -> str:
    """Docs-relative path of a recipe page (the recipe on every GPU)."""
    return f"{GENERATED_DIRNAME}/recipes/{recipe}.md"


def models_index() -> str:
    """Docs-relative path of the Models section's index (every model preset)."""
    return f"{GENERATED_DIRNAME}/models/index.md"


def model_dir(model_name: str) -> str:
    """Docs-relative folder of a model preset's pages: ``generated/models/<slug>``."""
    return f"{GENERATED_DIRNAME}/models/{slug(model_name)}"


def model_page(model_name: str) -> str:
    """Docs-relative path of a model's overview across GPUs."""
    return f"{model_dir(model_name)}/index.md"


def model_gpu_page(model_name: str, gpu_name: str) -> str:
    """Docs-relative path of a model x GPU page: ``generated/models/<model>/<gpu>/index.md``
    (a folder per GPU, so no GPU slug can collide with the overview's ``index.md``)."""
    return f"{model_dir(model_name)}/{slug(gpu_name)}/index.md"


def url_path(docs_path: str) -> str:
    """The URL path (relative to the site root) that serves ``docs_path``."""
    stem = docs_path.removesuffix(".md")
    if posixpath.basename(stem) == "index":
        stem = posixpath.dirname(stem)
    return f"{stem}/" if stem else ""
