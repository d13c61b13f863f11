"""llama.cpp's built-in chat formats, re-implemented, and which one a template matches.

llama.cpp accepts a format *name* (`--chat-template llama3`) as well as a Jinja template.
A name selects one of the hand-written formats of `llm_chat_apply_template` in
`src/llama-chat.cpp`; this module writes the same text for a useful subset of them, so
the playground can tell when a user's template could be replaced by a name.

What the formats share with llama.cpp:

- They write no BOS text: llama.cpp tokenizes the prompt with its special tokens, so the
  vocabulary adds BOS itself.
- Trimming strips only the ASCII spaces C's `isspace` knows (" \\t\\n\\v\\f\\r").
- A message's content is its string; typed content (a list of parts) is reduced to its
  text parts joined by newlines, as llama.cpp's non-Jinja path does.
- Roles a format does not know are written the way llama.cpp writes them: some formats
  drop them, others give them the generic layout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.render.engines.llamacpp.whitespace import trim

#: A built-in format: (messages, add_generation_prompt) -> prompt.
Format = Callable[[list[dict[str, Any]], bool], str]

#: A user's template, rendered by the caller: (messages, add_generation_prompt) -> prompt,
#: or None when the render fails.
Render = Callable[[list[dict[str, Any]], bool], str | None]


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        ]
        return "\n".join(texts)
    return ""


@dataclass(frozen=True)
class _Turns:
    """A format that writes every message as prefix + content + suffix, chosen by its role.

    `roles` maps a role to its (prefix, suffix); "{role}" in them is replaced by the role
    and the "*" entry serves every other role (without it, other roles are dropped).
    `trim` names the roles whose content is trimmed ("*": all of them).
    """

    roles: dict[str, tuple[str, str]]
    generation: str = ""
    trim: frozenset[str] = field(default_factory=frozenset)

    def __call__(self, messages: list[dict[str, Any]], add_generation_prompt: bool) -> str:
        out = []
        for message in messages:
            role = str(message.get("role", ""))
            parts = self.roles.get(role, self.roles.get("*"))
            if parts is None:
                continue
            content = _content(message)
            if "*" in self.trim or role in self.trim:
                content = trim(content)
            prefix, suffix = (part.replace("{role}", role) for part in parts)
            out.append(prefix + content + suffix)
        if add_generation_prompt:
            out.append(self.generation)
        return "".join(out)


_ALL = frozenset({"*"})


def _mistral(leading: str, trailing: str, trim_assistant: bool) -> Format:
    """Mistral v1/v3/v3-tekken: system text goes inside the next [INST] block."""

    def render(messages: list[dict[str, Any]], add_generation_prompt: bool) -> str:
        out, inside = [], False
        for message in messages:
            if not inside:
                out.append(f"{leading}[INST]{trailing}")
                inside = True
            role, content = message.get("role"), _content(message)
            if role == "system":
                out.append(content + "\n\n")
            elif role == "user":
                out.append(f"{content}{leading}[/INST]")
            else:
                out.append(trailing + (trim(content) if trim_assistant else content) + "</s>")
                inside = False
        return "".join(out)  # these formats never add a generation prompt

    return render


def _llama2(system_tags: bool, bos_in_history: bool, strip: bool) -> Format:
    """Llama 2 and its variants: the first [INST] is written without its BOS."""

    def render(messages: list[dict[str, Any]], add_generation_prompt: bool) -> str:
        out, inside = ["[INST] "], True
        for message in messages:
            content = _content(message)
            content = trim(content) if strip else content
            if not inside:
                inside = True
                out.append("<s>[INST] " if bos_in_history else "[INST] ")
            role = message.get("role")
            if role == "system":
                out.append(f"<<SYS>>\n{content}\n<</SYS>>\n\n" if system_tags else content + "\n")
            elif role == "user":
                out.append(content + " [/INST]")
            else:
                out.append(content + "</s>")
                inside = False
        return "".join(out)

    return render


def _gemma(messages: list[dict[str, Any]], add_generation_prompt: bool) -> str:
    """Gemma has no system turn: system text opens the next user turn."""
    out, system = [], ""
    for message in messages:
        role = str(message.get("role", ""))
        if role == "system":
            system += trim(_content(message))
            continue
        role = "model" if role == "assistant" else role
        out.append(f"<start_of_turn>{role}\n")
        if system and role != "model":
            out.append(system + "\n\n")
            system = ""
        out.append(trim(_content(message)) + "<end_of_turn>\n")
    if add_generation_prompt:
        out.append("<start_of_turn>model\n")
    return "".join(out)


_EOS_DS = "<｜end▁of▁sentence｜>"

#: Built-in names, most common first: `equivalent_builtin` answers the first that fits.
BUILTINS: dict[str, Format] = {
    "chatml": _Turns({"*": ("<|im_start|>{role}\n", "<|im_end|>\n")}, "<|im_start|>assistant\n"),
    "llama3": _Turns(
        {"*": ("<|start_header_id|>{role}<|end_header_id|>\n\n", "<|eot_id|>")},
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
        _ALL,
    ),
    "gemma": _gemma,
    "phi3": _Turns({"*": ("<|{role}|>\n", "<|end|>\n")}, "<|assistant|>\n"),
    "phi4": _Turns(
        {"*": ("<|im_start|>{role}<|im_sep|>", "<|im_end|>")}, "<|im_start|>assistant<|im_sep|>"
    ),
    "mistral-v7": _Turns(
        {
            "system": ("[SYSTEM_PROMPT] ", "[/SYSTEM_PROMPT]"),
            "user": ("[INST] ", "[/INST]"),
            "*": (" ", "</s>"),
        }
    ),
    "mistral-v7-tekken": _Turns(
        {
            "system": ("[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"),
            "user": ("[INST]", "[/INST]"),
            "*": ("", "</s>"),
        }
    ),
    "mistral-v3": _mistral("", " ", trim_assistant=True),
    "mistral-v3-tekken": _mistral("", "", trim_assistant=False),
    "mistral-v1": _mistral(" ", " ", trim_assistant=False),
    "llama2": _llama2(system_tags=False, bos_in_history=False, strip=False),
    "llama2-sys": _llama2(system_tags=True, bos_in_history=False, strip=False),
    "llama2-sys-bos": _llama2(system_tags=True, bos_in_history=True, strip=False),
    "llama2-sys-strip": _llama2(system_tags=True, bos_in_history=False, strip=True),
    "zephyr": _Turns({"*": ("<|{role}|>\n", "<|endoftext|>\n")}, "<|assistant|>\n"),
    "falcon3": _Turns({"*": ("<|{role}|>\n", "\n")}, "<|assistant|>\n"),
    "vicuna": _Turns(
        {
            "system": ("", "\n\n"),
            "user": ("USER: ", "\n"),
            "assistant": ("ASSISTANT: ", "</s>\n"),
        },
        "ASSISTANT:",
    ),
    "vicuna-orca": _Turns(
        {
            "system": ("SYSTEM: ", "\n"),
            "user": ("USER: ", "\n"),
            "assistant": ("ASSISTANT: ", "</s>\n"),
        },
        "ASSISTANT:",
    ),
    "deepseek2": _Turns(
        {
            "system": ("", "\n\n"),
            "user": ("User: ", "\n\n"),
            "assistant": ("Assistant: ", _EOS_DS),
        },
        "Assistant:",
    ),
    "deepseek3": _Turns(
        {
            "system": ("", "\n\n"),
            "user": ("<｜User｜>", ""),
            "assistant": ("<｜Assistant｜>", _EOS_DS),
        },
        "<｜Assistant｜>",
    ),
    "command-r": _Turns(
        {
            "system": ("<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>", "<|END_OF_TURN_TOKEN|>"),
            "user": ("<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "<|END_OF_TURN_TOKEN|>"),
            "assistant": ("<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>"),
        },
        "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        _ALL,
    ),
    "llama4": _Turns(
        {"*": ("<|header_start|>{role}<|header_end|>\n\n", "<|eot|>")},
        "<|header_start|>assistant<|header_end|>\n\n",
        _ALL,
    ),
    "gpt-oss": _Turns(
        {
            "assistant": ("<|start|>assistant<|message|>", "<|return|>"),
            "*": ("<|start|>{role}<|message|>", "<|end|>"),
        },
        "<|start|>assistant",
    ),
}


def _turn(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


#: Conversations a template must render exactly as a built-in does, with and without the
#: generation prompt. One user message carries spaces and a newline around its text, so
#: a template that does not trim where the built-in trims (or the other way) differs.
PROBES: tuple[list[dict[str, str]], ...] = (
    [
        _turn("system", "You are a helpful assistant."),
        _turn("user", "What is 2+2?"),
        _turn("assistant", "2+2 is 4."),
        _turn("user", "And 3+3?"),
    ],
    [_turn("user", "Hello there!")],
    [
        _turn("user", "  First question\n"),
        _turn("assistant", "First answer"),
        _turn("user", "Second\nquestion"),
        _turn("assistant", "Second answer"),
        _turn("user", "Third question"),
    ],
)


def _without_bos(prompt: str, bos_token: str | None) -> str:
    if bos_token and prompt.startswith(bos_token):
        return prompt[len(bos_token) :]
    return prompt


def equivalent_builtin(render: Render, bos_token: str | None = None) -> str | None:
    """The first built-in name that writes exactly what `render` writes on every probe.

    `render` renders the user's template (with the user's kwargs); it returns None when
    the render fails, and a failing probe matches no built-in. The probes are plain
    conversations because the built-ins know nothing else (no tools, tool calls,
    reasoning or kwargs): a match says the name renders plain chats the same, and a
    template that does more (Qwen3's matches "chatml") loses it under the name.

    A leading `bos_token` the template writes is ignored: the built-ins leave BOS to the
    tokenizer, and llama.cpp strips a BOS text the template writes when its vocabulary
    adds BOS anyway, so both give the same tokens for such models (the common case; a
    model whose vocabulary does not add BOS would differ). A trailing EOS counts.
    """
    rendered = []
    for messages in PROBES:
        for add_generation_prompt in (True, False):
            prompt = render([dict(m) for m in messages], add_generation_prompt)
            if prompt is None:
                return None
            rendered.append((messages, add_generation_prompt, _without_bos(prompt, bos_token)))
    for name, format_ in BUILTINS.items():
        if all(format_(m, agp) == prompt for m, agp, prompt in rendered):
            return name
    return None
