"""Layers run one way: the core never imports the web, and workers never load Flask.

Read from the source with `ast` (no import needed), plus fresh interpreters for what a
worker process actually loads when it imports its modules.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "app"

#: Third-party packages that belong to the web process only.
WEB_ONLY = ("flask", "werkzeug", "prometheus_client", "gunicorn")
#: Native libraries a sandbox (template) worker has no use for.
SOURCE_ONLY = ("tokenizers", "gguf")


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> Iterator[str]:
    """Every module `path` imports, anywhere in the file (lazy imports included)."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path.parent)
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            # `from app import observability` imports the module app.observability.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def _offences(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(REPO)} imports {name}"
        for path in paths
        for name in sorted(set(_imports(path)))
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]


def _below_web() -> list[Path]:
    return [path for path in _modules(APP) if APP / "web" not in path.parents]


def test_nothing_below_web_imports_flask_or_the_web_layer() -> None:
    assert _below_web(), "no modules found"
    assert _offences(_below_web(), (*WEB_ONLY, "app.web")) == []


def test_analysis_does_not_import_the_pipeline() -> None:
    assert _offences(_modules(APP / "analysis"), ("app.pipeline", "app.shares")) == []


def test_the_core_does_not_import_the_pipeline_or_shares() -> None:
    core = [APP / name for name in ("pool", "render", "sources", "tokens", "storage")]
    paths = [path for folder in core for path in _modules(folder)]
    assert _offences(paths, ("app.pipeline", "app.shares")) == []


def _package_graph() -> dict[str, set[str]]:
    """Which top-level parts of `app` (packages and modules) each one imports."""
    graph: dict[str, set[str]] = {}
    for path in _modules(APP):
        part = path.relative_to(APP).parts[0].removesuffix(".py")
        if part == "__init__":
            continue  # the package root: a docstring (see the import tests below)
        used = graph.setdefault(part, set())
        for name in _imports(path):
            pieces = name.split(".")
            if pieces[0] == "app" and len(pieces) > 1 and pieces[1] != part:
                used.add(pieces[1])
    return graph


def _layout_layers() -> dict[str, int]:
    """The line of the Layout picture (docs/developing.md) on which each part of `app` is
    named."""
    layout = (REPO / "docs" / "developing.md").read_text().split("## Layout", 1)[1]
    picture = layout.split("```", 2)[1]
    lines: dict[str, int] = {}
    for number, line in enumerate(picture.splitlines()):
        for name in re.findall(r"\bapp/(\w+)", line):
            lines.setdefault(name, number)
    return lines


def test_each_part_of_app_imports_only_parts_below_it_in_the_layout() -> None:
    graph, lines = _package_graph(), _layout_layers()
    assert graph.keys() <= lines.keys(), f"not in the Layout picture: {graph.keys() - lines.keys()}"
    upward = [f"{a} -> {b}" for a, used in graph.items() for b in used if lines[b] <= lines[a]]
    assert upward == []


def test_render_does_not_import_analysis() -> None:
    assert _offences(_modules(APP / "render"), ("app.analysis",)) == []


#: Private names a module imports from another one, by importing file and name, with
#: why: each is a helper that module's package shares inside itself.
PRIVATE_IMPORTS = {
    ("app/render/engines/vllm/answers/tool_granite.py", "_name_and_args"): (
        "vLLM's granite tool parser reads a call as its engine reader does, inside the "
        "vllm answers package"
    ),
}


def _private_names(source: str) -> list[str]:
    """The private names (`_name`, not `__name__`) that `from ... import` lines take."""
    return [
        alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if re.fullmatch(r"_[^_]\w*", alias.name)
    ]


def test_the_private_import_finder_sees_one() -> None:
    source = "from __future__ import annotations\nfrom app.web.outputs import _side, pipeline"
    assert _private_names(source) == ["_side"]


