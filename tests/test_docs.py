"""The documentation stays true: the README is a front door, the pages in `docs/` hold the
reference, every setting is documented with its default, and every link lands.

The pages are read twice: on GitHub, where a link is a file and an anchor is the id
GitHub gives a heading, and on the running service (`/docs/`), which serves the same
files with the same ids (`app/docs.py`). A link is checked against both at once: the
file must exist and have a heading with that id.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path, PurePosixPath

import pytest
from markdown_it import MarkdownIt

from app.config import SETTINGS
from app.docs import page_name, render_markdown
from app.render.engines import ENGINES
from tests.support import REPO

DOCS = REPO / "docs"
README = (REPO / "README.md").read_text(encoding="utf-8")
#: The page that holds the configuration table and the Docker section.
SERVICE = (DOCS / "running-a-service.md").read_text(encoding="utf-8")
#: Every Markdown file a reader opens: the front door and the pages.
MARKDOWN = [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]
#: The README's most lines: what it is, a picture, two commands, a first use, where next.
README_LINES = 250


def relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def targets(path: Path, kind: str) -> list[str]:
    """Every link (`link_open`) or image (`image`) target of a Markdown file, as written."""
    found = []
    for token in MarkdownIt("commonmark").enable("table").parse(path.read_text("utf-8")):
        for child in token.children or []:
            if child.type == kind:
                found.append(str(child.attrGet("href" if kind == "link_open" else "src")))
    return found


def is_relative(target: str) -> bool:
    return not re.match(r"^(?:[a-z][a-z0-9+.-]*:|/)", target, re.IGNORECASE)


def anchors(path: Path) -> frozenset[str]:
    """The ids of a page's headings, as GitHub and the service give them."""
    return render_markdown(path.read_text(encoding="utf-8")).anchors


def resolve(source: Path, target: str) -> tuple[Path, str]:
    """The file and the anchor a relative link of `source` points at."""
    path, _, anchor = target.partition("#")
    return (source.parent / path).resolve() if path else source, anchor


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.env_name)
def test_every_setting_is_documented_with_its_default(setting):
    rows = [line for line in SERVICE.splitlines() if line.startswith(f"| `{setting.env_name}`")]
    assert rows, f"{setting.env_name} is not in docs/running-a-service.md's configuration table"
    assert f"`{setting.default}`" in rows[0], f"{setting.env_name}: default not documented"


def test_readme_gives_the_two_commands():
    assert "./playground serve" in README
    assert "./playground test" in README


def test_the_readme_is_a_front_door():
    # It had grown to 2,162 lines; the reference lives in docs/ now.
    lines = len(README.splitlines())
    assert lines <= README_LINES, f"README.md has {lines} lines; move reference to docs/"


@pytest.mark.parametrize("path", MARKDOWN, ids=relative)
def test_every_image_shown_is_in_the_repository(path):
    for image in targets(path, "image"):
        assert is_relative(image), f"{relative(path)} shows {image} from elsewhere"
        assert (path.parent / image).is_file(), f"{relative(path)} shows {image}: missing"


def test_the_readme_shows_the_page():
    assert targets(REPO / "README.md", "image"), "the README shows a screenshot of the page"


