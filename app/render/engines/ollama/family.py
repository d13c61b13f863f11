"""What Ollama decides by a model's family: Harmony for gpt-oss.

The family is the model config's `model_family`: `ollama create` sets it to the GGUF's
`general.architecture` (`server/create.go`), and a registry model's config blob carries
it. Facts read in ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7:

- `shouldUseHarmony` (`server/routes.go`): the family is "gptoss" or "gpt-oss" and the
  model's TEMPLATE contains both "<|start|>" and "<|end|>".
- A model that uses Harmony never prefers the GGUF's chat template (`GetModel` in
  `server/images.go` skips `shouldPreferChatTemplate` for it): its TEMPLATE renders,
  even where the chat template has more capabilities and `OLLAMA_GO_TEMPLATE` is unset.
- /api/chat reads its answers with the `harmony` parser when the Modelfile names no
  PARSER, and takes a think level "max" as "high" (Harmony knows low, medium and high).
- A gpt-oss model is thinking-capable whatever its template (`modelFamilyCapabilities`),
  so /api/chat turns thinking on when the request does not say, and never refuses it.
"""

from __future__ import annotations

#: The families Ollama treats as gpt-oss.
GPT_OSS = ("gptoss", "gpt-oss")
#: The tags `shouldUseHarmony` looks for in the TEMPLATE.
HARMONY_TAGS = ("<|start|>", "<|end|>")
#: The parser Harmony reads with.
HARMONY = "harmony"


def is_gpt_oss(family: str | None) -> bool:
    """Whether Ollama treats a model of `family` as gpt-oss."""
    return family in GPT_OSS


def has_harmony_tags(go_template: str | None) -> bool:
    """Whether a TEMPLATE has both tags `shouldUseHarmony` looks for."""
    return go_template is not None and all(tag in go_template for tag in HARMONY_TAGS)


def uses_harmony(family: str | None, go_template: str | None) -> bool:
    """`shouldUseHarmony`: a gpt-oss model whose TEMPLATE has Harmony's tags."""
    return is_gpt_oss(family) and has_harmony_tags(go_template)


def harmony_think(think: bool | str | None) -> bool | str | None:
    """The think value Harmony gets: "max" is taken as "high"."""
    return "high" if think == "max" else think


def harmony_reasons(family: str | None, go_template: str | None) -> list[str]:
    """The sentences on Harmony for a model of `family` (None: not known) rendering
    `go_template`; none when the TEMPLATE lacks Harmony's tags."""
    if not has_harmony_tags(go_template):
        return []
    if family is None:
        return [
            "It has Harmony's <|start|> and <|end|>: were the model's family gpt-oss (its "
            "GGUF's general.architecture gptoss), Ollama would use Harmony, rendering this "
            "TEMPLATE and reading the answer with its harmony parser. The model's family is "
            "not known here (load its GGUF or its registry model to tell)."
        ]
    if not is_gpt_oss(family):
        return [
            f"It has Harmony's <|start|> and <|end|>, but the model's family is {family}, not "
            "gpt-oss: Ollama does not use Harmony for it."
        ]
    return [
        f"The model's family is {family} and the TEMPLATE has Harmony's <|start|> and "
        "<|end|>: Ollama uses Harmony. It renders this TEMPLATE whatever the GGUF's chat "
        "template offers, reads the answer with its harmony parser (unless the Modelfile "
        "names a PARSER), takes a think level max as high, and counts the model as "
        "thinking-capable."
    ]
