"""The command lines of `app.analysis.commands`, run through real shells.

Each command is run with its program (llama-server, llama-cli, curl, vllm, TGI's
text-generation-launcher, mistralrs) replaced by a
printer on PATH that reports the argv and environment it was started with, so a test
sees exactly what the real program would have received. The transformers snippet and
the gguf-new-metadata command run for real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gguf import GGUFReader, GGUFWriter

from app.analysis.commands import build_command_lines, template_facts
from app.problems import TemplateProblem
from app.render.command_line import MAX_ARGUMENT_BYTES
from app.render.core import ModelFiles, RenderRequest
from app.render.engines import model_refusals, render_exactly
from app.render.engines.llamacpp.builtins import BUILTINS, equivalent_builtin
from app.render.limits import RenderLimits
from oracles.transformers.reference import reference_tokenizer

REPO = Path(__file__).resolve().parents[1]
PRINTER = (
    "import json, os, sys\njson.dump({'argv': sys.argv[1:], 'env': dict(os.environ)}, sys.stdout)\n"
)
PRINTED_PROGRAMS = (
    "llama-server", "llama-cli", "curl", "vllm", "text-generation-launcher", "mistralrs"
)  # fmt: skip


def build_commands(template: str, kwargs: dict, model: str | None = None, **given: Any) -> list:
    """The command lines as `/api/command` answers them: `{"engine", "form", "command",
    "files"}` each."""
    return [line.to_json() for line in build_command_lines(template, kwargs, model, **given)]


NASTY = (
    "{{- 'it' + \"'\" + 's' }} \"double\" 'single' '' \"\" \\ \\\\ \\n \\' \\\" "
    "$HOME ${HOME} $(echo EXPANDED) `echo EXPANDED` $((1+1)) !! !$ !-1 !HOME ^x^y "
    "* ? [a] ~ # ; & | < > ( ) { } % \t tab \r\n crlf \r cr \n newline "
    "héllo ✓ 日本語 😀 <｜User｜> \u2028 \x1b[31m"
)
ADVERSARIAL = {
    "nasty": NASTY,
    "leading-dash": "-h",
    "looks-like-a-flag": "--jinja",
    "dash-and-value": "-m x.gguf {{ messages }}",
    "single-quote": "'",
    "empty": "",
    "spaces": "   ",
    "trailing-newlines": "{{ x }}\n\n",
    "multiline-bang": "one !! 'two' !$\n\"three !!\" \\\n$(four)\n",
    "cr-and-trailing-newlines": "a\r\n!! 'b'\n\n",
    "100KB": (NASTY * (100_000 // len(NASTY.encode()) + 1)),
}
KWARGS = {
    "enable_thinking": False,
    "note": 'it\'s $HOME `x` "q" ✓\r\n!!',
    "nested": {"a": [1, 2.5, None, True]},
}
MESSAGES = [
    {"role": "system", "content": "Be terse. $HOME `id` 'q' \"qq\" !!"},
    {"role": "user", "content": "héllo\r\nworld 😀 \u2028 \\n"},
]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in PRINTED_PROGRAMS:
        script = bin_dir / program
        script.write_text(f"#!{sys.executable}\n{PRINTER}")
        script.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    return work


def shell_env(workdir: Path) -> dict[str, str]:
    """A clean environment: printers first on PATH, then the venv (gguf-new-metadata)."""
    path = os.pathsep.join(
        [str(workdir.parent / "bin"), str(Path(sys.executable).parent), os.environ["PATH"]]
    )
    return {"PATH": path, "LC_ALL": "C.UTF-8", "HOME": "/home/EXPANDED", "X": "EXPANDED"}


SHELLS = {
    "bash": ["bash"],
    "sh": ["sh"],
    # An interactive bash with readline and history expansion (`!!`) on, given the
    # command as a terminal pastes it (bracketed paste, the default of bash >= 5.1).
    "pasted-into-bash": ["bash", "--norc", "--noprofile", "-i"],
}
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def run(command: str, workdir: Path, shell: str = "bash") -> dict[str, Any]:
    """Run `command` in `shell`, read from stdin (so no argv size limit applies to it)."""
    if shell == "pasted-into-bash":
        command = PASTE_START + command + PASTE_END
    result = subprocess.run(
        SHELLS[shell],
        input=(command + "\n").encode(),
        cwd=workdir,
        env={**shell_env(workdir), "INPUTRC": "/dev/null"},
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return json.loads(result.stdout)


def entry(entries: list[dict], engine: str, form: str) -> dict:
    found = [e for e in entries if e["engine"] == engine and e["form"] == form]
    assert len(found) == 1, f"{engine}/{form}: {[(e['engine'], e['form']) for e in entries]}"
    return found[0]


def write_files(files: dict[str, str], workdir: Path) -> None:
    for name, content in files.items():
        (workdir / name).write_bytes(content.encode("utf-8"))


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_every_entry_has_the_four_fields() -> None:
    entries = build_commands("{{ x }}", {}, messages=MESSAGES, builtin="chatml")
    assert entries
    for item in entries:
        assert set(item) == {"engine", "form", "command", "files"}
        assert isinstance(item["command"], str) and isinstance(item["files"], dict)


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("program", ["llama-server", "llama-cli"])
@pytest.mark.parametrize("name", ADVERSARIAL)
def test_inline_command_gives_back_the_template_and_kwargs(
    name: str, program: str, shell: str, workdir: Path
) -> None:
    template = ADVERSARIAL[name]
    if name == "100KB":
        assert 100_000 <= len(template.encode()) < MAX_ARGUMENT_BYTES
    command = entry(build_commands(template, KWARGS), program, "inline")["command"]
    argv = run(command, workdir, shell)["argv"]
    assert argv == [
        "-m", "MODEL.gguf", "--jinja", "--chat-template", template,
        "--chat-template-kwargs", compact(KWARGS),
    ]  # fmt: skip
    assert json.loads(argv[-1]) == KWARGS


def test_inline_command_leaves_out_empty_kwargs(workdir: Path) -> None:
    command = entry(build_commands("{{ x }}", {}, "a b.gguf"), "llama-server", "inline")
    argv = run(command["command"], workdir)["argv"]
    assert argv == ["-m", "a b.gguf", "--jinja", "--chat-template", "{{ x }}"]


@pytest.mark.parametrize(
    "template", ["a" * MAX_ARGUMENT_BYTES, "x\0y"], ids=["too-big-for-argv", "nul"]
)
def test_templates_argv_cannot_carry_have_no_inline_form(template: str) -> None:
    entries = build_commands(template, {})
    forms = {(e["engine"], e["form"]) for e in entries}
    assert ("llama-server", "inline") not in forms
    assert ("llama-cli", "inline") not in forms
    assert entry(entries, "llama-server", "file")["files"] == {"template.jinja": template}


@pytest.mark.parametrize("program", ["llama-server", "llama-cli"])
@pytest.mark.parametrize("name", ["nasty", "100KB", "leading-dash"])
def test_file_command_reads_the_template_file(name: str, program: str, workdir: Path) -> None:
    template = ADVERSARIAL[name]
    item = entry(build_commands(template, KWARGS, "it's mine.gguf"), program, "file")
    write_files(item["files"], workdir)
    argv = run(item["command"], workdir)["argv"]
    assert argv[:4] == ["-m", "it's mine.gguf", "--jinja", "--chat-template-file"]
    assert (workdir / argv[4]).read_bytes().decode("utf-8") == template
    assert argv[5:] == ["--chat-template-kwargs", compact(KWARGS)]


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("program", ["llama-server", "llama-cli"])
def test_env_command_sets_the_llama_arg_variables(program: str, shell: str, workdir: Path) -> None:
    template = ADVERSARIAL["nasty"]
    item = entry(build_commands(template, KWARGS, "my 'model'.gguf"), program, "env")
    write_files(item["files"], workdir)
    printed = run(item["command"], workdir, shell)
    env = printed["env"]
    assert printed["argv"] == []
    assert env["LLAMA_ARG_MODEL"] == "my 'model'.gguf"
    assert env["LLAMA_ARG_JINJA"] == "1"
    assert (workdir / env["LLAMA_ARG_CHAT_TEMPLATE_FILE"]).read_bytes().decode() == template
    assert json.loads(env["LLAMA_ARG_CHAT_TEMPLATE_KWARGS"]) == KWARGS
    assert json.loads(env["LLAMA_CHAT_TEMPLATE_KWARGS"]) == KWARGS


def test_env_command_without_kwargs_sets_no_kwargs_variable(workdir: Path) -> None:
    item = entry(build_commands("{{ x }}", {}), "llama-server", "env")
    write_files(item["files"], workdir)
    env = run(item["command"], workdir)["env"]
    assert "LLAMA_ARG_CHAT_TEMPLATE_KWARGS" not in env
    assert "LLAMA_CHAT_TEMPLATE_KWARGS" not in env


@pytest.mark.parametrize("program", ["llama-server", "llama-cli"])
def test_builtin_command_names_the_format_with_jinja_off(program: str, workdir: Path) -> None:
    entries = build_commands("{{ x }}", {}, builtin="llama3")
    argv = run(entry(entries, program, "builtin")["command"], workdir)["argv"]
    assert argv == ["-m", "MODEL.gguf", "--no-jinja", "--chat-template", "llama3"]
    assert not any(e["form"] == "builtin" for e in build_commands("{{ x }}", {}))


@pytest.mark.parametrize("add_generation_prompt", [True, False])
def test_curl_sends_the_conversation_to_apply_template(
    add_generation_prompt: bool, workdir: Path
) -> None:
    entries = build_commands(
        "{{ x }}", KWARGS, messages=MESSAGES, tools=TOOLS,
        add_generation_prompt=add_generation_prompt,
    )  # fmt: skip
    item = entry(entries, "llama-server", "curl")
    assert item["files"] == {}
    argv = run(item["command"], workdir, "pasted-into-bash")["argv"]
    assert "http://localhost:8080/apply-template" in argv
    assert argv[argv.index("-H") + 1] == "Content-Type: application/json"
    body = json.loads(argv[argv.index("--data-binary") + 1])
    assert body["messages"] == MESSAGES
    assert body["tools"] == TOOLS
    assert body["chat_template_kwargs"] == KWARGS
    assert body.get("add_generation_prompt", True) is add_generation_prompt


def test_curl_without_tools_or_kwargs_sends_only_messages(workdir: Path) -> None:
    item = entry(
        build_commands("t", {}, messages=MESSAGES, server_url="http://h:1/"), "llama-server", "curl"
    )
    argv = run(item["command"], workdir)["argv"]
    assert "http://h:1/apply-template" in argv
    assert json.loads(argv[argv.index("--data-binary") + 1]) == {"messages": MESSAGES}


def test_curl_reads_a_conversation_too_big_for_argv_from_a_file(workdir: Path) -> None:
    messages = [{"role": "user", "content": "x" * MAX_ARGUMENT_BYTES}]
    item = entry(build_commands("t", {}, messages=messages), "llama-server", "curl")
    write_files(item["files"], workdir)
    argv = run(item["command"], workdir)["argv"]
    data = argv[argv.index("--data-binary") + 1]
    assert data.startswith("@")
    assert json.loads((workdir / data[1:]).read_text())["messages"] == messages


@pytest.mark.parametrize("content_format", ["string", "openai"])
def test_vllm_serves_the_template_file(content_format: str, workdir: Path) -> None:
    template = ADVERSARIAL["nasty"]
    entries = build_commands(template, {}, "Org/Model", content_format=content_format)
    item = entry(entries, "vllm", "serve")
    write_files(item["files"], workdir)
    argv = run(item["command"], workdir)["argv"]
    expected = ["serve", "Org/Model", "--chat-template", "template.jinja"]
    assert argv == [*expected, "--chat-template-content-format", content_format]
    assert (workdir / "template.jinja").read_bytes().decode() == template


def test_tgi_reads_the_template_from_a_tokenizer_config(workdir: Path) -> None:
    template = ADVERSARIAL["nasty"]
    tokens = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>"}
    entries = build_commands(template, {}, "Org/Model", special_tokens=tokens)
    item = entry(entries, "tgi", "launcher")
    write_files(item["files"], workdir)
    argv = run(item["command"], workdir)["argv"]
    assert argv == ["--model-id", "Org/Model", "--tokenizer-config-path", "tokenizer_config.json"]
    config = json.loads((workdir / "tokenizer_config.json").read_bytes().decode())
    assert config == {"chat_template": template, "bos_token": "<s>", "eos_token": "</s>"}


def test_mistral_rs_serves_the_template_file(workdir: Path) -> None:
    template = ADVERSARIAL["nasty"]
    item = entry(build_commands(template, {}, "Org/Model"), "mistral.rs", "serve")
    write_files(item["files"], workdir)
    argv = run(item["command"], workdir)["argv"]
    assert argv == ["serve", "--jinja-explicit", "template.jinja", "-m", "Org/Model"]
    assert (workdir / "template.jinja").read_bytes().decode() == template


#: A stand-in for Edge-LLM's programs that logs its name and argv, one JSON line each.
LOGGER = (
    "import json, os, sys\nwith open(os.environ['LOG'], 'a') as log:\n"
    "    log.write(json.dumps([os.path.basename(sys.argv[0]), sys.argv[1:]]) + '\\n')\n"
)


def run_edge_llm(command: str, workdir: Path) -> list[list[Any]]:
    """Run an Edge-LLM command line in bash, in a folder with the model folders it names
    and loggers for its programs (on PATH, and llm_build where a source build puts it);
    the programs it ran, in order."""
    for folder in ("CHECKPOINT_DIR", "ENGINE_DIR", "build/examples/llm"):
        (workdir / folder).mkdir(parents=True, exist_ok=True)
    bin_dir = workdir.parent / "bin"
    for script in (bin_dir / "tensorrt-edgellm-export", bin_dir / "tensorrt-edgellm-serve",
                   bin_dir / "hf", workdir / "build/examples/llm/llm_build"):  # fmt: skip
        script.write_text(f"#!{sys.executable}\n{LOGGER}")
        script.chmod(0o755)
    log = workdir.parent / "programs.log"
    env = {**shell_env(workdir), "LOG": str(log)}
    done = subprocess.run(["bash"], input=command.encode(), cwd=workdir, env=env, timeout=60)
    assert done.returncode == 0
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_edge_llm_exports_with_the_template_as_the_checkpoints_chat_template(workdir: Path):
    """Edge-LLM's export copies the checkpoint's chat_template.jinja to ONNX_DIR/llm and
    its builder copies it beside the engine (docs/engines/edge-llm.md): the template goes there
    byte for byte, then the export and the build run as Edge-LLM's Quick Start runs them."""
    template = ADVERSARIAL["nasty"]
    item = entry(build_commands(template, {}), "edge-llm", "export")
    write_files(item["files"], workdir)
    programs = run_edge_llm(item["command"], workdir)
    assert (workdir / "CHECKPOINT_DIR/chat_template.jinja").read_bytes().decode() == template
    assert programs == [
        ["tensorrt-edgellm-export", ["CHECKPOINT_DIR", "ONNX_DIR"]],
        ["llm_build", ["--onnxDir", "ONNX_DIR/llm", "--engineDir", "ENGINE_DIR"]],
    ]


