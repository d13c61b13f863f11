"""Text Generation Inference as the oracle of the tgi engine: its own tests, read out of
its source as data (`tgi_tests.json`)."""

from __future__ import annotations

from pathlib import Path

#: TGI's own template and tool-call tests, as data.
TGI_TESTS = Path(__file__).with_name("tgi_tests.json")
