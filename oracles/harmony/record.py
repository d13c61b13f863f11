"""Record what the real `openai-harmony` and vLLM's `HarmonyParser` make of Harmony text.

Run it with the python of a side environment that has `openai-harmony==0.0.8` (and, for
the vLLM part, `vllm==0.33.0`: `oracles/vllm/record.py --setup` makes one), never the app's:

    SIDE/bin/python oracles/harmony/record.py --vocab DIR

`DIR` holds `o200k_base.tiktoken` (the package checks its sha256, 446a9538...; it reads
`TIKTOKEN_ENCODINGS_BASE` instead of downloading). The npm package `tiktoken` ships the
same ranks in `encoders/o200k_base.json` (`bpe_ranks`: lines of `! OFFSET TOKEN...`);
`--vocab-from FILE` rebuilds the file from there and checks the hash.

Writes `oracles/harmony/recorded.json` (the messages `parse_messages_from_completion_
tokens` returns, or its error, per case, strict and not) and, when vLLM imports,
`oracles/vllm/answers/harmony.json` (what `HarmonyParser.parse` returns with both
parsers on, the reasoning parser alone and the tool parser alone), and fills the `text`
of `oracles/vllm/parser_cases/harmony.json` from its message specs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ORACLES = HERE.parent
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

RECORDED_ABOUT = (
    "What openai-harmony's parse_messages_from_completion_tokens(encode(text, "
    "allowed_special='all'), role) returns for each text, strict (the default) and not: "
    "Message.to_dict() of each message, or the HarmonyError text. Recorded by "
    "oracles/harmony/record.py."
)
VLLM_ABOUT = (
    "What vLLM's HarmonyParser.parse(model_output_token_ids=encode(text)) returns, as its "
    "serving_chat calls it for a gpt_oss model: with --tool-call-parser openai and "
    "--reasoning-parser openai_gptoss, the reasoning parser alone, the tool parser alone. "
    "tool_calls are [name, arguments]. Recorded by oracles/harmony/record.py."
)

#: Broken and borderline Harmony, beside the package's and vLLM's test inputs.
MALFORMED = [
    "",
    "Just plain text, no markup.",
    "<|channel|>final<|message|>",
    "<|channel|>final",
    "<|channel|><|message|>hi",
    "<|channel|>analysis<|message|>think<|end|>",
    "<|channel|>analysis<|message|>think<|end|>garbage<|start|>assistant<|channel|>final"
    "<|message|>ok",
    "<|channel|>analysis<|message|>think<|end|><|start|>assistant",
    "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final",
    "<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{bad json",
    "<|channel|>commentary to=functions.get_weather code<|message|>print(1)",
    "<|channel|>commentary to=python<|message|>print(1)",
    "<|channel|>commentary to=browser.search<|message|>{}",
    "<|channel|>commentary to=container.exec json<|message|>{}",
    "<|channel|>commentary to=assistant<|message|>x",
    "<|channel|>commentary to=functions.<|message|>{}",
    "<|channel|>final<|message|>a<|end|><|start|>user<|message|>b",
    "<|channel|>final<|message|>a<|end|><|start|>functions.get_weather to=assistant"
    "<|channel|>commentary<|message|>{}",
    "<|channel|>final extra words<|message|>x",
    "<|channel|>final<|message|>x<|return|><|start|>assistant<|channel|>final<|message|>y",
    "<|channel|>final<|message|>a <|channel|> b <|start|> c <|constrain|>",
    "<|channel|>final<|message|>x<|endoftext|>y<|reserved_200013|>",
    "<|channel|>analysis\u00a0<|message|>x",
    "<|channel|>analysis\u2003x<|message|>y",
    "assistant<|channel|>final<|message|>x",
    '<|channel|>commentary to=functions.f<|message|>{"a": NaN, "b": 1e400}',
    '<|channel|>commentary to=functions.f json<|message|>{"a":"\u00e9\u4e2d", "b" :[1,2]}',
    "<|channel|>final<|message|><|end|>",
    "<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|>ok",
    "<|start|>assistant<|channel|>final<|message|>x",
    "\n<|channel|>final<|message|>x",
    "to=functions.get_weather <|constrain|>json<|message|>{}",
    ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>'
    "<|start|>assistant to=functions.get_local_time<|channel|>commentary json<|message|>"
    '{"city": "Paris"}<|call|>',
    "<|channel|>final<|message|>x<|end|>\n<|start|>assistant<|channel|>final<|message|>y",
    "<|channel|>commentary<|message|>pre<|end|><|start|>assistant<|channel|>final<|message|>done",
    "<|channel|>final<|message|>x<|end|><|start|>assistant to=functions.f<|channel|>commentary"
    " json<|message|>{}",
    "<|channel|>final <|constrain|>json<|message|>{}",
    "<|channel|>commentary to=functions.f to=functions.g json<|message|>{}",
    "<|channel|>commentary a b c<|message|>{}",
    "<|channel|>analysis<|message|>t<|call|><|start|>assistant<|channel|>analysis<|message|>u",
    "<|channel|>commentary to=functions.f <|constrain|>xml<|message|><a/>",
    "<|channel|>commentary to=functions.f<|message|>[[[[[[[[[[[[",
    "<|channel|>final<|message|>x<|end|><|end|><|start|><|start|>assistant<|channel|>final"
    "<|message|>y",
    "<|channel|>final<|message|>x<|end|><|start|>assistant<|message|>no channel",
    "<|channel|>final<|message|>x<|end|><|start|>tool<|message|>y",
    "<|channel|>final<|message|>x<|end|><|start|>mystery<|message|>y",
]


#: Pieces the seeded random cases are strung from.
FUZZ_PIECES = (
    "<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>",
    "<|call|>", "<|endoftext|>", "assistant", "user", "tool", "analysis", "final",
    "commentary", " to=functions.f", " to=python", "to=", " json", " code", " ", "\n", "x",
    '{"a": 1}', "{", "functions.g", " a b",
)  # fmt: skip


def fuzz_texts(count: int = 200, seed: int = 23) -> list[str]:
    """Random strings of Harmony pieces (the same ones each run)."""
    import random

    rng = random.Random(seed)
    return [
        "".join(rng.choice(FUZZ_PIECES) for _ in range(rng.randint(1, 14))) for _ in range(count)
    ]


def build_vocab(source: Path, out_dir: Path) -> None:
    """Rebuild `o200k_base.tiktoken` from the npm `tiktoken` package's ranks."""
    ranks = json.loads(source.read_text())["bpe_ranks"]
    pairs = []
    for line in ranks.split("\n"):
        if line:
            _, offset, *tokens = line.split(" ")
            pairs += [(int(offset) + i, token) for i, token in enumerate(tokens)]
    data = "".join(f"{token} {rank}\n" for rank, token in sorted(pairs)).encode()
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        sys.exit("the rebuilt o200k_base.tiktoken does not have the expected sha256")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "o200k_base.tiktoken").write_bytes(data)