def test_edge_llm_downloads_the_model_it_is_given_first(workdir: Path):
    item = entry(build_commands("{{ x }}", {}, "Org/Model"), "edge-llm", "serve")
    write_files(item["files"], workdir)
    assert run_edge_llm(item["command"], workdir) == [
        ["hf", ["download", "Org/Model", "--local-dir", "CHECKPOINT_DIR"]],
        # Its engine cache is keyed without chat_template.jinja: cleared to take this one;
        # it serves the tools the playground's requests offer only when told to; and it
        # reads answers with the parsers the Response view reads with (its default: auto).
        [
            "tensorrt-edgellm-serve",
            [
                "CHECKPOINT_DIR",
                "--enable-auto-tool-choice",
                "--clear-engine-cache",
                "--tool-call-parser",
                "auto",
                "--reasoning-parser",
                "auto",
            ],
        ],
    ]
    assert (workdir / "CHECKPOINT_DIR/chat_template.jinja").read_text() == "{{ x }}"


def test_edge_llm_takes_a_new_template_in_a_built_engine_folder(workdir: Path):
    template = ADVERSARIAL["multiline-bang"]
    item = entry(build_commands(template, {}), "edge-llm", "engine folder")
    write_files(item["files"], workdir)
    assert run_edge_llm(item["command"], workdir) == []
    assert (workdir / "ENGINE_DIR/chat_template.jinja").read_bytes().decode() == template


