"""llama.cpp's specialized chat handlers, in the order it tries them.

`common_chat_try_specialized_template` (common/chat.cpp, build b11434) checks the
template source for each family's markers in a fixed order and hands the first match to
that family's `common_chat_params_init_*` (common/parsers/); no match means the
differential autoparser. Each module here is one family and exposes

- `NAME`: the handler's name;
- `matches(source) -> bool`: llama.cpp's detection for it;
- `params(source, inputs) -> ChatParams`: the format, generation prompt and PEG parser,
  or `REPRODUCED = False` when only the detection is reproduced (LLM-jp Harmony, Ling 3.0).

`HANDLERS` lists them in llama.cpp's order (LFM2 and LFM2.5, two checks in a row for the
same handler, are one module).
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: The handler modules' names, in common_chat_try_specialized_template's order.
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


def _load(names: tuple[str, ...]) -> tuple[ModuleType, ...]:
    """The modules that exist, in order."""
    modules = []
    for name in names:
        qualified = f"{__name__}.{name}"
        try:
            modules.append(importlib.import_module(qualified))
        except ModuleNotFoundError as error:
            if error.name != qualified:
                raise  # a module that exists but fails to import is a bug, not a gap
    return tuple(modules)


#: The handler modules, in llama.cpp's detection order.
HANDLERS: tuple[ModuleType, ...] = _load(ORDER)


def select(source: str) -> ModuleType | None:
    """The handler llama.cpp picks for this template source, or None (the autoparser, or
    a handler whose parser is not reproduced: the caller asks the renderer's handlers)."""
    chosen = next((handler for handler in HANDLERS if handler.matches(source)), None)
    return chosen if getattr(chosen, "REPRODUCED", True) else None
