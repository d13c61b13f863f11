"""vLLM as the oracle of the vllm engine: its recorders, the cases they run, and what vLLM
0.33.0 answered.

- `record` (`python -m oracles.vllm.record`): what vLLM rendered for the shared templates ×
  the corpus and vLLM's own conversations, into `recorded.json`; `render` is the harness it
  runs in vLLM's environment (`requirements.txt`).
- `record_answers` (`python -m oracles.vllm.record_answers`): what vLLM's answer parsers
  returned, into `answers/`; `parse` is its harness, `answer_cases*` its cases.
- `render_cases`: the cases of vLLM's renderer tests, as data; `parser_cases/` the cases of
  its parser tests, with `expectations` to check them.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent

#: What vLLM itself rendered for the shared templates × the corpus (`record`).
RECORDED = HERE / "recorded.json"

#: vLLM's own conversations, recorded beside the corpus: the cases its rules single out
#: (several system messages, a system message after a user's, developer and system
#: together, tools with a system message, reasoning under both keys). The corpus is not
#: changed for them: other engines' recordings are made against its SHA-256.
CONVERSATIONS = HERE / "conversations.json"

#: What vLLM's answer parsers and `vllm serve` returned (`record_answers`).
ANSWERS = HERE / "answers"

#: vLLM's own parser tests' cases, with the values they expect.
PARSER_CASES = HERE / "parser_cases"

#: (template, conversation): why the engine cannot render that pair as vLLM did.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}
