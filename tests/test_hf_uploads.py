"""How `POST /api/sources/hf` reads a multipart upload: every file, and no two of one name."""

from __future__ import annotations

import io
import json

import pytest
from werkzeug.datastructures import MultiDict

CONFIG = {"chat_template": "CONFIG", "bos_token": "<s>"}


def upload(client, parts: list[tuple[str, str, str]]):
    """Send (field, file name, text) parts, several under one field name if so given."""
    data = MultiDict((field, (io.BytesIO(text.encode()), name)) for field, name, text in parts)
    return client.post("/api/sources/hf", data=data, content_type="multipart/form-data")


def test_every_file_under_one_field_name_is_read(client):
    # What `curl -F files=@tokenizer_config.json -F files=@chat_template.jinja` sends.
    response = upload(
        client,
        [
            ("files", "tokenizer_config.json", json.dumps(CONFIG)),
            ("files", "chat_template.jinja", "JINJA"),
            ("files", "tool_use.jinja", "TOOLS"),
        ],
    )
    assert response.status_code == 200, response.get_data()
    assert response.json["templates"] == {"default": "JINJA", "tool_use": "TOOLS"}
    assert response.json["special_tokens"] == {"bos_token": "<s>"}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("files", "chat_template.jinja"), ("files", "chat_template.jinja")),
        (("a", "chat_template.jinja"), ("b", "chat_template.jinja")),
        # The reader knows files by their last path part: these would be one file.
        (("files", "a/tokenizer_config.json"), ("files", "b/tokenizer_config.json")),
    ],
)
def test_two_files_of_one_name_are_400_naming_it(client, first, second):
    response = upload(client, [(*first, json.dumps(CONFIG)), (*second, json.dumps({}))])
    assert response.status_code == 400
    error = response.json["error"]
    assert error["field"] == "files"
    assert second[1].rsplit("/", 1)[-1] in error["message"]