def test_no_module_imports_another_ones_private_names() -> None:
    # The pipeline binds state and source in one public place (`Pipeline.bind`); the
    # web layer once imported a private `_state_with_source` from another blueprint.
    found = {
        (str(path.relative_to(REPO)), name)
        for path in _modules(APP)
        for name in _private_names(path.read_text())
    }
    assert found <= PRIVATE_IMPORTS.keys()


def _loaded_after_import(module: str) -> set[str]:
    """Top-level packages in sys.modules after importing `module` in a fresh interpreter."""
    script = f"import sys, {module}; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return {name.partition(".")[0] for name in done.stdout.split()}


@pytest.mark.parametrize("module", ["app", "app.pool", "app.render.pool"])
def test_a_sandbox_worker_loads_no_web_and_no_source_libraries(module: str) -> None:
    loaded = _loaded_after_import(module)
    assert loaded.isdisjoint(WEB_ONLY + SOURCE_ONLY), sorted(loaded & {*WEB_ONLY, *SOURCE_ONLY})


def test_a_source_worker_loads_no_web_libraries() -> None:
    loaded = _loaded_after_import("app.sources.worker")
    assert loaded.isdisjoint(WEB_ONLY), sorted(loaded & set(WEB_ONLY))
    assert "tokenizers" in loaded, "the probe no longer sees what the source worker loads"


def test_the_probe_sees_flask_where_it_is_loaded() -> None:
    assert {"flask", "prometheus_client"} <= _loaded_after_import("app.web.observability")


#: A running application whose source workers have started, then asked what its sandbox
#: workers hold. Both kinds of worker fork from multiprocessing's one forkserver, so what
#: one pool preloads there, the other's workers would carry too.
RUNNING_APP = """
import io, json, sys, tempfile
from app.web.factory import create_app
from tests.support.modules import loaded_packages
app = create_app({"TESTING": True, "DATA_DIR": tempfile.mkdtemp()})
config = {"chat_template": "{{ messages[0].content }}", "bos_token": "<s>"}
files = {"f": (io.BytesIO(json.dumps(config).encode()), "tokenizer_config.json")}
answer = app.test_client().post("/api/sources/hf", data=files)
assert answer.status_code == 200, answer.get_data()
print(" ".join(app.extensions["sandbox_pool"].run(loaded_packages)))
app.extensions["sandbox_pool"].close()
app.extensions["source_workers"].close()
"""


def test_sandbox_workers_of_a_running_app_load_no_source_libraries() -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUNNING_APP],
        cwd=REPO, capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    loaded = set(done.stdout.split())
    assert "jinja2" in loaded, "the probe no longer sees what the sandbox worker loads"
    assert loaded.isdisjoint(WEB_ONLY + SOURCE_ONLY), sorted(loaded & {*WEB_ONLY, *SOURCE_ONLY})


ENGINES_PACKAGE = APP / "render" / "engines"


def _outside_engines() -> list[Path]:
    return [path for path in _modules(APP) if ENGINES_PACKAGE not in path.parents]


#: Where an engine's name appears outside its package for a reason that is no engine's,
#: by file and name as the pattern finds it (lower case), with that reason.
NOT_ABOUT_AN_ENGINE = {
    ("app/sources/gguf.py", "llama.cpp"): (
        "GGUF is llama.cpp's file format: a version 1 file is converted again with its "
        "converter, which renders nothing"
    ),
    ("app/tokens/gguf_vocab.py", "llama.cpp"): (
        "the vocabulary is llama.cpp's tokenizer (app/tokens), which refuses duplicate "
        "token texts when it loads a model; no render engine"
    ),
    **{
        (where, "ollama"): (
            "a source in Ollama's own formats: a Modelfile, or a model of Ollama's registry "
            "(`/api/sources/ollama`, source kinds `modelfile` and `ollama`), as GGUF is "
            "llama.cpp's; no render engine"
        )
        for where in (
            "app/analysis/model_files.py",
            "app/config.py",
            "app/templates/_ollama_facts.html",
            "app/templates/_ollama_sources.html",
            "app/templates/_source.html",
            "app/templates/_template_panel.html",
            "app/templates/_terms.html",
            "static/playground.css",
            "app/templates/page.html",
            "app/sources/modelfile.py",
            "app/sources/ollama_registry.py",
            "app/sources/ollama_source.py",
            "app/sources/remote_sources.py",
            "app/sources/source.py",
            "app/sources/store.py",
            "app/sources/worker.py",
            "app/state/playground.py",
            "app/web/admission.py",
            "app/web/quota.py",
            "app/web/remote.py",
            "static/ollama_sources.js",
            "static/sources.js",
        )
    },
    ("app/sources/library.py", "llama_cpp"): (
        "`llama_cpp_builtin`, a key of the library's manifest and of GET /api/library's "
        "documented answer: data about a library template, kept as documented"
    ),
}


