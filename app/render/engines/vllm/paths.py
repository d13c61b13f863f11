"""Models that vLLM 0.33.0 does not render with their chat template.

For most models `vllm serve` renders the Hugging Face chat template, which is what the
engine reproduces. Some it serves another way (read from vllm/renderers/registry.py,
vllm/config/model.py and vllm/tokenizers/registry.py of 0.33.0):

- gpt-oss (`model_type` gpt_oss) goes through Harmony (openai-harmony), not the template;
- a Mistral model loaded from a repository with Mistral's tokenizer files (`tekken.json`
  or `tokenizer.model.v*`) is rendered by mistral_common, unless the server runs with
  `--tokenizer-mode hf`;
- some architectures have a renderer of their own, which vLLM picks by itself: DeepSeek
  V3.2, V4 and V4.1 (their encoding scripts), Kimi K3 and Inkling;
- a Cohere Command model is rendered by cohere_melody (its own cmd3/cmd4 templates, or
  the server's `--chat-template` with melody's variables) when the server is started with
  `--tokenizer-mode cohere`; vLLM never picks that mode by itself.

A model is recognised by its name (a GGUF's `general.name`, a tokenizer's
`name_or_path`, the repository or file) or by the template's own markers.
"""

from __future__ import annotations

import re

_HARMONY = re.compile(r"gpt[-_ ]?oss", re.IGNORECASE)
_HARMONY_MARKERS = ("<|channel|>", "<|start|>", "<|message|>")
_MISTRAL = re.compile(r"mistral|ministral|devstral|magistral|pixtral|codestral", re.IGNORECASE)
#: Control tokens only Mistral's templates write.
_MISTRAL_MARKERS = ("[SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]")
_OWN_RENDERERS = (
    (re.compile(r"deepseek[-_ ]?v3[._]?2", re.IGNORECASE), "DeepSeek V3.2"),
    (re.compile(r"deepseek[-_ ]?v4", re.IGNORECASE), "DeepSeek V4"),
    (re.compile(r"kimi[-_ ]?k3", re.IGNORECASE), "Kimi K3"),
    (re.compile(r"inkling", re.IGNORECASE), "Inkling"),
)
#: Kimi K3's template writes its messages as `<|open|>message role=...`.
_KIMI_K3_MARKER = "<|open|>message"
_COHERE = re.compile(r"cohere|c4ai|command[-_ ]?[ar](?![a-z])", re.IGNORECASE)
#: The turn marker of Command R, R7B and A templates.
_COHERE_MARKER = "<|START_OF_TURN_TOKEN|>"


def other_paths(template: str, model: str | None) -> list[str]:
    """What vLLM does instead of rendering `template`, when it serves `model` another way."""
    name = model or ""
    notes = []
    if _HARMONY.search(name) or all(marker in template for marker in _HARMONY_MARKERS):
        notes.append(
            "vLLM renders gpt-oss models through Harmony (openai-harmony), not through this "
            "template: this is what the template writes, not what the model receives."
        )
    if _MISTRAL.search(name) or any(marker in template for marker in _MISTRAL_MARKERS):
        notes.append(
            "vLLM renders a Mistral model loaded with Mistral's own tokenizer files "
            "(tekken.json or tokenizer.model.v*) with mistral_common, not this template, "
            "unless it is started with --tokenizer-mode hf."
        )
    if _COHERE.search(name) or _COHERE_MARKER in template:
        notes.append(
            "vLLM renders a Cohere Command model with cohere_melody, not this template "
            "through transformers, when it is started with --tokenizer-mode cohere (by "
            "default it renders the template, as shown)."
        )
    families = [family for pattern, family in _OWN_RENDERERS if pattern.search(name)]
    if _KIMI_K3_MARKER in template and "Kimi K3" not in families:
        families.append("Kimi K3")
    notes += [
        f"vLLM has a renderer of its own for {family} models and does not use their chat "
        "template: this is what the template writes, not what vLLM sends."
        for family in families
    ]
    return notes
