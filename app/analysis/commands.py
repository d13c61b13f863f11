"""Command lines that run a model with the template shown in the playground.

`build_commands` writes, for each engine, the commands that make it use the template:
every entry is `{"engine", "form", "command", "files"}`, where `files` maps the file
names the command reads (in the current directory) to their contents.

Facts these commands rest on (llama.cpp `common/arg.cpp`, `common/chat.cpp`,
`tools/server/README.md`; gguf-py `gguf/scripts/gguf_new_metadata.py`; vLLM
`entrypoints/chat_utils.py`; TGI's launcher docs (`--tokenizer-config-path`); mistral.rs
`docs/CHAT_TOK.md` (`--jinja-explicit`)):

- llama.cpp's parser takes the argv word after `--chat-template` as its value, whatever
  it starts with (a template starting with "-" is fine) and does no escape processing
  on it. It knows no `--flag=value` form, so the value is always a separate word.
- `--chat-template` takes a Jinja template only with Jinja on; builds that check it while
  parsing ("unless --jinja is set before this flag") need `--jinja` first, so it always
  comes first here. Recent builds have Jinja on by default and check after parsing.
- Environment variables: LLAMA_ARG_MODEL, LLAMA_ARG_JINJA, LLAMA_ARG_CHAT_TEMPLATE,
  LLAMA_ARG_CHAT_TEMPLATE_FILE, and for the kwargs LLAMA_ARG_CHAT_TEMPLATE_KWARGS (newer
  builds) or LLAMA_CHAT_TEMPLATE_KWARGS (older builds); the env form sets both.
- One argv word or environment string is at most 128 KiB on Linux (MAX_ARG_STRLEN), and
  none can hold a NUL: the inline forms are left out for templates they cannot carry.
- gguf-new-metadata and vLLM read a template file in Python's text mode, which turns
  CR and CRLF into LF. Python's Jinja turns them into LF anyway when it compiles, so
  vLLM renders the same; a GGUF should hold the exact text (llama.cpp renders it with
  its own engine), so `_gguf_py` passes a template with a CR inline.
- Every word is quoted by `quote`: POSIX single quotes, safe to paste into a terminal.
"""

from __future__ import annotations

import json
import math
import pprint
import re
import shlex
from typing import Any

from app.render.limits import RenderLimits, check_template_size

TEMPLATE_FILE = "template.jinja"
REQUEST_FILE = "apply-template.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
GGUF_PLACEHOLDER = "MODEL.gguf"
HF_PLACEHOLDER = "ORG/MODEL"
DEFAULT_SERVER_URL = "http://localhost:8080"
#: Linux's MAX_ARG_STRLEN: the bytes of one argv word or "NAME=value", with its NUL.
MAX_ARGUMENT_BYTES = 128 * 1024
#: The conversation the snippets send when the caller gives none.
EXAMPLE_MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Hello!"}]


#: Control characters a terminal paste can alter (a pasted CR arrives as LF, ESC starts a
#: key sequence): every C0 control but tab and newline, which a paste keeps, and DEL.
_UNPASTEABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
#: What the `printf '%b'` form writes as octal: every control (so the form is one line),
#: its own escape character, and "!", which an interactive bash would history-expand
#: inside the double quotes around the command substitution.
_PRINTF_ESCAPED = re.compile(r"[\x00-\x1f\x7f\\!]")


def quote(word: str) -> str:
    """`word` as one POSIX shell word that also survives being pasted into a terminal.

    Single quotes (`shlex.quote`) keep everything literal, `$`, backquotes, `!` and
    backslashes included (bash does no history expansion inside them). A word with
    control characters a paste would alter is written by `printf '%b'` instead, from a
    one-line copy where they (and newlines, backslashes and "!") are octal escapes: still
    POSIX, still one word, and one command substitution (dash crashes on words with a
    thousand). Command substitution strips trailing newlines: those follow in quotes.
    """
    if not _UNPASTEABLE.search(word):
        return shlex.quote(word)
    body = word.rstrip("\n")
    escaped = _PRINTF_ESCAPED.sub(lambda match: f"\\0{ord(match.group()):03o}", body)
    tail = word[len(body) :]
    return f"\"$(printf '%b' {shlex.quote(escaped)})\"" + (shlex.quote(tail) if tail else "")