def test_edge_llm_lines_warn_first_when_it_would_not_load_the_template(workdir: Path):
    template = "{% filter upper %}hi{% endfilter %}"
    facts = template_facts(template, {}, {}, None, RenderLimits())
    refusal = facts["edge_llm_load_error"]["message"]
    assert refusal.startswith("Edge-LLM would not load this model: [inja.exception.parser_error]")
    for item in [e for e in build_commands(template, {}, **facts) if e["engine"] == "edge-llm"]:
        assert item["command"].splitlines()[0] == f"# Warning: {refusal}", item["form"]
        write_files(item["files"], workdir)
        run_edge_llm(item["command"], workdir)  # the warning is a comment to the shell


def test_edge_llm_lines_warn_of_a_model_with_named_templates():
    """Edge-LLM's loader looks for named templates before it parses the template: the
    model's refusal is the warning, even for a template that would load."""
    refusals = model_refusals(ModelFiles(("tool_use", "rag")))
    assert list(refusals) == ["edge-llm"]
    assert "named provider chat templates are unsupported" in refusals["edge-llm"]
    assert "tool_use, rag" in refusals["edge-llm"]
    facts = template_facts("{{ x }}", {}, {}, None, RenderLimits())
    entries = build_commands("{{ x }}", {}, model_refusals=refusals, **facts)
    item = entry(entries, "edge-llm", "export")
    assert item["command"].splitlines()[0] == f"# Warning: {refusals['edge-llm']}"
    assert model_refusals(ModelFiles()) == {}
    # Beside a chat_template.json, Edge-LLM's export takes that file's template first.
    assert model_refusals(ModelFiles(("tool_use",), json_template=True)) == {}