def corpus() -> list[dict]:
    """Every text to record, named: the package's test inputs, the menu, broken ones."""
    cases = json.loads((HERE / "cases.json").read_text())["cases"]
    out = [
        {"name": f"harmony_test/{c['name']}", "text": c["text"], "role": c["role"]} for c in cases
    ]
    menu = json.loads((REPO / "tests" / "support" / "answers" / "completions.json").read_text())[
        "entries"
    ]
    for entry in menu:
        if "gpt-oss" in entry["template"]:
            name = f"menu/{entry['template']}/{entry['kind']}"
            out.append({"name": name, "text": entry["completion"], "role": "assistant"})
    for i, text in enumerate(MALFORMED):
        out.append({"name": f"malformed/{i:02d}", "text": text, "role": "assistant"})
    for i, text in enumerate(fuzz_texts()):
        out.append({"name": f"fuzz/{i:03d}", "text": text, "role": "assistant" if i % 3 else None})
    return out


def message_json(message) -> dict:
    data = message.to_dict()
    data["role"] = str(data["role"].value if hasattr(data["role"], "value") else data["role"])
    return data


def record_harmony(enc, cases: list[dict]) -> list[dict]:
    """`parse_messages_from_completion_tokens` on each case, strict and lenient."""
    from openai_harmony import HarmonyError, Role

    out = []
    for case in cases:
        tokens = enc.encode(case["text"], allowed_special="all")
        role = None if case["role"] is None else Role(case["role"])
        row = {"name": case["name"], "text": case["text"], "role": case["role"]}
        for strict in (True, False):
            try:
                messages = enc.parse_messages_from_completion_tokens(tokens, role, strict=strict)
                result = {"messages": [message_json(m) for m in messages]}
            except HarmonyError as error:
                result = {"error": str(error)}
            row["strict" if strict else "lenient"] = result
        out.append(row)
    return out


def render_response(enc, spec: dict) -> str:
    """The model output of a vLLM test: its response messages rendered after its prompt,
    as the test's `get_model_output_tokens` does."""
    from openai_harmony import Conversation, Message, RenderConversationConfig, Role

    def build(m: dict):
        msg = Message.from_role_and_content(Role(m["role"]), m["text"])
        for key, with_ in (("channel", "with_channel"), ("recipient", "with_recipient")):
            if m.get(key) is not None:
                msg = getattr(msg, with_)(m[key])
        if m.get("content_type") is not None:
            msg = msg.with_content_type(m["content_type"])
        return msg

    config = RenderConversationConfig(auto_drop_analysis=False)
    prompt = [build(m) for m in spec["prompt"]]
    full = prompt + [build(m) for m in spec["response"]]
    p = enc.render_conversation_for_completion(
        Conversation.from_messages(prompt), Role.ASSISTANT, config=config
    )
    f = enc.render_conversation_for_completion(
        Conversation.from_messages(full), Role.ASSISTANT, config=config
    )
    assert f[: len(p)] == p
    # The rendering ends in the next turn's `<|start|>assistant`, which no model generates
    # (it stops at `<|call|>` or `<|return|>`): the case keeps what precedes it.
    return enc.decode_utf8(f[len(p) :]).removesuffix("<|start|>assistant")