def join(words: list[str]) -> str:
    return " ".join(quote(word) for word in words)


def llama_server_file_command(model: str, template_file: str) -> str:
    """`llama-server` overriding the model's template with a template file.

    `--jinja` makes llama.cpp render with its Jinja engine, as the playground does.
    """
    return join(["llama-server", "-m", model, "--jinja", "--chat-template-file", template_file])


def _json(value: Any) -> str:
    """Compact JSON, non-ASCII kept readable unless it cannot be encoded (lone surrogates)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if _encodable(text) else json.dumps(value, separators=(",", ":"))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _fits_one_argument(text: str, overhead: int = 0) -> bool:
    """Whether `text` can be one argv word (or environment value) as it is."""
    if "\0" in text or not _encodable(text):
        return False
    return len(text.encode("utf-8")) + overhead + 1 <= MAX_ARGUMENT_BYTES


def _assign(name: str, value: str) -> str:
    return f"{name}={quote(value)}"


def _gguf_name(model: str | None) -> str:
    return model if model and model.endswith(".gguf") else GGUF_PLACEHOLDER


def _hf_id(model: str | None) -> str:
    return model if model and not model.endswith(".gguf") else HF_PLACEHOLDER


def _entry(engine: str, form: str, command: str, files: dict[str, str] | None = None) -> dict:
    return {"engine": engine, "form": form, "command": command, "files": files or {}}


def _llama_cpp(program: str, template: str, kwargs_json: str | None, model: str,
               builtin: str | None) -> list[dict]:  # fmt: skip
    files = {TEMPLATE_FILE: template}
    kwargs_args = ["--chat-template-kwargs", kwargs_json] if kwargs_json else []
    # The file form first: it is the one to copy (a long template makes the inline form
    # unreadable, and some templates cannot be inline at all).
    words = [program, "-m", model, "--jinja", "--chat-template-file", TEMPLATE_FILE, *kwargs_args]
    entries = [_entry(program, "file", join(words), files)]
    if _fits_one_argument(template):
        words = [program, "-m", model, "--jinja", "--chat-template", template, *kwargs_args]
        entries.append(_entry(program, "inline", join(words)))
    if builtin:
        # With Jinja on (the default of recent builds) the value of --chat-template is
        # compiled as Jinja source: only "chatml" is mapped to a real template, any other
        # name would render as its own literal text. --no-jinja sends the name to
        # llm_chat_apply_template, which knows it. (Builds from before Jinja became the
        # default have no --no-jinja; drop it there, their default is already off.)
        words = [program, "-m", model, "--no-jinja", "--chat-template", builtin]
        entries.append(_entry(program, "builtin", join(words)))
    assignments = [
        _assign("LLAMA_ARG_MODEL", model),
        _assign("LLAMA_ARG_JINJA", "1"),
        _assign("LLAMA_ARG_CHAT_TEMPLATE_FILE", TEMPLATE_FILE),
    ]
    if kwargs_json:
        # Renamed from LLAMA_CHAT_TEMPLATE_KWARGS: setting both serves old and new builds.
        assignments.append(_assign("LLAMA_ARG_CHAT_TEMPLATE_KWARGS", kwargs_json))
        assignments.append(_assign("LLAMA_CHAT_TEMPLATE_KWARGS", kwargs_json))
    entries.append(_entry(program, "env", " ".join([*assignments, program]), files))
    return entries


def _curl(messages: list, tools: list | None, kwargs: dict, add_generation_prompt: bool,
          server_url: str) -> dict:  # fmt: skip
    """A running llama-server rendering the conversation: POST /apply-template."""
    body: dict[str, Any] = {"messages": messages}
    if tools:
        body["tools"] = tools
    if kwargs:
        body["chat_template_kwargs"] = kwargs
    if not add_generation_prompt:
        body["add_generation_prompt"] = False  # the server's default is true
    data, files = _json(body), {}
    if not _fits_one_argument(data):  # too big for one argument: curl reads it from a file
        data, files = "@" + REQUEST_FILE, {REQUEST_FILE: data}
    words = [
        "curl", "-sS", "-X", "POST", server_url.rstrip("/") + "/apply-template",
        "-H", "Content-Type: application/json", "--data-binary", data,
    ]  # fmt: skip
    return _entry("llama-server", "curl", join(words), files)


def _vllm(template: str, model: str, content_format: str) -> dict:
    """vLLM's server with the template file and the content format the playground detects
    (stated, so the server does not detect it again on its own)."""
    words = ["vllm", "serve", model, "--chat-template", TEMPLATE_FILE]
    words += ["--chat-template-content-format", content_format]
    return _entry("vllm", "serve", join(words), {TEMPLATE_FILE: template})


def _tgi(template: str, model: str, special_tokens: dict[str, str]) -> dict:
    """TGI's launcher: it takes no template file, but a whole tokenizer_config.json
    (`--tokenizer-config-path`), read instead of the model's, whose `chat_template` its
    router renders; the BOS and EOS texts the template may print go in it too."""
    config: dict[str, str] = {"chat_template": template}
    config.update({k: v for k, v in special_tokens.items() if k in ("bos_token", "eos_token")})
    words = ["text-generation-launcher", "--model-id", model]
    words += ["--tokenizer-config-path", TOKENIZER_CONFIG_FILE]
    text = json.dumps(config, ensure_ascii=False, indent=2) + "\n"
    return _entry("tgi", "launcher", join(words), {TOKENIZER_CONFIG_FILE: text})


def _mistral_rs(template: str, model: str) -> dict:
    """mistral.rs's server: `--jinja-explicit` names a Jinja file that replaces the
    model's template (its older `--chat-template` wants a JSON file instead)."""
    words = ["mistralrs", "serve", "--jinja-explicit", TEMPLATE_FILE, "-m", model]
    return _entry("mistral.rs", "serve", join(words), {TEMPLATE_FILE: template})


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _python_literal(value: Any) -> str:
    """Python source for a JSON value: a readable literal, or json.loads when it has NaN/inf."""
    if _finite(value):
        return pprint.pformat(value, width=88, sort_dicts=False)
    return f"json.loads({json.dumps(value)!r})"