def test_llama_cpp_and_hf_engines_get_the_right_kind_of_model_name() -> None:
    for model, gguf, hf in [(None, "MODEL.gguf", "ORG/MODEL"), ("m.gguf", "m.gguf", "ORG/MODEL"),
                            ("Org/M", "MODEL.gguf", "Org/M")]:  # fmt: skip
        entries = build_commands("t", {}, model)
        assert f"-m {gguf} " in entry(entries, "llama-server", "file")["command"]
        assert entry(entries, "vllm", "serve")["command"].startswith(f"vllm serve {hf} ")
        assert repr(hf) in entry(entries, "transformers", "python")["command"]


@pytest.mark.parametrize(
    "kwargs", [KWARGS, {"weird key-with.dots": 1}, {"limit": float("nan"), "big": float("inf")}]
)
def test_transformers_snippet_is_valid_python(kwargs: dict) -> None:
    source = entry(
        build_commands("t", kwargs, messages=MESSAGES, tools=TOOLS), "transformers", "python"
    )["command"]
    code = compile(source, "<snippet>", "exec")
    assert "apply_chat_template" in code.co_names
    assert ("import json" in source) is ("nan" in repr(kwargs))


def test_transformers_snippet_renders_what_the_playground_renders(workdir: Path) -> None:
    special = {"bos_token": "<s>", "eos_token": "</s>"}
    tokenizer_dir = workdir.parent / "tokenizer"
    reference_tokenizer(special).save_pretrained(tokenizer_dir)
    template = (
        "{{ bos_token }}{% for m in messages %}[{{ m.role }}]\r\n{{ m.content }}\n{% endfor %}"
        "{{ tools | tojson }}|{{ note }}|{{ nested.a }}{% if add_generation_prompt %}>>{% endif %}"
    )
    item = entry(
        build_commands(template, KWARGS, str(tokenizer_dir), messages=MESSAGES, tools=TOOLS),
        "transformers",
        "python",
    )
    write_files({**item["files"], "snippet.py": item["command"]}, workdir)
    env = {**shell_env(workdir), "HF_HUB_OFFLINE": "1", "PYTHONIOENCODING": "utf-8"}
    result = subprocess.run(
        [sys.executable, "snippet.py"], cwd=workdir, env=env, capture_output=True, timeout=120
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    request = RenderRequest(
        template=template, messages=MESSAGES, tools=TOOLS, add_generation_prompt=True,
        special_tokens=special, kwargs=KWARGS,
    )  # fmt: skip
    expected = render_exactly(request).prompt
    assert "\r\n" in expected and "✓" in expected
    assert result.stdout.decode("utf-8") == expected + "\n"


def tiny_gguf(path: Path) -> None:
    writer = GGUFWriter(path, "llama")
    writer.add_chat_template("old template")
    writer.add_tensor("t", np.zeros(4, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.mark.parametrize(
    ("template", "inline"),
    [
        ("{{ messages }}\n$HOME 'q' \"qq\" ✓\n", False),
        ("{{ a }}\r\n{{ b }}\r", True),
        ("-h\r\n--chat-template-file x", True),
    ],
    ids=["plain", "crlf", "leading-dash-and-cr"],
)
def test_gguf_new_metadata_writes_the_exact_template(
    template: str, inline: bool, workdir: Path
) -> None:
    tiny_gguf(workdir / "my model.gguf")
    item = entry(build_commands(template, {}, "my model.gguf"), "gguf-py", "gguf_new_metadata")
    assert bool(item["files"]) is not inline
    write_files(item["files"], workdir)
    result = subprocess.run(
        ["bash"], input=item["command"].encode(), cwd=workdir, env=shell_env(workdir),
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    reader = GGUFReader(workdir / "my model.with-template.gguf")
    assert reader.get_field("tokenizer.chat_template").contents() == template


def test_gguf_template_starting_with_a_bracket_goes_by_file() -> None:
    item = entry(build_commands("[x]\r\n", {}), "gguf-py", "gguf_new_metadata")
    assert "--chat-template-file template.jinja" in item["command"]


# --- built-in formats -----------------------------------------------------------------

LLAMA3_STYLE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'"
    " + message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{% endif %}"
)


def renderer(template: str, special_tokens: dict[str, str] | None = None):
    def render(messages: list[dict], add_generation_prompt: bool) -> str | None:
        request = RenderRequest(
            template=template, messages=messages, add_generation_prompt=add_generation_prompt,
            special_tokens=special_tokens or {},
        )  # fmt: skip
        try:
            return render_exactly(request).prompt
        except TemplateProblem:
            return None

    return render


def test_library_chatml_is_the_chatml_builtin() -> None:
    template = (REPO / "templates_lib" / "chatml.jinja").read_text()
    assert equivalent_builtin(renderer(template)) == "chatml"


def test_llama3_style_template_is_the_llama3_builtin_once_bos_is_left_to_the_tokenizer() -> None:
    bos = "<|begin_of_text|>"
    render = renderer(LLAMA3_STYLE, {"bos_token": bos})
    assert equivalent_builtin(render, bos_token=bos) == "llama3"
    # The built-ins write no BOS: counting the template's BOS text, nothing matches.
    assert equivalent_builtin(render) is None


def test_a_template_that_does_not_trim_where_the_builtin_trims_matches_nothing() -> None:
    untrimmed = LLAMA3_STYLE.replace(" | trim", "")
    assert equivalent_builtin(renderer(untrimmed)) is None


def test_a_template_that_fails_on_a_probe_matches_nothing() -> None:
    no_system = "{% if messages[0].role == 'system' %}{{ raise_exception('no') }}{% endif %}"
    template = (REPO / "templates_lib" / "chatml.jinja").read_text()
    assert equivalent_builtin(renderer(no_system + template)) is None


def test_phi3_style_template_is_the_phi3_builtin() -> None:
    template = (
        "{% for m in messages %}{{ '<|' + m.role + '|>\\n' + m.content + '<|end|>\\n' }}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}"
    )
    assert equivalent_builtin(renderer(template)) == "phi3"


CONVERSATION = [
    {"role": "system", "content": "Sys"},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "  Yo  "},
    {"role": "user", "content": "Q"},
]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("gemma", "<start_of_turn>user\nSys\n\nHi<end_of_turn>\n<start_of_turn>model\nYo"
                  "<end_of_turn>\n<start_of_turn>user\nQ<end_of_turn>\n<start_of_turn>model\n"),
        ("llama2", "[INST] Sys\nHi [/INST]  Yo  </s>[INST] Q [/INST]"),
        ("llama2-sys-bos", "[INST] <<SYS>>\nSys\n<</SYS>>\n\nHi [/INST]  Yo  </s>"
                           "<s>[INST] Q [/INST]"),
        ("mistral-v3", "[INST] Sys\n\nHi[/INST] Yo</s>[INST] Q[/INST]"),
        ("mistral-v7", "[SYSTEM_PROMPT] Sys[/SYSTEM_PROMPT][INST] Hi[/INST]   Yo  </s>"
                       "[INST] Q[/INST]"),
        ("deepseek3", "Sys\n\n<｜User｜>Hi<｜Assistant｜>  Yo  <｜end▁of▁sentence｜><｜User｜>Q"
                      "<｜Assistant｜>"),
        ("gpt-oss", "<|start|>system<|message|>Sys<|end|><|start|>user<|message|>Hi<|end|>"
                    "<|start|>assistant<|message|>  Yo  <|return|><|start|>user<|message|>Q<|end|>"
                    "<|start|>assistant"),
        ("vicuna", "Sys\n\nUSER: Hi\nASSISTANT:   Yo  </s>\nUSER: Q\nASSISTANT:"),
    ],
)  # fmt: skip
def test_builtin_formats_write_what_llama_cpp_writes(name: str, expected: str) -> None:
    assert BUILTINS[name](CONVERSATION, True) == expected


