"""The README stays true: every setting is documented with its default."""

from __future__ import annotations

import re

import pytest

from app.config import SETTINGS
from tests.support import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.env_name)
def test_every_setting_is_documented_with_its_default(setting):
    rows = [line for line in README.splitlines() if line.startswith(f"| `{setting.env_name}`")]
    assert rows, f"{setting.env_name} is not in the README's configuration table"
    assert f"`{setting.default}`" in rows[0], f"{setting.env_name}: default not documented"


def test_readme_gives_the_two_commands():
    assert "./playground serve" in README
    assert "./playground test" in README


def test_every_image_the_readme_shows_is_in_the_repository():
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    assert images, "the README's walkthrough shows the page"
    for image in images:
        assert (REPO / image).is_file(), f"{image} is missing"


def test_the_docker_section_names_the_images_the_dockerfile_starts_from():
    # It said `python:3.11-slim` where the Dockerfile pins `python:3.11.11-slim-bookworm`.
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    bases = re.findall(r"^FROM\s+(\S+)", dockerfile, re.MULTILINE)
    assert len(bases) == 2, bases
    section = README.split("## Docker", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`((?:python|node):[^`]+)`", section))
    assert named == set(bases)