def _transformers(template: str, model: str, messages: list, tools: list | None, kwargs: dict,
                  add_generation_prompt: bool) -> dict:  # fmt: skip
    plain = _finite([messages, tools, kwargs])
    source = "\n".join(
        [
            *([] if plain else ["import json", ""]),
            "from transformers import AutoTokenizer",
            "",
            f"tokenizer = AutoTokenizer.from_pretrained({model!r})",
            # newline="" reads the file as it is (Jinja normalises line ends on its own).
            f'with open("{TEMPLATE_FILE}", encoding="utf-8", newline="") as file:',
            "    tokenizer.chat_template = file.read()",
            "",
            f"messages = {_python_literal(messages)}",
            f"tools = {_python_literal(tools) if tools else None}",
            f"kwargs = {_python_literal(kwargs)}",
            "",
            "prompt = tokenizer.apply_chat_template(",
            "    messages,",
            "    tools=tools,",
            f"    add_generation_prompt={add_generation_prompt},",
            "    tokenize=False,",
            "    **kwargs,",
            ")",
            "print(prompt)",
            "",
        ]
    )
    return _entry("transformers", "python", source, {TEMPLATE_FILE: template})


def _gguf_py(template: str, model: str) -> dict:
    """Write the template into a copy of the GGUF (gguf-py's console script).

    `gguf-new-metadata` (the `gguf.scripts.gguf_new_metadata` module of `pip install gguf`)
    reads --chat-template-file in text mode, which would turn a CR into LF: a template
    with a CR goes inline as `--chat-template=VALUE` (the `=` keeps argparse from taking
    a leading "-" for an option), unless it starts with "[" (then the script parses it as
    a JSON list of named templates) or is too big for one argument.
    """
    output = (model[: -len(".gguf")] if model.endswith(".gguf") else model) + ".with-template.gguf"
    words = ["gguf-new-metadata", model, output]
    inline = "\r" in template and not template.startswith("[")
    if inline and _fits_one_argument(template, len("--chat-template=")):
        command = join([*words, "--chat-template=" + template])
        return _entry("gguf-py", "gguf_new_metadata", command)
    command = join([*words, "--chat-template-file", TEMPLATE_FILE])
    return _entry("gguf-py", "gguf_new_metadata", command, {TEMPLATE_FILE: template})


