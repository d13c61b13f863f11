"""A model repository on the Hugging Face Hub, read with `huggingface_hub`.

What is read: the repository's info at a revision (its commit sha and its files with
sizes), then only the files transformers' tokenizer reads (`TOKENIZER_FILES`, and the
named templates under `additional_chat_templates/`), or the header of one GGUF file, by
HTTP Range requests on its `resolve/<sha>/<file>` URL. Everything is read at the commit
the revision resolved to, so a branch that moves meanwhile cannot mix two commits.

The endpoint is the operator's choice (`PLAYGROUND_HF_ENDPOINT`) and trusted; the token
(`PLAYGROUND_HF_TOKEN`) goes only to it, in the Authorization header the client builds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from app.sources.remote import Budget, RemoteError, rate_limited, take, too_large

#: Files transformers' tokenizer (and processor, for `chat_template.json`) reads for the
#: template and special tokens, besides `additional_chat_templates/*.jinja`.
TOKENIZER_FILES = (
    "tokenizer_config.json",
    "chat_template.jinja",
    "chat_template.json",
    "tokenizer.json",
)
#: Where transformers finds named templates (`NAME.jinja`).
NAMED_TEMPLATES_FOLDER = "additional_chat_templates"
#: The files that make a repository a transformers one (tokenizer.json alone has no template).
TEMPLATE_FILES = frozenset({"tokenizer_config.json", "chat_template.jinja", "chat_template.json"})
#: `NAME-00001-of-00003.gguf`: one shard of a split model (llama.cpp's gguf-split naming).
SHARD = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)
#: Quantisations the page picks first, in order: a middle size that most people run.
PREFERRED_QUANTS = ("Q4_K_M", "Q4_K_S", "Q4_0", "Q5_K_M", "IQ4_XS", "Q5_K_S", "Q6_K", "Q8_0")
#: A repository id, or a Hub URL of a repository, a file (`blob`, `resolve`) or a tree.
_REFERENCE = re.compile(
    r"^(?:https?://(?P<host>[^/]+)/)?(?:models/)?(?P<repo>[\w.-]+/[\w.-]+)"
    r"(?:/(?:blob|resolve|tree)/(?P<revision>[^/]+)(?:/(?P<file>.+?))?)?/?$"
)
#: Read sizes of one streamed answer.
_CHUNK = 1 << 16
#: Sent with every request: a connection serves one request and is closed. The client
#: would otherwise keep it for the next read, whose deadline (`app.sources.deadline`)
#: knows only the sockets that read connected itself.
_ONE_USE = {"Connection": "close"}


@dataclass(frozen=True)
class Reference:
    """What the user named: a repository, perhaps a revision and a file."""

    repo: str
    revision: str | None = None
    file: str | None = None


#: The public Hub's host names; the configured endpoint's host counts too.
HUB_HOSTS = frozenset({"huggingface.co", "www.huggingface.co", "hf.co"})


def parse_reference(text: str, endpoint: str | None = None) -> Reference | None:
    """`ORG/NAME`, or a Hub URL of it (`.../blob/main/x.gguf`, `.../resolve/...`) on the
    public Hub or on `endpoint`; None for anything else (another site's URL is not a Hub
    repository of the same name)."""
    match = _REFERENCE.match(text.strip().split("#", 1)[0].split("?", 1)[0])
    if match is None:
        return None
    hosts = HUB_HOSTS | {urlsplit(endpoint).netloc.lower()} if endpoint else HUB_HOSTS
    if match["host"] is not None and match["host"].lower() not in hosts:
        return None
    repo = match["repo"].removesuffix(".git")
    return Reference(repo, match["revision"], match["file"])


@dataclass(frozen=True)
class GGUFChoice:
    """A GGUF model in a repository: its file (the first shard of a split model), the
    bytes of all its shards, and how many shards it has."""

    file: str
    size: int
    shards: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "size": self.size, "shards": self.shards}


@dataclass(frozen=True)
class Listing:
    """A repository at one commit: its files and their sizes."""

    repo: str
    revision: str
    sha: str
    files: dict[str, int | None]

    def tokenizer_files(self) -> list[str]:
        """The files transformers reads, in the order it reads them."""
        named = sorted(
            path
            for path in self.files
            if PurePosixPath(path).parent.as_posix() == NAMED_TEMPLATES_FOLDER
            and path.endswith(".jinja")
        )
        return [name for name in TOKENIZER_FILES if name in self.files] + named

    def has_tokenizer_files(self) -> bool:
        """Whether a tokenizer would find a template here (a config or a template file)."""
        return any(path in self.files for path in TEMPLATE_FILES) or any(
            path.startswith(NAMED_TEMPLATES_FOLDER + "/") for path in self.files
        )

    def gguf_choices(self) -> list[GGUFChoice]:
        """Every GGUF model: single files, and split models by their first shard."""
        groups: dict[str, list[str]] = {}
        for path in self.files:
            if not path.lower().endswith(".gguf"):
                continue
            shard = SHARD.search(path)
            groups.setdefault(path[: shard.start()] if shard else path, []).append(path)
        choices = []
        for paths in groups.values():
            first = min(paths)
            size = sum(self.files[path] or 0 for path in paths)
            choices.append(GGUFChoice(first, size, len(paths)))
        return sorted(choices, key=lambda choice: choice.file)

    def default_gguf(self) -> str | None:
        """The file the page offers first: a preferred quantisation, else the middle size
        (projectors for images, `mmproj`, are never the model)."""
        models = [c for c in self.gguf_choices() if "mmproj" not in c.file.lower()]
        models = models or self.gguf_choices()
        for quant in PREFERRED_QUANTS:
            pattern = re.compile(rf"(?<![A-Za-z0-9]){quant}(?![A-Za-z0-9])", re.IGNORECASE)
            found = [c for c in models if pattern.search(PurePosixPath(c.file).name)]
            if found:
                return found[0].file
        by_size = sorted(models, key=lambda choice: choice.size)
        return by_size[len(by_size) // 2].file if by_size else None

    def to_json(self) -> dict[str, Any]:
        return {"repo": self.repo, "revision": self.revision, "sha": self.sha}


class Hub:
    """One Hub endpoint, with the operator's token if any."""

    def __init__(self, endpoint: str, token: str | None) -> None:
        self.endpoint = endpoint.rstrip("/")
        # False, not None: huggingface_hub would otherwise look for a token of its own
        # (HF_TOKEN, a saved login) and send it.
        self._token: str | bool = token or False

    def __repr__(self) -> str:  # never shows the token
        return f"Hub({self.endpoint!r})"

    def repo_url(self, repo: str, sha: str | None = None) -> str:
        """The repository's page (at a commit)."""
        return f"{self.endpoint}/{repo}" + (f"/tree/{sha}" if sha else "")

    def listing(self, reference: Reference, budget: Budget) -> Listing:
        """The repository at the revision (default: main), resolved to its commit sha."""
        from huggingface_hub import HfApi

        revision = reference.revision or "main"
        with self._errors(budget, reference.repo):
            api = HfApi(endpoint=self.endpoint, token=self._token, headers=_ONE_USE)
            info = api.model_info(
                reference.repo, revision=revision, files_metadata=True, timeout=budget.remaining()
            )
        if not info.sha:
            raise RemoteError("BadAnswer", f"{self.endpoint} gave no commit for {reference.repo}.")
        files = {sibling.rfilename: sibling.size for sibling in info.siblings or []}
        return Listing(reference.repo, revision, info.sha, files)

    def read(self, listing: Listing, path: str, start: int, end: int, budget: Budget) -> bytes:
        """Bytes `start` to `end` of a file at the listing's commit (Range request); a
        server that sends more is read only up to `end` and closed."""
        from huggingface_hub import hf_hub_url
        from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

        url = hf_hub_url(listing.repo, path, revision=listing.sha, endpoint=self.endpoint)
        headers = build_hf_headers(token=self._token, library_name="chat-template-playground")
        headers.update({"Range": f"bytes={start}-{end - 1}", "Accept-Encoding": "identity",
                        **_ONE_USE})  # fmt: skip
        with (
            self._errors(budget, listing.repo, path),
            get_session().stream(
                "GET", url, headers=headers, timeout=budget.remaining(), follow_redirects=True
            ) as response,
        ):
            if response.status_code >= 400:
                response.read()  # for the error's message: the Hub's own, small (trusted)
                hf_raise_for_status(response)
            skip = start if response.status_code == 200 else 0
            return take(response.iter_bytes(_CHUNK), skip, end - start, budget)

    def read_whole(self, listing: Listing, path: str, budget: Budget) -> bytes:
        """A whole small file; 413 over what the budget has left."""
        size = listing.files.get(path)
        if size == 0:
            return b""  # a Range request on an empty file is answered 416
        if size is not None and size > budget.bytes_left():
            raise too_large(f"{path} holds {size:,} bytes", budget.max_bytes)
        wanted = budget.bytes_left() + 1 if size is None else size
        data = self.read(listing, path, 0, wanted, budget)
        if size is not None and len(data) != size:
            raise RemoteError(
                "BadAnswer", f"{self.endpoint} sent {len(data):,} bytes of {path}, not {size:,}."
            )
        return data

    def _errors(self, budget: Budget, repo: str, path: str | None = None) -> _HubErrors:
        return _HubErrors(self.endpoint, budget, repo, path)


