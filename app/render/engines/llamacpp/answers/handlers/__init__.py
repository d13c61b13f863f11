"""llama.cpp's specialized chat handlers: one record per family, in the order it tries them.

`common_chat_try_specialized_template` (common/chat.cpp, build b11434) checks the
template source for each family's markers in a fixed order and hands the first match to
that family's `common_chat_params_init_*` (common/parsers/); no match means the
differential autoparser. Each module here is one family and ends with its record,
`FAMILY` (`family.Family`): llama.cpp's detection (`matches`), what the handler does to
the prompt and whether it thinks by default (`prompt`), and the format, generation
prompt and PEG parser it derives (`params`; None for LLM-jp Harmony and Ling 3.0, whose
parsers are not reproduced).

`FAMILIES` lists them in llama.cpp's order (LFM2 and LFM2.5, two checks in a row for the
same handler, are one record). The prompt (`apply`, `prompt`), the thinking default
(`autoparser_cache`) and the answer parser (`derive`) all read this one table.
"""

from __future__ import annotations

import importlib

from app.render.engines.llamacpp.answers.handlers.family import Family

#: The family modules' names, in common_chat_try_specialized_template's order.
ORDER = (
    "ministral_3",
    "llm_jp_harmony",
    "gpt_oss",
    "muse_glimmer",
    "functionary_v3_2",
    "kimi_k2",
    "kimi_k3",
    "ling3",
    "cohere2moe",
    "lfm2",
    "gigachat_v3",
    "minimax_m3",
    "deepseek_v3_2",
    "gemma4",
    "minicpm5",
    "qwen3_coder",
)

#: The family records, in llama.cpp's detection order.
FAMILIES: tuple[Family, ...] = tuple(
    importlib.import_module(f"{__name__}.{name}").FAMILY for name in ORDER
)


def family_of(source: str) -> Family | None:
    """The family common_chat_try_specialized_template picks, or None (the autoparser)."""
    return next((family for family in FAMILIES if family.matches(source)), None)


def select(source: str) -> Family | None:
    """The family whose parser reads answers to this template: None for the autoparser,
    and for a family whose parser is not reproduced."""
    family = family_of(source)
    return family if family is not None and family.params is not None else None
