"""What the real llama.cpp renders: `oracles/llamacpp/renders.json`.

llama-server's `POST /apply-template` parses the request as a chat completion
(`oaicompat_chat_params_parse`: its checks, the prefill of a final assistant message,
the kwargs) and answers the prompt `common_chat_templates_apply` makes. The harness
(`oracles/llamacpp/harness/`) takes the same steps with the library of the build being
recorded, with the model's vocabulary loaded as the server loads it (BOS/EOS texts, and
"the vocabulary adds BOS", which trims a leading BOS from the prompt).

The templates and conversations are the shared recording's (`renders-b10573.json`, made
with a real llama-server of that build): the same 68 templates × 14 conversations, the
same vocabulary (`ggml-vocab-llama-spm.gguf`: `<s>`, `</s>`, BOS added) and the same day.
Per template: whether it loads, its capabilities (`/props` `chat_template_caps`) and per
conversation the prompt or the error text (an HTTP 400 from the server).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from oracles.llamacpp import build as build_mod
from tests.support import REPO
from tests.support.shared_data import LLAMA_SERVER_RENDERS, VOCAB_DIR, template_files

OUT = REPO / "oracles" / "llamacpp" / "renders.json"
VOCAB = "ggml-vocab-llama-spm.gguf"
#: The day of the shared recording, at noon UTC (templates that print the date print it).
RECORDED_ON = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


def conversations() -> list[dict[str, Any]]:
    """The shared recording's conversations (name, messages, tools, kwargs...)."""
    return json.loads(LLAMA_SERVER_RENDERS.read_text(encoding="utf-8"))["cases"]


def harness_line(name: str, source: str, case: dict[str, Any]) -> dict[str, Any]:
    """The /apply-template request for one template and conversation, as a harness line."""
    line: dict[str, Any] = {
        "id": f"{name}|{case['name']}",
        "template": source,
        "vocab": str(VOCAB_DIR / VOCAB),
        "messages": case["messages"],
        "add_generation_prompt": case["add_generation_prompt"],
        "server_checks": True,
        "now": int(RECORDED_ON.timestamp()),
    }
    if case.get("tools"):
        line["tools"] = case["tools"]
    if case.get("kwargs"):
        line["chat_template_kwargs"] = case["kwargs"]
    return line


def _template_entry(answers: list[dict[str, Any]], cases: list[dict[str, Any]]) -> dict:
    """One template's entry from the harness's answers to its conversations."""
    caps = next((a["caps"] for a in answers if "caps" in a), None)
    renders: dict[str, Any] = {}
    for case, answer in zip(cases, answers, strict=True):
        if "error" in answer:
            renders[case["name"]] = {"error": answer["error"]}
        else:
            renders[case["name"]] = answer["prompt"]
    return {"loads": caps is not None, "caps": caps, "renders": renders}


def record(build: Path, llama_cpp: Path, identity: dict[str, str]) -> dict[str, Any]:
    """Render every shared template and conversation with the built harness; the document."""
    program = build_mod.ensure_harness(build, llama_cpp)
    cases = conversations()
    files = template_files()
    lines, names = [], {}
    for path in files:
        source = path.read_text(encoding="utf-8")
        names[path.name] = hashlib.sha256(source.encode("utf-8")).hexdigest()
        lines.extend(harness_line(path.name, source, case) for case in cases)
    answers = build_mod.run_harness(program, lines, build / "renders-stderr.log")
    templates = {}
    for index, path in enumerate(files):
        mine = answers[index * len(cases) : (index + 1) * len(cases)]
        templates[path.name] = {"sha256": names[path.name], **_template_entry(mine, cases)}
    return {
        **identity,
        "recorded_by": "python -m oracles.llamacpp.record",
        "about": (
            "What llama-server's POST /apply-template answers at this build, taken through "
            "the same steps with llama.cpp's own common library (oracles/llamacpp/harness): per "
            "template whether it loads, its capabilities (/props chat_template_caps) and per "
            "conversation the prompt, or the error text (an HTTP 400 from the server)."
        ),
        "request": (
            "POST /apply-template with {messages, add_generation_prompt, tools (when the "
            "case has them), chat_template_kwargs (the case's kwargs)}; default server options"
        ),
        "vocab": f"{VOCAB} (bos <s>, eos </s>, add_bos_token true)",
        "now": RECORDED_ON.isoformat(),
        "cases": cases,
        "templates": templates,
    }


def write(document: dict[str, Any]) -> str:
    """Write the fixture; a one-line summary."""
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(document, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    pairs = sum(len(t["renders"]) for t in document["templates"].values())
    return f"{OUT}: {len(document['templates'])} templates, {pairs} renders"
