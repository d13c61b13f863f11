"""`ollama run hf.co/USER/REPO`: the TEMPLATE the Hub serves for a GGUF's chat template.

The engine runs `@huggingface/ollama-utils`'s `convertGGUFTemplateToOllama` in its
sandboxed Node child; these tests call the same package directly with Node, outside the
engine, for every template llama.cpp collects, and compare what the engine reports.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from app.problems import TemplateProblem
from app.render.core import render_with
from app.render.engines.ollama import OllamaEngine
from app.render.engines.ollama.gotemplate.build import build
from app.render.engines.ollama.hub.mapper import CONVERTED, CUSTOM, hub_mapping
from app.render.engines.ollama.hub.route import VERSION
from app.render.limits import RenderLimits
from app.render.render_request import RenderRequest
from tests.support import REPO
from tests.support.shared_data import require_shared, template_files

require_shared()

#: The GGUF tokens given with every template: the package's conversion writes them.
TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}
CHAT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": "Hi there."},
    {"role": "user", "content": "Tell me a joke."},
]
#: The package called as the Hub calls it, one answer per input (null: no mapping).
DIRECT = """
const { convertGGUFTemplateToOllama } = require("@huggingface/ollama-utils");
const inputs = JSON.parse(require("fs").readFileSync(0, "utf8"));
const answers = inputs.map((gguf) => {
  try { return { entry: convertGGUFTemplateToOllama(gguf) ?? null }; }
  catch (error) { return { error: String(error.message) }; }
});
process.stdout.write(JSON.stringify(answers));
"""


@pytest.fixture(scope="module", autouse=True)
def worker() -> None:
    """The Go worker built from its sources, as ./playground builds it."""
    build()


def package_answers(templates: list[str]) -> list[dict]:
    """What the real package answers for each chat template, with `TOKENS`."""
    node = shutil.which("node")
    assert node, "Node.js is missing: the Hub's mapping runs in Node"
    inputs = [{"chat_template": template, **TOKENS} for template in templates]
    done = subprocess.run(
        [node, "-e", DIRECT], input=json.dumps(inputs), cwd=REPO,
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def engine_hub(template: str) -> dict:
    """What the engine reports for `ollama run hf.co/...` with this chat template."""
    request = RenderRequest(
        template=template, messages=CHAT, engine="ollama", special_tokens=TOKENS
    )
    return render_with(OllamaEngine(), request).details["ollama"]["hub"]


def expected(answer: dict) -> dict:
    """The package's answer in the engine's terms."""
    entry = answer["entry"]
    if entry is None:
        return {"model": None, "template": None, "stop": [], "params": {}}
    params = dict(entry["ollama"].get("params") or {})
    stop = params.pop("stop", None) or []
    return {"model": entry["model"], "template": entry["ollama"]["template"], "stop": stop,
            "params": params}  # fmt: skip


def test_the_engine_reports_the_packages_own_mapping_for_every_collected_template():
    files = template_files()
    answers = package_answers([path.read_text("utf-8") for path in files])
    kinds: dict[str, int] = {}
    for path, answer in zip(files, answers, strict=True):
        assert "error" not in answer, (path.name, answer)
        hub = engine_hub(path.read_text("utf-8"))
        reported = {key: hub[key] for key in ("model", "template", "stop", "params")}
        assert reported == expected(answer), path.name
        model = reported["model"]
        kind = "none" if model is None else model if model in (CUSTOM, CONVERTED) else "table"
        kinds[kind] = kinds.get(kind, 0) + 1
    # All 68 compared; every way the package maps occurs among them.
    assert len(files) == 68
    assert set(kinds) == {"table", CUSTOM, CONVERTED, "none"}, kinds


def test_the_hub_maps_llama_31_to_a_template_with_tools_that_ollama_renders():
    # `ollama create` adopts llama3-instruct, without tools; the Hub serves Ollama's own
    # llama3.1 library template, which has them, so Ollama renders it.
    template = (template_files()[0].parent / "meta-llama-Llama-3.1-8B-Instruct.jinja").read_text()
    [answer] = package_answers([template])
    hub = engine_hub(template)
    assert hub["model"] == answer["entry"]["model"] == "library/llama3.1:8b"
    assert hub["path"] == "go-template"
    assert "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>" in hub["prompt"]
    assert hub["prompt"].endswith("<|start_header_id|>assistant<|end_header_id|>\n\n")


def test_a_template_the_hub_cannot_map_goes_to_llama_server():
    # @huggingface/jinja cannot parse Qwen3.5's template: the package maps it to nothing,
    # the Hub serves no TEMPLATE, and llama-server renders the GGUF's own.
    template = (template_files()[0].parent / "Qwen3.5-4B.jinja").read_text()
    assert package_answers([template])[0]["entry"] is None
    request = RenderRequest(
        template=template, messages=CHAT, engine="ollama", special_tokens=TOKENS
    )
    rendered = render_with(OllamaEngine(), request)
    hub = rendered.details["ollama"]["hub"]
    assert (hub["model"], hub["template"], hub["path"]) == (None, None, "llama-server")
    assert hub["prompt"] == rendered.prompt and "<|im_start|>user\nHello" in hub["prompt"]
    said = " ".join(rendered.rewrites)
    assert "maps this chat template to no Ollama template" in said
    assert "sends the prompt shown here" in said


def test_the_pinned_version_is_the_one_installed():
    lock = json.loads((REPO / "package-lock.json").read_text())
    installed = json.loads(
        (REPO / "node_modules/@huggingface/ollama-utils/package.json").read_text()
    )
    locked = lock["packages"]["node_modules/@huggingface/ollama-utils"]["version"]
    assert locked == installed["version"] == VERSION


def test_the_mapping_runs_under_the_render_limits_and_the_child_lives_on():
    limits = RenderLimits(cpu_seconds=0.5, output_chars=1000)
    loops = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    with pytest.raises(TemplateProblem) as stopped:
        hub_mapping(loops, None, None, limits)
    assert stopped.value.limit == "cpu_seconds"
    # The package swallows the render's errors; a write past the bound is still the limit's.
    writes = "{% for i in range(1000) %}" + "x" * 100 + "{% endfor %}"
    with pytest.raises(TemplateProblem) as written:
        hub_mapping(writes, None, None, limits)
    assert written.value.limit == "output_chars"
    chatml = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    )
    mapped = hub_mapping(chatml, None, None, limits)
    assert mapped is not None and "<|im_start|>" in mapped.go_template


def test_the_render_answer_and_the_page_show_the_route(client):
    template = (template_files()[0].parent / "meta-llama-Llama-3.1-8B-Instruct.jinja").read_text()
    body = {"template": template, "messages": CHAT, "engine": "ollama",
            "special_tokens": TOKENS}  # fmt: skip
    answer = client.post("/api/render", json=body)
    assert answer.status_code == 200, answer.json
    hub = answer.json["ollama"]["hub"]
    assert hub["model"] == "library/llama3.1:8b" and hub["stop"][-1] == "<|eot_id|>"
    said = [line for line in answer.json["rewrites"] if "hf.co/USER/REPO" in line]
    assert said and "library/llama3.1:8b" in said[0] and "`<|eot_id|>`" in said[0]
    assert any(
        "sends another prompt than the one shown here" in line for line in answer.json["rewrites"]
    )


def test_the_prompt_view_says_the_route_and_its_prompt(client):
    template = (template_files()[0].parent / "meta-llama-Llama-3.1-8B-Instruct.jinja").read_text()
    form = {"template": template, "messages": json.dumps(CHAT), "engine": "ollama"}
    page = client.post("/fragments/output", data=form).get_data(as_text=True)
    rewrites = page[page.index('id="rewrites"') :]
    assert "ollama run hf.co/USER/REPO" in rewrites
    assert "library/llama3.1:8b" in rewrites
    # The Hub's TEMPLATE renders; the page's prompt is the llama-server way's: another one.
    assert "sends another prompt than the one shown here" in rewrites
