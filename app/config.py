"""Settings: defaults, then `PLAYGROUND_*` environment variables, then a test dict."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from app.render.limits import RenderLimits
from app.sources.limits import SourceLimits


@dataclass(frozen=True)
class Setting:
    """One `PLAYGROUND_*` variable: its config key, default, parser and meaning."""

    key: str
    default: Any
    parse: Callable[[str], Any]
    help: str

    @property
    def env_name(self) -> str:
        return f"PLAYGROUND_{self.key}"


def _megabytes(text: str) -> int:
    return int(float(text) * 1024 * 1024)


#: Every setting of the playground; docs/running-a-service.md documents each one (a test checks it).
SETTINGS = (
    Setting("CPU_SECONDS", 2.0, float, "Seconds one render may run before its worker is killed."),
    Setting("MEMORY_MB", 512, int, "Memory (MiB) a render worker may add on top of its start."),
    Setting(
        "OUTPUT_CHARS",
        2_000_000,
        int,
        "Characters a render may write, and a message read from a completion may hold.",
    ),
    Setting(
        "TEMPLATE_KB",
        256,
        int,
        "Largest template source accepted (KiB): a chat template (a larger one in an upload"
        " is listed, not kept), or a response_template as JSON (a larger one gets 422).",
    ),
    Setting(
        "RESPONSE_TEMPLATE_ITEMS",
        10_000,
        int,
        "Values (objects, lists, strings, numbers) a tokenizer_config.json's response_template"
        " may hold; more gets 422 naming the limit (real ones hold under 100).",
    ),
    Setting(
        "MODELFILE_KB",
        1024,
        int,
        "Largest Ollama Modelfile read (KiB), and largest template, system or params layer"
        " read from an Ollama registry; larger gets 413 naming the limit.",
    ),
    Setting(
        "MODELFILE_COMMANDS",
        1000,
        int,
        "Commands (FROM, TEMPLATE, PARAMETER, MESSAGE ... lines) an Ollama Modelfile may"
        " hold; more gets 422 naming the line (real ones hold under 50).",
    ),
    Setting(
        "SOURCE_SUMMARY_MB",
        16,
        float,
        "Memory (MiB) the web process may hold for one source's summary (its templates,"
        " special tokens, response template and names, measured as Python holds them); a"
        " larger source gets 422 naming the limit.",
    ),
    Setting(
        "WEB_SOURCES_MB",
        64,
        float,
        "Memory (MiB) each web worker keeps for the summaries of recent sources, measured"
        " the same way; the least recently used are dropped first (and read again from the"
        " database when asked for).",
    ),
    Setting("MAX_BODY_MB", 8, float, "Largest JSON request body (MiB); larger gets 413."),
    Setting(
        "JSON_DEPTH",
        64,
        int,
        "Deepest nesting of lists and objects in a JSON body or field (400 naming where), or"
        " in an uploaded JSON file (422).",
    ),
    Setting(
        "UPLOAD_MB",
        64,
        float,
        "Largest GGUF prefix or Hugging Face upload (MiB); the largest real headers and"
        " tokenizer.json files are about 35 MiB.",
    ),
    Setting(
        "DATA_DIR",
        "",
        str,
        "Folder of the default SQLite database (empty: the instance folder).",
    ),
    Setting("LIBRARY_DIR", "", str, "Folder of the template library (empty: templates_lib/)."),
    Setting(
        "OLLAMA_TEMPLATES",
        "",
        str,
        "Folder laid out as Ollama's template/ (index.json, NAME.gotmpl, NAME.json), from"
        " which the ollama engine shows the Go template `ollama create` adopts (empty: it"
        " says why it cannot).",
    ),
    Setting(
        "DATABASE_URL",
        "",
        str,
        "Where shares and sources are stored: sqlite:///relative.db, sqlite:////absolute.db"
        " or postgresql://user:password@host:port/database (empty: playground.db in the"
        " data folder).",
    ),
    Setting(
        "SHARE_MAX_KB", 2048, int, "Largest shared state (KiB of canonical JSON); larger gets 413."
    ),
    Setting(
        "SOURCE_WORKERS",
        2,
        int,
        "Source worker processes per web process: they parse uploads, build tokenizers, keep"
        " them and tokenize.",
    ),
    Setting(
        "SOURCE_CPU_SECONDS",
        10.0,
        float,
        "CPU seconds one source task (parsing an upload with its tokenizer, or tokenizing)"
        " may use; a wall-clock backstop at 4x stops the worker.",
    ),
    Setting(
        "SOURCE_MEMORY_MB",
        2048,
        int,
        "Memory (MiB) a source worker may add on top of its start; half of it keeps built"
        " tokenizers.",
    ),
    Setting(
        "SOURCE_CACHE",
        8,
        int,
        "Built tokenizers a source worker keeps (within half its memory).",
    ),
    Setting(
        "TOKENS_PER_ANSWER",
        100_000,
        int,
        "Tokens one /api/tokenize answer carries at most ('offset' pages through the rest)"
        " and the Tokens view shows.",
    ),
    Setting(
        "PAGE_CHARS",
        100_000,
        int,
        "Diff text the page draws; the rest is counted. (The prompt is drawn whole, with"
        " markers on what is on screen.)",
    ),
    Setting(
        "PAGE_TOKENS",
        200_000,
        int,
        "Tokens the page sends to its Tokens view (drawn on screen only) and draws in the token"
        " diff; it says how many there are in all.",
    ),
    Setting(
        "ANALYSIS_TURNS",
        32,
        int,
        "User turns the Analysis follows (two renders each); the answer says how many of"
        " how many it analysed.",
    ),
    Setting(
        "COMPLETION_KB",
        256,
        int,
        "Largest completion the Response view and /api/parse read (KiB); larger gets 422"
        " naming the limit.",
    ),
    Setting(
        "GGUF_ARRAY_ITEMS",
        4_000_000,
        int,
        "Items in all the arrays of a GGUF header (tokens, scores, types, merges); more gets"
        " 422 naming the limit.",
    ),
    Setting(
        "WRITES_PER_MINUTE",
        30,
        float,
        "Shares and source uploads one client may make a minute (as many at once); more get"
        " 429 with Retry-After. 0: no limit.",
    ),
    Setting(
        "WRITE_MB_PER_MINUTE",
        16,
        float,
        "New bytes (sources and shares) one client may store a minute (MiB); more get 429"
        " with Retry-After. 0: no limit.",
    ),
    Setting(
        "WRITE_BURST_MB",
        64,
        float,
        "New bytes one client may store at once (MiB): its byte allowance when full; a"
        " larger source gets 413.",
    ),
    Setting(
        "SOURCE_STORAGE_MB",
        4096,
        float,
        "Total size of stored sources (MiB); a new one that does not fit even after deleting"
        " sources idle for 2 hours that no share shows gets 507. 0: no cap.",
    ),
    Setting(
        "SHARE_STORAGE_MB",
        1024,
        float,
        "Total size of stored shares (MiB, as stored: compressed); a new share that does not"
        " fit gets 507. Shares are never deleted. 0: no cap.",
    ),
    Setting(
        "SOURCE_TTL_DAYS",
        30,
        float,
        "Sources nobody used for this many days are deleted, unless a share shows them. 0:"
        " kept until room is needed.",
    ),
    Setting(
        "TRUSTED_PROXIES",
        0,
        int,
        "Proxies in front of the service whose X-Forwarded-For is believed (0: the TCP peer"
        " is the client). Per-client limits count by that address (IPv6: by /64).",
    ),
    Setting(
        "HF_ENDPOINT",
        "https://huggingface.co",
        str,
        "The Hugging Face Hub that model ids are read from (a mirror or an air-gapped Hub"
        " sets its own); trusted, unlike URLs visitors give.",
    ),
    Setting(
        "HF_TOKEN",
        "",
        str,
        "A Hub token for gated and private repositories (empty: none); sent only to"
        " HF_ENDPOINT, never stored, logged or shown.",
    ),
    Setting(
        "URL_ALLOW_PRIVATE",
        0,
        int,
        "1: a GGUF URL may point at loopback, private and link-local addresses (a private"
        " deployment). 0: only public addresses, at every redirect.",
    ),
    Setting(
        "FETCH_SECONDS",
        20.0,
        float,
        "Seconds one Hub or URL load may spend reading from the network; then 504.",
    ),
    Setting(
        "FETCHES",
        4,
        int,
        "Remote loads (Hub or URL) a web process runs at once, each reading in a thread of"
        " its own and holding no sandbox while it reads; more get 503 at once.",
    ),
    Setting(
        "CLIENT_FETCHES",
        1,
        int,
        "Remote loads one client (address, IPv6 /64) may have running at once in each"
        " worker; more get 429 at once (0: no limit).",
    ),
    Setting(
        "FETCH_REDIRECTS",
        5,
        int,
        "Redirects a GGUF URL may take (each hop's address checked); more get 400.",
    ),
    Setting("BIND", "127.0.0.1:8000", str, "Address gunicorn listens on."),
    Setting("WORKERS", 2, int, "gunicorn worker processes."),
    Setting(
        "THREADS",
        4,
        int,
        "Expensive requests (rendering, tokenizing, analysing, reading uploads) each worker"
        " runs at once, each with a sandbox process of its own; gunicorn runs THREADS +"
        " QUEUE + FETCHES + RESERVED_THREADS request threads per worker.",
    ),
    Setting(
        "QUEUE",
        8,
        int,
        "Expensive requests per worker that may wait for a sandbox when all are busy; more"
        " get 503 at once.",
    ),
    Setting(
        "QUEUE_SECONDS",
        1.0,
        float,
        "Longest wait for a sandbox (seconds); then 503.",
    ),
    Setting(
        "CLIENT_CONCURRENCY",
        2,
        int,
        "Expensive requests one client (address, IPv6 /64) may have running or waiting in"
        " each worker; more get 429 at once (0: no limit).",
    ),
    Setting(
        "HEAVY_SLOTS",
        1,
        int,
        "Expensive requests per worker that heavy clients (one of their requests in the last"
        " minute used over 1 s of worker CPU, or ran out of CPU time, memory or output) may"
        " hold together; they never wait (PLAYGROUND_THREADS or more: no such rule).",
    ),
    Setting(
        "KNOWN_SLOTS",
        1,
        int,
        "Expensive requests per worker kept for known clients (three of their requests"
        " answered, and not heavy), whose waiting requests also go first; new clients may"
        " hold the rest (0: none kept).",
    ),
    Setting(
        "RESERVED_THREADS",
        2,
        int,
        "Request threads per worker that expensive requests never hold: health checks,"
        " static files, stored shares, the library and refusals always find one.",
    ),
)


def load_settings(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Defaults overridden by the environment; a bad value names its variable."""
    environ = os.environ if environ is None else environ
    values = {}
    for setting in SETTINGS:
        raw = environ.get(setting.env_name)
        try:
            values[setting.key] = setting.default if raw is None else setting.parse(raw)
        except ValueError:
            raise ValueError(f"{setting.env_name}={raw!r} is not a valid value.") from None
    return values