class _HubErrors:
    """Turns what huggingface_hub and its HTTP client raise into typed `RemoteError`s."""

    def __init__(self, endpoint: str, budget: Budget, repo: str, path: str | None) -> None:
        self.endpoint, self.budget, self.repo, self.path = endpoint, budget, repo, path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, error: BaseException | None, _: Any) -> bool:
        if error is None or isinstance(error, RemoteError):
            return False
        raise self._typed(error) from None

    def _typed(self, error: BaseException) -> BaseException:
        import httpx2
        from huggingface_hub import errors

        what = f"{self.repo}/{self.path}" if self.path else self.repo
        if isinstance(error, errors.GatedRepoError):
            return RemoteError(
                "Forbidden",
                f"{self.repo} is gated: accept its conditions on {self.endpoint}, and set "
                "PLAYGROUND_HF_TOKEN to a token of an account that did.",
                403,
            )
        if isinstance(error, errors.RevisionNotFoundError):
            return RemoteError("NotFound", f"{self.repo} has no revision by that name.", 404)
        if isinstance(error, errors.RepositoryNotFoundError):
            return RemoteError(
                "NotFound",
                f"There is no model {self.repo} on {self.endpoint} (a private one looks the "
                "same without a token allowed to read it: PLAYGROUND_HF_TOKEN).",
                404,
            )
        if isinstance(error, errors.RemoteEntryNotFoundError):
            return RemoteError("NotFound", f"{what} is not on {self.endpoint}.", 404)
        if isinstance(error, errors.HFValidationError):
            return RemoteError("BadRequest", f"{self.repo!r} is not a repository id.", 400,
                               {"field": "repo"})  # fmt: skip
        if isinstance(error, errors.HfHubHTTPError) and error.response is not None:
            return self._by_status(error.response, what)
        if isinstance(error, httpx2.TimeoutException):
            return self.budget.timeout()
        if isinstance(error, httpx2.HTTPError | OSError):
            return RemoteError(
                "Unreachable", f"{self.endpoint} cannot be reached ({type(error).__name__}).", 504
            )
        return error

    def _by_status(self, response: Any, what: str) -> RemoteError:
        status = response.status_code
        if status in (401, 403):
            return RemoteError(
                "Forbidden",
                f"{self.endpoint} refuses to give {what} (HTTP {status}): the repository is "
                "private or gated; PLAYGROUND_HF_TOKEN must be a token allowed to read it.",
                403,
            )
        if status == 429:
            retry = response.headers.get("Retry-After", "")
            return rate_limited(self.endpoint, retry, "hub_rate_limit")
        return RemoteError("BadAnswer", f"{self.endpoint} answered HTTP {status} for {what}.", 502)