def build_commands(
    template: str,
    kwargs: dict,
    model: str | None = None,
    *,
    messages: list | None = None,
    tools: list | None = None,
    content_format: str = "string",
    builtin: str | None = None,
    add_generation_prompt: bool = True,
    server_url: str = DEFAULT_SERVER_URL,
    special_tokens: dict[str, str] | None = None,
) -> list[dict]:
    """Every command that runs a model with `template`, `kwargs` and the conversation.

    `model` is a GGUF file (for llama.cpp and gguf-py) or a Hugging Face id (for vLLM and
    transformers); a placeholder stands in for the kind not given. `builtin` is the name
    of a llama.cpp built-in format that renders like the template (see
    `equivalent_builtin` of the llama.cpp engine), which adds the shorter `builtin` form.
    `special_tokens` are the BOS/EOS texts TGI's tokenizer_config.json carries.
    """
    kwargs = kwargs or {}
    messages = EXAMPLE_MESSAGES if messages is None else messages
    kwargs_json = _json(kwargs) if kwargs else None
    gguf, hf_id = _gguf_name(model), _hf_id(model)
    return [
        *_llama_cpp("llama-server", template, kwargs_json, gguf, builtin),
        _curl(messages, tools, kwargs, add_generation_prompt, server_url),
        *_llama_cpp("llama-cli", template, kwargs_json, gguf, builtin),
        _vllm(template, hf_id, content_format),
        _tgi(template, hf_id, special_tokens or {}),
        _mistral_rs(template, hf_id),
        _transformers(template, hf_id, messages, tools, kwargs, add_generation_prompt),
        _gguf_py(template, gguf),
    ]


def template_facts(
    template: str, kwargs: dict, special_tokens: dict[str, str], limits: RenderLimits
) -> dict[str, Any]:
    """What the command lines depend on, learnt by rendering within `limits` (runs in a
    sandbox worker)."""
    # Imported here: the renderer is only needed where this runs, in the worker.
    from app.problems import TemplateProblem
    from app.render.content_format import detect_content_format
    from app.render.core import RenderRequest
    from app.render.engines.llamacpp.builtins import equivalent_builtin
    from app.render.engines.transformers.chat import render_chat

    check_template_size(template, limits)

    def render(messages: list[dict], add_generation_prompt: bool) -> str | None:
        request = RenderRequest(
            template=template,
            messages=messages,
            add_generation_prompt=add_generation_prompt,
            special_tokens=special_tokens,
            kwargs=kwargs,
        )
        try:
            return render_chat(request, limits).prompt
        except TemplateProblem:
            return None

    return {
        "content_format": detect_content_format(template),
        "builtin": equivalent_builtin(render, special_tokens.get("bos_token")),
    }
