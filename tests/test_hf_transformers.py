"""Uploaded Hugging Face files against transformers loading the same folder.

The playground must offer what `AutoTokenizer.from_pretrained(folder)` has (its special
tokens, all of which are template variables, and its templates) and render what
`apply_chat_template(..., tokenize=False)` renders, byte for byte.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import ClassVar

import pytest
import tokenizers
import tokenizers.models
import tokenizers.pre_tokenizers
import transformers
from transformers import AutoProcessor, AutoTokenizer, PreTrainedTokenizerBase
from transformers.processing_utils import ProcessorMixin

from app.sources.hf import read_hf_files

#: Variables the templates below print, with `-` for one that is not defined.
PRINTED = (
    "bos_token", "eos_token", "unk_token", "pad_token", "boi_token", "eoi_token",
    "image_token", "audio_token", "video_token", "obj_token", "num_token",
    "extra_special_tokens", "additional_special_tokens",
)  # fmt: skip
PRINTING = "".join(f"{name}={{{{ {name} if {name} is defined else '-' }}}};" for name in PRINTED)
TEMPLATE = PRINTING + "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "hello"},
    {"role": "assistant", "content": "world"},
]


def added(content: str) -> dict:
    """A token as `save_pretrained` writes an AddedToken."""
    return {"__type": "AddedToken", "content": content, "special": True, "lstrip": False}


#: Gemma 3's tokenizer_config.json names its image tokens; others name tokens in
#: `extra_special_tokens` (a dict of name -> token, or a plain list), or as AddedTokens.
CONFIGS = {
    "gemma3 image tokens": {
        "bos_token": "<bos>", "eos_token": "<eos>", "unk_token": "<unk>", "pad_token": "<pad>",
        "boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
        "image_token": "<image_soft_token>",
    },
    "AddedTokens and extra_special_tokens as a dict": {
        "bos_token": "<s>", "eoi_token": added("<end_of_image>"),
        "extra_special_tokens": {"audio_token": "<audio>", "video_token": added("<video>")},
        # Neither a string nor an AddedToken: transformers leaves these out.
        "obj_token": {"content": "<obj>"}, "num_token": 5, "add_bos_token": True,
    },
    "extra_special_tokens as a list": {
        "bos_token": "<s>", "boi_token": "<b>", "extra_special_tokens": ["<l1>", "<l2>"],
    },
    "extra_special_tokens win over the config's own": {
        "bos_token": "<s>", "boi_token": "<top>", "image_token": added("<img>"),
        "extra_special_tokens": {
            "boi_token": "<extra>", "image_token": "<img2>", "bos_token": "<B>",
        },
    },
    "additional_special_tokens, the older name": {
        "eos_token": "</s>", "additional_special_tokens": {"audio_token": "<a>"},
    },
    "additional_special_tokens as a list": {
        "eos_token": "</s>", "additional_special_tokens": ["<x>"],
    },
}  # fmt: skip


def tokenizer_json() -> str:
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "hello": 3, "world": 4}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    return tok.to_str()


def write_folder(folder: Path, files: dict[str, str]) -> Path:
    """The upload as a model folder: other `NAME.jinja` files go where transformers looks."""
    for name, text in files.items():
        if name.endswith(".jinja") and name != "chat_template.jinja":
            name = f"additional_chat_templates/{name}"
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def upload(client, files: dict[str, str]) -> dict:
    data = {f"f{i}": (io.BytesIO(t.encode()), n) for i, (n, t) in enumerate(files.items())}
    response = client.post("/api/sources/hf", data=data, content_type="multipart/form-data")
    assert response.status_code == 200, response.get_data()
    return response.json


def render(client, template: str, special_tokens: dict[str, str]) -> str:
    """What the page renders for a source: its template, with its special tokens."""
    body = {"template": template, "messages": MESSAGES, "special_tokens": special_tokens}
    response = client.post("/api/render", json=body)
    assert response.status_code == 200, response.get_data()
    return response.json["prompt"]


@pytest.mark.parametrize("name", CONFIGS)
def test_named_tokens_are_template_variables_as_in_transformers(client, tmp_path, name):
    files = {
        "tokenizer_config.json": json.dumps({**CONFIGS[name], "chat_template": TEMPLATE}),
        "tokenizer.json": tokenizer_json(),
    }
    tokenizer = AutoTokenizer.from_pretrained(write_folder(tmp_path, files))
    expected = tokenizer.apply_chat_template(MESSAGES, tokenize=False)
    source = upload(client, files)
    assert source["special_tokens"] == tokenizer.special_tokens_map, transformers.__version__
    assert render(client, source["templates"]["default"], source["special_tokens"]) == expected
    # In the same order too (the API's JSON sorts keys; the reader does not).
    read = read_hf_files(files).special_tokens
    assert list(read.items()) == list(tokenizer.special_tokens_map.items())


class TextOnlyProcessor(ProcessorMixin):
    """The smallest processor: a tokenizer and a chat template. Its `from_pretrained` is
    transformers' own processor loading, the code that reads `chat_template.json`;
    `AutoProcessor` cannot be used, as a folder without a processor config gives it back
    the tokenizer (see the test below)."""

    attributes: ClassVar[list[str]] = ["tokenizer"]
    tokenizer_class = "AutoTokenizer"

    def __init__(self, tokenizer=None, chat_template=None):
        super().__init__(tokenizer, chat_template=chat_template)


def template(label: str) -> str:
    """A template that says which file it came from, and prints a token and the turns."""
    return (
        label + ":{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
    )


CONFIG = {"bos_token": "<s>", "chat_template": template("CONFIG")}
NAMED = {
    "bos_token": "<s>",
    "chat_template": [
        {"name": "default", "template": template("CONFIG")},
        {"name": "tool_use", "template": template("CONFIG-TOOLS")},
    ],
}
LEGACY = json.dumps({"chat_template": template("LEGACY")})

#: Uploads with a legacy `chat_template.json`, which the tokenizer ignores.
WITH_LEGACY_JSON = {
    "config and chat_template.json": {
        "tokenizer_config.json": json.dumps(CONFIG), "chat_template.json": LEGACY,
    },
    "config, chat_template.jinja and chat_template.json": {
        "tokenizer_config.json": json.dumps(CONFIG), "chat_template.json": LEGACY,
        "chat_template.jinja": template("JINJA"),
    },
    "named templates in the config and chat_template.json": {
        "tokenizer_config.json": json.dumps(NAMED), "chat_template.json": LEGACY,
    },
    "chat_template.json, no template in the config": {
        "tokenizer_config.json": json.dumps({"bos_token": "<s>"}), "chat_template.json": LEGACY,
    },
}  # fmt: skip


def tokenizer_templates(tokenizer) -> dict[str, str]:
    """The tokenizer's templates by name (a single one is `default`)."""
    templates = tokenizer.chat_template
    if templates is None:
        return {}
    return templates if isinstance(templates, dict) else {"default": templates}


