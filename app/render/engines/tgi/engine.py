"""The TGI engine: what text-generation-inference's router renders for a chat request.

Its steps, in TGI's order (router/src/lib.rs `ChatRequest::try_into_generate`, then
`ChatTemplate::apply` in router/src/infer/chat_template.rs):
1. the template is rewritten (`template.rewritten`) and compiled;
2. the request is parsed and reshaped (`router.shape_request`): one content string per
   message, tools through `tool_choice`, the tool prompt appended to the last message;
3. the template renders `messages`, `bos_token`, `eos_token`, `tools` and
   `add_generation_prompt`, which is always true;
4. a final assistant message is continued: the prompt is cut after its content.
"""

from __future__ import annotations

from app.problems import limit_exceeded
from app.render.core import Engine, EngineInfo, Help, Rendered, RenderRequest
from app.render.engines.tgi import commands as tgi_commands
from app.render.engines.tgi import template as tgi_template
from app.render.engines.tgi.router import shape_request
from app.render.limits import RenderLimits

#: The request fields TGI has: the rest of `kwargs` never reaches its template.
TGI_FIELDS = ("tool_choice", "tool_prompt")


class TgiEngine(Engine):
    """text-generation-inference's chat route: its router, then MiniJinja."""

    info = EngineInfo(
        id="tgi",
        name="TGI (text-generation-inference)",
        #: TGI's release whose router this follows; it ships MiniJinja 2.8.0.
        version="3.3.7",
        description=(
            "What text-generation-inference's router renders: its request reshaping (one "
            "content string per message, tools as JSON strings, its tool prompt, a final "
            "assistant message continued) and MiniJinja with pycompat, run by the minijinja "
            "Python package."
        ),
        help=Help(
            no_parser=(
                "TGI has no parser for a template's own markup: without tools it returns the "
                "completion as content, unchanged; with tools it does not let the model write "
                "free text at all: a JSON grammar built from the tools constrains generation, "
                "and it reads that JSON as the tool call, so markup like this completion's "
                "never reaches a client as a tool call."
            )
        ),
        openai_server=True,
    )
    commands = tgi_commands.WRITER

    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        """Reshape, render and continue as TGI's router does."""
        source, rewrites = tgi_template.rewritten(request.template)
        shaped = shape_request(
            request.messages,
            request.tools,
            request.kwargs,
            template_reads_tools=tgi_template.reads_tools(source),
        )
        rewrites += shaped.rewrites + _ignored_fields(request)
        context = {
            "messages": shaped.messages,
            "tools": shaped.tools,
            "bos_token": request.special_tokens.get("bos_token"),
            "eos_token": request.special_tokens.get("eos_token"),
            "add_generation_prompt": True,
        }
        env = tgi_template.environment(request.now, limits.cpu_seconds)
        prompt = tgi_template.render(env, source, context)
        if len(prompt) > limits.output_chars:
            raise limit_exceeded(
                "output_chars", f"The template wrote more than {limits.output_chars:,} characters."
            )
        final = shaped.messages[-1] if shaped.messages else None
        if final is not None and final["role"] == "assistant":
            prompt = _continued(prompt, final["content"], rewrites)
        return Rendered(prompt, [], list(dict.fromkeys(rewrites)))


def _continued(prompt: str, content: str, rewrites: list[str]) -> str:
    """TGI continues a final assistant message: the prompt ends where its content last
    appears, without trailing whitespace (Rust's `trim_end`)."""
    at = prompt.rfind(content)
    if at < 0:
        return prompt
    rewrites.append("final assistant message continued: prompt cut after its content, trimmed")
    return _trim_end(prompt[: at + len(content)])


def _trim_end(text: str) -> str:
    """Rust's `str::trim_end`: Unicode White_Space, which (unlike Python's `rstrip`) does
    not include the separators U+001C to U+001F."""
    end = len(text)
    while end and text[end - 1].isspace() and text[end - 1] not in "\x1c\x1d\x1e\x1f":
        end -= 1
    return text[:end]


def _ignored_fields(request: RenderRequest) -> list[str]:
    """A sentence for each request field TGI has no use for."""
    ignored = []
    if not request.add_generation_prompt:
        ignored.append("add_generation_prompt is always true in TGI")
    if request.continue_final_message:
        ignored.append("continue_final_message ignored: TGI continues a final assistant message")
    if request.documents is not None:
        ignored.append("documents ignored: TGI has no such field")
    extra_kwargs = sorted(set(request.kwargs) - set(TGI_FIELDS))
    if extra_kwargs:
        ignored.append(f"kwargs not passed to the template: {', '.join(extra_kwargs)}")
    extra_tokens = sorted(set(request.special_tokens) - {"bos_token", "eos_token"})
    if extra_tokens:
        ignored.append(f"special tokens other than bos/eos not passed: {', '.join(extra_tokens)}")
    return ignored