def record_vllm(enc, cases: list[dict]) -> list[dict]:
    """vLLM 0.33.0's `HarmonyParser.parse` on each case, for each pair of parsers."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.harmony import HarmonyParser
    from vllm.reasoning.gptoss_reasoning_parser import GptOssReasoningParser
    from vllm.tool_parsers.gptoss_tool_parser import GptOssToolParser

    class Tokenizer:  # the parser decodes with it only to recover a broken last message
        def decode(self, ids, skip_special_tokens=False):
            return enc.decode_utf8(ids)

        def get_vocab(self):
            return {}

    request = ChatCompletionRequest(
        model="openai/gpt-oss-20b", messages=[{"role": "user", "content": "Hi"}]
    )
    pairs = {
        "openai+openai_gptoss": (True, True),
        "openai_gptoss": (True, False),
        "openai": (False, True),
    }
    out = []
    for case in cases:
        tokens = enc.encode(case["text"], allowed_special="all")
        row = {"name": case["name"], "text": case["text"]}
        for label, (reasoning_on, tools_on) in pairs.items():
            HarmonyParser.reasoning_parser_cls = GptOssReasoningParser if reasoning_on else None
            HarmonyParser.tool_parser_cls = GptOssToolParser if tools_on else None
            try:
                parser = HarmonyParser(Tokenizer(), None)
                reasoning, content, calls = parser.parse("", request, model_output_token_ids=tokens)
                calls = None if calls is None else [[c.name, c.arguments] for c in calls]
                row[label] = {"reasoning": reasoning, "content": content, "tool_calls": calls}
            except Exception as error:  # recorded as vLLM's answer
                row[label] = {"exception": f"{type(error).__name__}: {error}"}
        out.append(row)
    return out


def main() -> None:
    """Record the fixtures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=Path, required=True, help="folder of o200k_base.tiktoken")
    parser.add_argument("--vocab-from", type=Path, help="npm tiktoken's encoders/o200k_base.json")
    args = parser.parse_args()
    if args.vocab_from:
        build_vocab(args.vocab_from, args.vocab)
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(args.vocab)
    import openai_harmony
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    enc = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    version = getattr(openai_harmony, "__version__", "0.0.8")
    cases = corpus()
    vllm_cases_path = ORACLES / "vllm" / "parser_cases" / "harmony.json"
    vllm_cases = json.loads(vllm_cases_path.read_text())
    for case in vllm_cases["cases"]:
        if "response" in case:
            case["text"] = render_response(enc, case)
    vllm_cases_path.write_text(json.dumps(vllm_cases, indent=1, ensure_ascii=False) + "\n")
    cases += [
        {"name": f"vllm_test/{c['name']}", "text": c["text"], "role": "assistant"}
        for c in vllm_cases["cases"]
    ]
    recorded = {
        "about": RECORDED_ABOUT,
        "openai_harmony": version,
        "cases": record_harmony(enc, cases),
    }
    out = HERE / "recorded.json"
    out.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n")
    print(f"{out.relative_to(REPO)}: {len(cases)} cases")
    try:
        import vllm
    except ImportError:
        print("vllm is not installed here: the vLLM fixture is not recorded")
        return
    fixture = {
        "parser": "harmony",
        "vllm": vllm.__version__,
        "openai_harmony": version,
        "about": VLLM_ABOUT,
        "cases": record_vllm(enc, cases),
    }
    by_name = {row["name"]: row for row in fixture["cases"]}
    for case in vllm_cases["cases"]:
        # Both parsers on, unless the case names the pair its test runs (`pair`); the
        # fields its test checks (`expect`).
        got = by_name[f"vllm_test/{case['name']}"][case.get("pair", "openai+openai_gptoss")]
        case["holds_in_vllm_0_33_0"] = all(got.get(k) == v for k, v in case["expect"].items())
    vllm_cases_path.write_text(json.dumps(vllm_cases, indent=1, ensure_ascii=False) + "\n")
    out = ORACLES / "vllm" / "answers" / "harmony.json"
    out.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
    print(f"{out.relative_to(REPO)}: {len(cases)} cases")


if __name__ == "__main__":
    main()
