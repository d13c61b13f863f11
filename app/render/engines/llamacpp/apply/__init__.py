"""common/chat.cpp's apply, ported once: `common_chat_templates_apply` and its data.

`templates_apply` prepares a request (llama-server's checks, the message workarounds,
the thinking default) and yields everything the apply does: the prompt (`prompt`), and
the chat params that a family's handler or the autoparser derives (`derive`), built on
the structs of `types` and `chat_msg`. `autoparser_cache` holds the autoparser's
analyses of a template, so that whether a template thinks is decided once.
"""