@pytest.mark.parametrize("name", WITH_LEGACY_JSON)
def test_default_is_the_tokenizers_template_and_processor_the_processors(client, tmp_path, name):
    files = {**WITH_LEGACY_JSON[name], "tokenizer.json": tokenizer_json()}
    folder = write_folder(tmp_path, files)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    processor = TextOnlyProcessor.from_pretrained(folder)
    source = upload(client, files)
    expected = {**tokenizer_templates(tokenizer), "processor": processor.chat_template}
    assert source["templates"] == expected, transformers.__version__
    specials = source["special_tokens"]
    for template_name, text in source["templates"].items():
        if template_name == "processor":
            want = processor.apply_chat_template(MESSAGES, tokenize=False)
        else:
            named = template_name if isinstance(tokenizer.chat_template, dict) else None
            want = tokenizer.apply_chat_template(MESSAGES, chat_template=named, tokenize=False)
        assert render(client, text, specials) == want, template_name


def test_auto_processor_of_a_tokenizer_folder_is_the_tokenizer(tmp_path):
    """Why the test above loads a processor class of its own: without a processor config,
    `AutoProcessor` gives back the tokenizer, which never reads `chat_template.json`."""
    files = {
        **WITH_LEGACY_JSON["config and chat_template.json"],
        "tokenizer.json": tokenizer_json(),
    }
    loaded = AutoProcessor.from_pretrained(write_folder(tmp_path, files))
    assert isinstance(loaded, PreTrainedTokenizerBase)
    assert loaded.chat_template == template("CONFIG")


def test_no_processor_template_beside_other_template_files(client, tmp_path):
    """transformers' processor refuses a legacy chat_template.json beside template files of
    other names; the tokenizer loads them."""
    files = {
        "tokenizer_config.json": json.dumps(CONFIG),
        "chat_template.json": LEGACY,
        "chat_template.jinja": template("JINJA"),
        "tool_use.jinja": template("TOOLS"),
        "tokenizer.json": tokenizer_json(),
    }
    folder = write_folder(tmp_path, files)
    with pytest.raises(ValueError, match="conflicting files"):
        TextOnlyProcessor.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert upload(client, files)["templates"] == tokenizer_templates(tokenizer)


def test_a_processor_template_named_in_the_config_is_refused(client):
    """A config template named `processor` would hide chat_template.json's."""
    config = {"chat_template": [{"name": "processor", "template": "P"}]}
    files = {"tokenizer_config.json": json.dumps(config), "chat_template.json": LEGACY}
    response = client.post(
        "/api/sources/hf",
        data={f"f{i}": (io.BytesIO(t.encode()), n) for i, (n, t) in enumerate(files.items())},
        content_type="multipart/form-data",
    )
    assert response.status_code == 422
    assert response.json["error"]["file"] == "chat_template.json"


#: Named tokens that clash with the render's own arguments in transformers, and some that
#: are only arguments of `apply_chat_template` and so do not.
TOKEN_NAMES = (
    "tools", "messages", "documents", "add_generation_prompt", "chat_template",
    "conversations", "continue_final_message", "return_assistant_tokens_mask",
    "tokenize", "conversation", "padding", "tokenizer_kwargs",
)  # fmt: skip


@pytest.mark.parametrize("name", TOKEN_NAMES)
def test_a_token_named_like_a_render_argument_fails_as_in_transformers(client, tmp_path, name):
    config = {"bos_token": "<s>", "extra_special_tokens": {name: "<x>"}, "chat_template": TEMPLATE}
    files = {"tokenizer_config.json": json.dumps(config), "tokenizer.json": tokenizer_json()}
    tokenizer = AutoTokenizer.from_pretrained(write_folder(tmp_path, files))
    source = upload(client, files)
    body = {"template": TEMPLATE, "messages": MESSAGES, "special_tokens": source["special_tokens"]}
    answer = client.post("/api/render", json=body)
    try:
        expected = tokenizer.apply_chat_template(MESSAGES, tokenize=False)
    except TypeError as error:
        assert answer.status_code == 422
        assert answer.json["error"]["type"] == "TypeError"
        assert str(error).endswith(answer.json["error"]["message"])
    else:
        assert answer.status_code == 200
        assert answer.json["prompt"] == expected