def render_limits(config: Mapping[str, Any]) -> RenderLimits:
    """The per-render limits described by a Flask config."""
    return RenderLimits(
        cpu_seconds=float(config["CPU_SECONDS"]),
        memory_bytes=int(config["MEMORY_MB"]) * 1024 * 1024,
        output_chars=int(config["OUTPUT_CHARS"]),
        template_bytes=int(config["TEMPLATE_KB"]) * 1024,
    )


def source_limits(config: Mapping[str, Any]) -> SourceLimits:
    """What one source may cost, from a Flask config."""
    return SourceLimits(
        array_items=int(config["GGUF_ARRAY_ITEMS"]),
        template_bytes=int(config["TEMPLATE_KB"]) * 1024,
        json_depth=int(config["JSON_DEPTH"]),
        response_template_items=int(config["RESPONSE_TEMPLATE_ITEMS"]),
        modelfile_bytes=int(config["MODELFILE_KB"]) * 1024,
        modelfile_commands=int(config["MODELFILE_COMMANDS"]),
        summary_bytes=_megabytes(str(config["SOURCE_SUMMARY_MB"])),
        cache_bytes=int(config["SOURCE_MEMORY_MB"]) * 1024 * 1024 // 2,
        cache_entries=int(config["SOURCE_CACHE"]),
    )


def web_sources_bytes(config: Mapping[str, Any]) -> int:
    """What each web worker keeps of source summaries, in bytes."""
    return _megabytes(str(config["WEB_SOURCES_MB"]))


def max_body_bytes(config: Mapping[str, Any]) -> int:
    """The JSON body cap in bytes."""
    return _megabytes(str(config["MAX_BODY_MB"]))


def max_upload_bytes(config: Mapping[str, Any]) -> int:
    """The cap on uploaded files (GGUF prefixes, Hugging Face files) in bytes."""
    return _megabytes(str(config["UPLOAD_MB"]))