def test_every_builtin_renders_the_probes_differently_from_the_others() -> None:
    """Each name must be reachable: no two built-ins write the same text everywhere."""
    for name, format_ in BUILTINS.items():

        def render(messages: list[dict], add_generation_prompt: bool, f=format_) -> str:
            return f(messages, add_generation_prompt)

        assert equivalent_builtin(render) == name


@pytest.mark.parametrize("engine", ["ollama", "vllm", "llama.cpp"])
def test_the_chosen_engines_commands_come_first(client, engine: str) -> None:
    """A user who chose an engine finds its commands at the top; the others follow in
    their usual order, which the default engine keeps (llama-server first)."""
    body = {"template": "{{ messages[0]['content'] }}", "engine": engine}
    usual = [
        c["engine"]
        for c in client.post("/api/command", json={**body, "engine": "transformers"}).get_json()[
            "commands"
        ]
    ]
    chosen = [c["engine"] for c in client.post("/api/command", json=body).get_json()["commands"]]
    first = {"ollama": "ollama", "vllm": "vllm serve", "llama.cpp": "llama-server"}[engine]
    assert usual[0] == "llama-server"
    assert chosen[0].startswith(first.split()[0])
    assert sorted(chosen) == sorted(usual)
    assert [e for e in chosen if e not in chosen[:1]] == [e for e in usual if e not in chosen[:1]]
