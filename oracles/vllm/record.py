"""Record what vLLM itself renders for the test corpus: `python -m oracles.vllm.record`.

The `vllm` engine reproduces vLLM's chat path; this records that path's real output, so
that the suite checks the engine against vLLM and not against our reading of its code.
vLLM's render path needs no GPU and no compiled kernel, so it runs here on the CPU, in
an environment of its own (`--venv`, default `.vllm-recorder/` in the checkout):
`--setup` makes it with PyTorch's CPU build (`torch==2.13.0`, the file these machines
carry; pip must never pick a CUDA build) and then every package of
`oracles/vllm/requirements.txt` with `--no-deps`, vLLM 0.33.0 and only the
pure-Python packages its chat path imports, pinned.

The corpus is the shared templates (`../shared/upstream/llama.cpp/templates`) × the
suite's conversations (`tests/support/corpus`) and vLLM's own
(`oracles/vllm/conversations.json`: the cases its rules single out, kept out of the
shared corpus, whose hash other recordings carry), each sent as a client sends it: the
messages, tools, documents, `add_generation_prompt`, `continue_final_message` and the
kwargs as `chat_template_kwargs`, the special tokens in the tokenizer, the clock pinned.
`oracles/vllm/render.py` runs each through vLLM (see there) and the answers are written to
`oracles/vllm/recorded.json` with the versions that made them and the SHA-256 of
each template and of both conversation files, so a test can tell when the recording is
stale.

To follow a new vLLM release: change its pin (and its dependencies' ranges) in the
requirements file, `--setup`, record, then fix the engine until `tests/test_vllm_real.py`
passes, and say in the engine which version it follows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from oracles.vllm import CONVERSATIONS, RECORDED
from tests.support import REPO
from tests.support.corpus import CONVERSATIONS_FILE, PINNED_NOW, load_conversations
from tests.support.shared_data import HAVE_SHARED, MISSING, template_files

REQUIREMENTS = Path(__file__).with_name("requirements.txt")
CHILD = Path(__file__).with_name("render.py")
#: The CPU build of PyTorch that vLLM's imports need (the file on these machines' disk).
TORCH = "torch==2.13.0"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_body(case: dict[str, Any]) -> dict[str, Any]:
    """The chat completion request a client sends for a corpus case."""
    body: dict[str, Any] = {"messages": case["messages"]}
    for field in ("tools", "documents"):
        if case.get(field) is not None:
            body[field] = case[field]
    body["add_generation_prompt"] = case["add_generation_prompt"]
    body["continue_final_message"] = case["continue_final_message"]
    if case.get("kwargs"):
        body["chat_template_kwargs"] = case["kwargs"]
    return body


def cases() -> list[dict[str, Any]]:
    """The corpus's conversations, then vLLM's own."""
    return load_conversations() + load_conversations(CONVERSATIONS)


def job() -> tuple[dict[str, Any], dict[str, str]]:
    """Every template × case as one request, and each template's SHA-256."""
    templates = {path.stem: path.read_text(encoding="utf-8") for path in template_files()}
    requests = [
        {
            "key": [name, case["name"]],
            "template": text,
            "special_tokens": case["special_tokens"],
            "body": request_body(case),
        }
        for name, text in sorted(templates.items())
        for case in cases()
    ]
    job = {"pinned_now": PINNED_NOW.isoformat(), "requests": requests}
    return job, {name: sha256(text) for name, text in sorted(templates.items())}


def setup(venv: Path) -> None:
    """Make vLLM's environment: the CPU PyTorch, then the pinned packages, no resolver."""
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, TORCH], check=True)
    subprocess.run([*pip, "--no-deps", "-r", str(REQUIREMENTS)], check=True)


def record(venv: Path) -> dict[str, Any]:
    """Run every request through vLLM; the recording."""
    work, template_sha = job()
    started = time.monotonic()
    finished = subprocess.run(
        [str(venv / "bin" / "python"), str(CHILD)],
        input=json.dumps(work),
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [json.loads(line) for line in finished.stdout.splitlines() if line.startswith("{")]
    versions, answers = lines[0]["versions"], lines[1:]
    if len(answers) != len(work["requests"]):
        raise RuntimeError(f"{len(answers)} answers for {len(work['requests'])} requests")
    renders: dict[str, dict[str, Any]] = {}
    for answer in answers:
        template, case = answer.pop("key")
        renders.setdefault(template, {})[case] = answer
    print(f"{len(answers)} requests in {time.monotonic() - started:.0f} s with {versions}")
    return {
        "versions": versions,
        "pinned_now": work["pinned_now"],
        "corpus_sha256": sha256(CONVERSATIONS_FILE.read_text(encoding="utf-8")),
        "extra_conversations_sha256": sha256(CONVERSATIONS.read_text(encoding="utf-8")),
        "templates": template_sha,
        "renders": renders,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=REPO / ".vllm-recorder")
    parser.add_argument("--setup", action="store_true", help="make or update the environment")
    parser.add_argument("--out", type=Path, default=RECORDED)
    args = parser.parse_args()
    if not HAVE_SHARED:
        sys.exit(MISSING)
    if args.setup:
        setup(args.venv)
    recording = record(args.venv)
    args.out.write_text(json.dumps(recording, ensure_ascii=False, indent=0, sort_keys=True))
    outcomes = [a["outcome"] for cases in recording["renders"].values() for a in cases.values()]
    print(f"wrote {args.out}: {outcomes.count('ok')} prompts, {outcomes.count('error')} errors")


if __name__ == "__main__":
    main()