def test_the_docker_section_names_the_images_the_dockerfile_starts_from():
    # It said `python:3.11-slim` where the Dockerfile pins `python:3.11.11-slim-bookworm`.
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    # Three stages on two base images (the Go worker builds on the node stage's base).
    bases = set(re.findall(r"^FROM\s+(\S+)", dockerfile, re.MULTILINE))
    assert len(bases) == 2, bases
    section = SERVICE.split("\n## Docker", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`((?:python|node):[^`]+)`", section))
    assert named == bases


@pytest.mark.parametrize("path", MARKDOWN, ids=relative)
def test_every_relative_link_lands_on_a_file_and_heading(path):
    broken = []
    for target in filter(is_relative, targets(path, "link_open")):
        file, anchor = resolve(path, target)
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
            broken.append(f"{target}: no heading #{anchor} there")
    assert broken == [], f"{relative(path)}: {broken}"


@pytest.mark.parametrize("path", sorted(DOCS.rglob("*.md")), ids=relative)
def test_the_pages_link_only_to_pages_the_service_serves(path):
    # The service serves docs/*.md at /docs/: a link out of docs/, or to a file that is
    # no page, would work on GitHub and break on the running service.
    for target in filter(is_relative, targets(path, "link_open")):
        file, _ = resolve(path, target)
        assert DOCS in file.parents and file.suffix == ".md", f"{relative(path)}: {target}"


def test_every_page_is_reached_from_the_readme():
    reached, todo = set(), [REPO / "README.md"]
    while todo:
        path = todo.pop()
        for target in filter(is_relative, targets(path, "link_open")):
            file, _ = resolve(path, target)
            if file.suffix == ".md" and file not in reached:
                reached.add(file)
                todo.append(file)
    assert {relative(p) for p in DOCS.rglob("*.md")} <= {relative(p) for p in reached}


@pytest.mark.parametrize("engine", ENGINES.values(), ids=lambda engine: engine.info.id)
def test_every_engine_has_a_page_that_opens_with_the_release_it_follows(engine):
    page = DOCS / "engines" / f"{engine.info.id}.md"
    assert page.is_file(), f"docs/engines/{engine.info.id}.md is missing"
    opening = page.read_text(encoding="utf-8").split("\n\n", 2)[1]
    assert engine.info.version.split()[0] in opening, (
        f"its first paragraph names {engine.info.version}"
    )
    assert "**Modelled**" in page.read_text(encoding="utf-8")
    assert "**Not modelled**" in page.read_text(encoding="utf-8")
    index = (DOCS / "engines" / "README.md").read_text(encoding="utf-8")
    row = next(line for line in index.splitlines() if f"]({engine.info.id}.md)" in line)
    assert engine.info.version.split()[0] in row, f"the engines' table names {engine.info.version}"


def test_the_anchors_are_the_ones_github_gives():
    # Ids GitHub gave these headings of the README, which links to them kept working.
    headings = {
        "### `POST /api/render`": "post-apirender",
        "### `POST /api/sources/gguf?name=FILE`": "post-apisourcesggufnamefile",
        "### `GET /api/library`, `GET /api/library/<name>`": "get-apilibrary-get-apilibraryname",
        "## Storage, quotas and rate limits": "storage-quotas-and-rate-limits",
        "### edge-llm: TensorRT Edge-LLM, as it loads and renders": (
            "edge-llm-tensorrt-edge-llm-as-it-loads-and-renders"
        ),
        "### transformers.js: @huggingface/jinja": "transformersjs-huggingfacejinja",
    }
    for heading, anchor in headings.items():
        assert render_markdown(heading).anchors == {anchor}, heading
    assert render_markdown("## Docker\n\n## Docker").anchors == {"docker", "docker-1"}


# ------------------------------------------------------------------ the page's links

#: `docs_link('page', 'anchor')` in a template, or `"/docs/page#anchor"` anywhere.
DOCS_LINK = re.compile(r"docs_link\(\s*(?:'([^']*)'(?:\s*,\s*'([^']*)')?)?\s*\)")
DOCS_URL = re.compile(r"""["'`]/docs/([\w./-]*)(?:#([\w-]+))?["'`]""")


def page_files() -> list[Path]:
    """The running page's templates and scripts, and the app's own Python."""
    scripts = [p for p in (REPO / "static").rglob("*.js") if "vendor" not in p.parts]
    return [
        *sorted((REPO / "app" / "templates").glob("*.html")),
        *sorted(scripts),
        *sorted((REPO / "app").rglob("*.py")),
    ]


def links_from_the_page() -> list[tuple[str, str, str]]:
    """(file, address under /docs/, anchor) for every docs link the page can show."""
    found = []
    for path in page_files():
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".py":  # strings only: docstrings may name any path
            strings = [n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant)]
            text = "\n".join(f'"{s}"' for s in strings if isinstance(s, str))
        for match in [*DOCS_LINK.finditer(text), *DOCS_URL.finditer(text)]:
            found.append((relative(path), match[1] or "", match[2] or ""))
    return found


def test_the_page_links_to_the_docs():
    linked = set(links_from_the_page())
    assert ("app/templates/page.html", "", "") in linked, "the header links to the index"
    counted = ("app/templates/_tokens.html", "using-the-page", "tokens-per-message")
    assert counted in linked, "the Tokens view says where its count is explained"


def test_every_page_the_running_page_links_to_exists():
    broken = []
    for where, address, anchor in links_from_the_page():
        file = DOCS / PurePosixPath(page_name(address))
        if not file.is_file():
            broken.append(f"{where}: /docs/{address} has no page")
        elif anchor and anchor not in anchors(file):
            broken.append(f"{where}: /docs/{address} has no heading #{anchor}")
    assert broken == []