def _engine_names() -> set[str]:
    """Every name an engine goes by, from the registry: its id, its name, what its name
    calls it in brackets when that is one word ("llama.cpp (llama-server)"), the label
    and program its sentences use, and the program of every command line that it, or a
    runtime the playground has no engine for, writes."""
    from app.render.command_line import CommandContext
    from app.render.engines import ENGINES, command_writers

    names: set[str] = set()
    for engine in ENGINES.values():
        info = engine.info
        names |= {info.id, info.name, info.label, info.program}
        names |= set(re.findall(r"\(([^\s(),]+)\)", info.name))
    context = CommandContext(template="{{ messages }}", kwargs={})
    for writer in command_writers():
        names |= {line.program for line in writer.lines(context)}
    return names


def _names_pattern(names: set[str]) -> re.Pattern[str]:
    """Any of `names` in any case, its separators written as any separator or none
    ("llama.cpp", "llama_cpp", "LlamaCpp"), not inside a longer word."""
    spelled = [
        r"[._\-\s/]?".join(re.escape(part) for part in re.split(r"[._\-\s/@]+", name) if part)
        for name in sorted(names, key=len, reverse=True)
    ]
    return re.compile(rf"(?<![a-z0-9])(?:{'|'.join(spelled)})(?![a-z0-9])", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes in `tree`: documentation, read like comments."""
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }  # fmt: skip


def _python_words(path: Path) -> Iterator[tuple[int, str]]:
    """Every string (f-string parts too) but docstrings, and every name the code defines
    or reads (camel case cut into words), with its line."""
    tree = ast.parse(path.read_text(), str(path))
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                yield node.lineno, node.value
            continue
        name = {
            ast.Name: "id", ast.Attribute: "attr", ast.FunctionDef: "name",
            ast.AsyncFunctionDef: "name", ast.ClassDef: "name", ast.arg: "arg",
            ast.keyword: "arg", ast.alias: "asname",
        }.get(type(node))  # fmt: skip
        if name and (word := getattr(node, name)):
            yield node.lineno, re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", word)


#: Comments of the page's templates ({# #}, <!-- -->) and of its scripts and styles.
_MARKUP_COMMENTS = re.compile(r"\{#.*?#\}|<!--.*?-->", re.DOTALL)
_SCRIPT_COMMENTS = re.compile(r"/\*.*?\*/|(?<![:\\\"'])//[^\n]*", re.DOTALL)


def _page_words(path: Path) -> Iterator[tuple[int, str]]:
    """The page's own templates, scripts and styles, without their comments, by line."""
    comments = _MARKUP_COMMENTS if path.suffix == ".html" else _SCRIPT_COMMENTS
    text = comments.sub(lambda found: "\n" * found.group().count("\n"), path.read_text())
    yield from enumerate(text.splitlines(), start=1)


def _page_files() -> list[Path]:
    """The page's templates and its own scripts and styles (not the bundled vendor output)."""
    static = [
        path for path in (REPO / "static").rglob("*")
        if path.suffix in (".js", ".mjs", ".css") and "vendor" not in path.parts
    ]  # fmt: skip
    return sorted((APP / "templates").glob("*.html")) + sorted(static)


def _named_outside_engines() -> list[str]:
    pattern = _names_pattern(_engine_names())
    found = []
    words = [(path, _python_words(path)) for path in _outside_engines()]
    words += [(path, _page_words(path)) for path in _page_files()]
    for path, lines in words:
        where = str(path.relative_to(REPO))
        for line, text in lines:
            for match in pattern.finditer(text):
                if (where, match.group().lower()) not in NOT_ABOUT_AN_ENGINE:
                    found.append(f"{where}:{line} names {match.group()!r}: {text[:80]!r}")
    return found


def test_the_engine_names_come_from_the_registry() -> None:
    names = {name.lower() for name in _engine_names()}
    assert {"transformers", "llama.cpp", "llama-server", "vllm", "tgi", "mistral.rs"} <= names
    assert {"text-generation-inference", "tensorrt edge-llm", "transformers.js"} <= names
    pattern = _names_pattern(_engine_names())
    for spelled in ("LlamaCpp_engine", "llama_cpp_rewrites", "What vLLM does", "TGI's"):
        assert pattern.search(spelled), spelled
    assert not pattern.search("transformersx") and not pattern.search("from the server")


def test_only_the_engine_packages_name_an_engine() -> None:
    # Everything about an engine is its own: code, templates and scripts elsewhere ask
    # the registry (`app.render.engines`: the reference, stating and content-format
    # engines, each engine's labels, command lines and notes) and never spell a name.
    assert _named_outside_engines() == []
    inside = {path.stem for path in ENGINES_PACKAGE.iterdir() if path.name != "__init__.py"}
    imports = [
        f"{path.relative_to(REPO)} imports {name}"
        for path in _outside_engines()
        for name in sorted(set(_imports(path)))
        if name.startswith("app.render.engines.") and name.split(".")[3] in inside
    ]
    assert imports == []


def test_every_folder_of_python_modules_is_a_package() -> None:
    # setuptools' find_packages skips a folder without __init__.py: the Docker image
    # (`pip install .`) would lack its modules while the editable checkout imports them.
    folders = {path.parent for path in APP.rglob("*.py")}
    assert sorted(str(f) for f in folders if not (f / "__init__.py").is_file()) == []


def _modules_imported(path: Path, paths: dict[str, Path]) -> Iterator[str]:
    """The modules of `app` that `path` imports, at module level, inside functions and
    under `TYPE_CHECKING` alike: `from app.render import core` is app.render.core,
    `from .types import X` is the module `types`, `from . import X` the package when X
    is no module."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path.parent)
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in paths else base
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in paths:  # `import app.x.y` of a name: its module
                name = name.rpartition(".")[0]
            if name:
                yield name


def _import_graph() -> dict[str, set[str]]:
    """Which modules of `app` each module of `app` imports (see `_modules_imported`)."""
    paths = {_module_name(path): path for path in _modules(APP)}
    return {name: set(_modules_imported(path, paths)) - {name} for name, path in paths.items()}


def _circles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    with an explicit stack: no recursion limit to meet), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[tuple[str, ...]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, edges = work[-1]
            for used in edges:
                if used not in index:
                    index[used] = low[used] = len(index)
                    stack.append(used)
                    work.append((used, iter(sorted(graph[used]))))
                    break
                if used in stack:
                    low[node] = min(low[node], index[used])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = stack[stack.index(node) :]
                    del stack[stack.index(node) :]
                    if len(component) > 1:
                        found.append(tuple(sorted(component)))
    return sorted(found)


def test_the_circle_finder_finds_a_circle_and_only_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e", "d"}}
    assert _circles(graph) == [("a", "b", "c")]


def test_no_import_circle_inside_app() -> None:
    circles = set(_circles(_import_graph()))
    found = "\n".join(" <-> ".join(circle) for circle in sorted(circles))
    assert not found, f"import circles in app/ (each a strongly connected component):\n{found}"
