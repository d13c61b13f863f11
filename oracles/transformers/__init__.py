"""transformers as the oracle of the transformers engine.

`reference` renders the corpus with the real transformers library (installed with the
test extras), and `parse_response_cases.json` holds transformers' own `parse_response`
tests as data.
"""

from __future__ import annotations

from pathlib import Path

#: transformers' own parse_response tests, as data.
PARSE_RESPONSE_CASES = Path(__file__).with_name("parse_response_cases.json")
