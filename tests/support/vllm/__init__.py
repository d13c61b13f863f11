"""Cases of vLLM's own tests (tests/renderers/test_chat_utils.py and test_hf.py), as data.

Each reproduced case is the input vLLM's test gives and the result it asserts: facts
about vLLM, written here as our own data. Cases that need something this playground
does not have (a model's multimodal processor or a Hub template) are listed in
`NOT_REPRODUCIBLE` with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.render.engines.vllm.answers.registry import REASONING_PARSERS, TOOL_PARSERS
from app.render.engines.vllm.answers.suggest import suggest

#: What vLLM itself rendered for the shared templates × the corpus (`bench/record_vllm.py`).
RECORDED = Path(__file__).with_name("recorded.json")

#: vLLM's own conversations, recorded beside the corpus: the cases its rules single out
#: (several system messages, a system message after a user's, developer and system
#: together, tools with a system message, reasoning under both keys). The corpus is not
#: changed for them: other engines' recordings are made against its SHA-256.
CONVERSATIONS = Path(__file__).with_name("conversations.json")

#: test_chat_utils.py: messages, the content format, and the conversation vLLM parses.
PARSE_CASES: list[dict[str, Any]] = [
    {
        "test": "test_parse_chat_messages_empty_system[string]",
        "content_format": "string",
        "messages": [
            {"role": "system", "content": ""},
            {"role": "user", "content": [{"type": "text", "text": "Who are you?"}]},
        ],
        "expected": [
            {"role": "system", "content": ""},
            {"role": "user", "content": "Who are you?"},
        ],
    },
    {
        "test": "test_parse_chat_messages_empty_system[openai]",
        "content_format": "openai",
        "messages": [
            {"role": "system", "content": ""},
            {"role": "user", "content": [{"type": "text", "text": "Who are you?"}]},
        ],
        "expected": [
            {"role": "system", "content": [{"type": "text", "text": ""}]},
            {"role": "user", "content": [{"type": "text", "text": "Who are you?"}]},
        ],
    },
    {
        "test": "test_parse_chat_messages_context_text_format",
        "content_format": "openai",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "What's in this text?"}]},
            {"role": "assistant", "content": "Some stuff."},
            {"role": "user", "content": "What about this one?"},
        ],
        "expected": [
            {"role": "user", "content": [{"type": "text", "text": "What's in this text?"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Some stuff."}]},
            {"role": "user", "content": [{"type": "text", "text": "What about this one?"}]},
        ],
    },
    {
        # The image's URL is fetched by vLLM's media connector; its value plays no part
        # in the conversation, so any URL stands for the test's data URL.
        "test": "test_parse_chat_messages_openai_format_image_url",
        "content_format": "openai",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
                    {"type": "text", "text": "What's in the image?"},
                ],
            }
        ],
        "expected": [
            {
                "role": "user",
                "content": [{"type": "image"}, {"type": "text", "text": "What's in the image?"}],
            }
        ],
    },
    {
        "test": "test_parse_chat_messages_include_thinking_chunk",
        "content_format": "openai",
        "messages": [
            {
                "role": "system",
                "content": [
                    {"type": "text", "text": "You are a helpful assistant."},
                    {
                        "type": "thinking",
                        "closed": True,
                        "thinking": "Only return the answer when you are confident.",
                    },
                ],
            },
            {"role": "user", "content": "What is 2+2?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me think about it."},
                    {"type": "thinking", "closed": True, "thinking": "2+2 = 4"},
                    {"type": "text", "text": "The answer is 4."},
                ],
            },
        ],
        "expected": [
            {
                "role": "system",
                "content": [
                    {"type": "text", "text": "You are a helpful assistant."},
                    {"type": "text", "text": "Only return the answer when you are confident."},
                ],
            },
            {"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me think about it."},
                    {"type": "text", "text": "2+2 = 4"},
                    {"type": "text", "text": "The answer is 4."},
                ],
            },
        ],
    },
]

#: Marks a tool call whose `arguments` key is absent.
ABSENT = object()


def _arguments(test: str, given: list[Any], expected: list[Any]) -> dict[str, Any]:
    return {"test": f"test_{test}", "given": given, "expected": expected}


#: test_chat_utils.py, `_postprocess_messages`: tool-call arguments in, arguments out.
ARGUMENT_CASES: list[dict[str, Any]] = [
    _arguments("postprocess_messages_null_arguments_string", ["null"], [{}]),
    _arguments("tool_call_arguments_dict_passthrough", [{"a": 1}], [{"a": 1}]),
    _arguments("tool_call_arguments_valid_object_string", ['{"a": 1}'], [{"a": 1}]),
    _arguments(
        "tool_call_arguments_malformed_json_small",
        ['{"cmd": "mkdir -p /tmp/mmadtest && cat > /tmp/mmadtest'],
        [{}],
    ),
    _arguments(
        "tool_call_arguments_malformed_json_large",
        ['{"filepath": "src/main.py", "contents": "' + "x" * 18000],
        [{}],
    ),
    *(
        _arguments(f"tool_call_arguments_valid_json_non_object[{text}]", [text], [{}])
        for text in ("[]", "42", "true", '"hello"', "null")
    ),
    _arguments("tool_call_arguments_missing_or_empty[None]", [ABSENT], [{}]),
    _arguments("tool_call_arguments_missing_or_empty[]", [""], [{}]),
    _arguments(
        "tool_call_arguments_multiple_independent", ['{"a": 1}', '{"cmd": "'], [{"a": 1}, {}]
    ),
]

#: test_hf.py, `resolve_chat_template_kwargs` with Qwen3's template: the kwargs the request
#: gives, and those that reach `apply_chat_template` (vLLM's expected set).
KWARGS_CASE: dict[str, Any] = {
    "test": "test_resolve_chat_template_kwargs[Qwen/Qwen3-8B]",
    "template": "Qwen-Qwen3-0.6B.jinja",
    "given": [
        "unsed_kwargs_1", "unsed_kwargs_2", "continue_final_message", "tools",
        "add_generation_prompt", "add_vision_id", "enable_thinking",
    ],
    "expected": ["enable_thinking", "add_generation_prompt", "continue_final_message", "tools"],
    "refused_with": ["chat_template", "tokenize"],
}  # fmt: skip

_PLACEHOLDER = (
    "a string-format conversation with media: the placeholder text comes from the model's "
    "multimodal processor ({model}), which needs the model's files and vLLM itself"
)
_PHI3V = _PLACEHOLDER.format(model="microsoft/Phi-3.5-vision-instruct")
_OMNI = _PLACEHOLDER.format(model="Qwen/Qwen2.5-Omni-7B")
_AUDIO = _PLACEHOLDER.format(model="Qwen/Qwen2-Audio-7B-Instruct")
_KIMI = _PLACEHOLDER.format(model="moonshotai/Kimi-K2.5 vision chunks")
_LIMIT = "media limits of the served model (limit_mm_per_prompt), a server setting with media data"
_HUB = "needs {what}, which is neither in ../shared nor in templates_lib"

#: Conversation, prompt and format cases of vLLM's tests this suite cannot reproduce.
NOT_REPRODUCIBLE: dict[str, str] = {
    **{
        f"test_parse_chat_messages_{name}": _PHI3V
        for name in (
            "single_image", "single_image_with_uuid", "single_empty_image_with_uuid",
            "single_image_with_bad_uuid_format", "multiple_images_with_uuids",
            "multiple_empty_images_with_uuids", "mixed_empty_images_with_uuids",
            "single_image_with_uuid_async", "single_empty_image_with_uuid_async",
            "multiple_images_with_uuids_async", "multiple_empty_images_with_uuids_async",
            "multiple_images_with_partial_uuids_async", "single_image_async",
            "multiple_images", "empty_pil_image_with_uuid", "empty_image_embeds_with_uuid",
            "multiple_image_embeds", "multiple_image_embeds_with_uuids",
            "multiple_image_embeds_async", "empty_image_embeds_with_uuid_async",
            "empty_dict_image_embeds", "multiple_images_async", "placeholder_already_in_prompt",
            "placeholder_one_already_in_prompt", "multiple_images_across_messages",
            "multiple_images_with_uuids_across_messages", "multiple_images_uncommon_input",
            "multiple_images_interleave", "interleave_placeholder_overcount_raises",
            "multiple_images_interleave_async", "multiple_images_with_uuids_interleave_async",
            "multiple_images_multiple_messages_interleave",
            "multiple_images_with_uuids_multiple_messages_interleave",
            "multiple_images_interleave_with_placeholders",
        )
    },
    **{
        f"test_parse_chat_messages_{name}": _OMNI
        for name in (
            "multiple_dict_image_embeds[False]", "multiple_dict_image_embeds[True]",
            "multiple_modals_multiple_messages_interleave",
            "multiple_modals_with_uuids_multiple_messages_interleave",
            "multiple_modals_with_uuids_multiple_empty_media_messages_interleave",
            "multiple_modals_with_partial_uuids_multiple_messages_interleave",
            "video_and_video_embeds_mixed",
        )
    },
    **{
        f"test_parse_chat_messages_single_empty_audio_with_uuid{suffix}[{audio}]": _AUDIO
        for suffix in ("", "_async")
        for audio in ("None", "{}", "empty-data")
    },
    **{
        f"test_parse_chat_messages_{kind}_vision_chunk{uuid}{sync}": _KIMI
        for kind in ("image", "video", "mixed")
        for uuid in ("", "_with_uuid")
        for sync in ("", "_async")
    },
    "test_parse_chat_messages_rejects_too_many_images_in_one_message": _LIMIT,
    "test_parse_chat_messages_rejects_too_many_images_across_messages": _LIMIT,
    **{
        f"test_get_gen_prompt[{n}]": _HUB.format(what="vLLM's examples/template_chatml.jinja")
        for n in range(3)
    },
    "test_resolve_chat_template_kwargs[Qwen/Qwen2-VL-2B-Instruct]": _HUB.format(
        what="Qwen2-VL's template"
    ),
    **{
        f"test_resolve_content_format_hf_defined[{model}]": _HUB.format(what=f"{model}'s template")
        for model in (
            "microsoft/Phi-3.5-vision-instruct", "Qwen/Qwen2-VL-2B-Instruct",
            "Qwen/Qwen2.5-VL-3B-Instruct", "fixie-ai/ultravox-v0_5-llama-3_2-1b",
            "Qwen/Qwen2-Audio-7B-Instruct", "meta-llama/Llama-Guard-3-1B",
        )
    },
    **{
        f"test_resolve_content_format_fallbacks[{model}]": _HUB.format(
            what=f"vLLM's fallback template for {model}"
        )
        for model in (
            "Salesforce/blip2-opt-2.7b", "facebook/chameleon-7b", "deepseek-ai/deepseek-vl2-tiny",
            "adept/fuyu-8b", "google/paligemma-3b-mix-224", "Qwen/Qwen-VL", "Qwen/Qwen-VL-Chat",
        )
    },
    **{
        f"test_resolve_content_format_examples[{name}]": _HUB.format(
            what=f"vLLM's examples/{name}"
        )
        for name in (
            "template_alpaca.jinja", "template_baichuan.jinja", "template_chatglm.jinja",
            "template_chatglm2.jinja", "template_chatml.jinja", "template_dse_qwen2_vl.jinja",
            "template_falcon_180b.jinja", "template_falcon.jinja", "template_inkbot.jinja",
            "template_teleflm.jinja", "template_vlm2vec_phi3v.jinja",
            "template_vlm2vec_qwen2vl.jinja", "tool_chat_template_granite_20b_fc.jinja",
            "tool_chat_template_hermes.jinja", "tool_chat_template_internlm2_tool.jinja",
            "tool_chat_template_llama3.1_json.jinja", "tool_chat_template_llama3.2_json.jinja",
            "tool_chat_template_mistral_parallel.jinja", "tool_chat_template_mistral.jinja",
        )
    },
}  # fmt: skip

NOT_REPRODUCIBLE.update(
    {
        f"test_glm_tool_results.py::{name}": (
            "GLM-5's tool-result reordering, which vLLM applies by the model's architecture "
            "(config.json), which a render request does not carry"
        )
        for name in (
            *(f"test_ordering_and_all_or_nothing_fallback[{n}]" for n in range(8)),
            "test_nested_outputs_expand_without_losing_following_messages",
            *(f"test_inapplicable_requests_keep_both_original_inputs[{n}]" for n in range(4)),
            *(f"test_unrecognized_template_is_not_partially_applied[{n}]" for n in range(4)),
            *(f"test_template_text_edits_do_not_require_version_hashes[{n}]" for n in range(2)),
            *(
                f"test_shared_renderer_keeps_preparation_and_template_paired[{n}]"
                for n in range(12)
            ),
        )
    }
)


def suggest_each(templates: dict[str, str]) -> dict[str, tuple[str, str]]:
    """The (tool, reasoning) pair `suggest` picks for each template by name, among the
    registered parsers (the table tests/support/vllm/answers/suggestions.json records)."""
    tools, reasonings = set(TOOL_PARSERS), set(REASONING_PARSERS)
    pairs = {}
    for name, text in templates.items():
        found = suggest(text, tools, reasonings)
        pairs[name] = (found.tool, found.reasoning)
    return pairs
