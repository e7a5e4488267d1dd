"""The URL scheme lives in roofline.publish.site_paths: the site's pages and the permalinks agree."""

from __future__ import annotations

import pytest

from roofline.publish import cite, site_paths
from roofline.recipes import Mode
from site_gen import context


@pytest.mark.parametrize(
    ("docs_path", "url"),
    [
        ("index.md", ""),
        ("equations.md", "equations/"),
        ("generated/gpus/nvidia-b200/index.md", "generated/gpus/nvidia-b200/"),
        (
            "generated/gpus/nvidia-b200/training-rowwise.md",
            "generated/gpus/nvidia-b200/training-rowwise/",
        ),
    ],
)
def test_url_path_follows_mkdocs_directory_urls(docs_path: str, url: str) -> None:
    assert site_paths.url_path(docs_path) == url


def test_permalinks_point_at_the_pages_the_site_writes(bundled, monkeypatch) -> None:
    monkeypatch.setenv(cite.SITE_URL_ENV, "https://example.org/atlas")
    gpu = bundled["NVIDIA B200"]
    page = context.recipe_result_page(gpu, Mode.TRAINING, "mxfp8_cublas")
    assert page == "generated/gpus/nvidia-b200/training-mxfp8_cublas.md"
    url = cite.gpu_recipe_url(gpu.name, Mode.TRAINING, "mxfp8_cublas", "f-x")
    assert url == f"https://example.org/atlas/{site_paths.url_path(page)}#f-x"
    assert cite.equations_url("f-y") == "https://example.org/atlas/equations/#f-y"
