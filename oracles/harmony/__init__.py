"""openai-harmony (and vLLM's Harmony parser) as the oracle of the gpt-oss reading.

`python -m oracles.harmony.record` runs openai-harmony's own parser on `cases.json` (its
tests' texts and the Completion menu's gpt-oss answers) into `recorded.json`, and vLLM's
`HarmonyParser` into `oracles/vllm/answers/harmony.json`.
"""

from __future__ import annotations

from pathlib import Path

#: openai-harmony's own test cases and the menu's answers, as data.
CASES = Path(__file__).with_name("cases.json")
#: What openai-harmony returned for each case.
RECORDED = Path(__file__).with_name("recorded.json")
