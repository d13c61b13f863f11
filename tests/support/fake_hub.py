"""A local HTTP server with the Hugging Face Hub's URL layout, for the requests
`huggingface_hub` makes, serving fixture repositories from folders.

- `GET /api/models/ORG/NAME/revision/REV` (`?blobs=true`): the model info, with its
  commit `sha` and its `siblings` (file names, sizes; LFS details for large files);
- `GET|HEAD /ORG/NAME/resolve/REV/PATH`: a small file itself, or for an LFS file (here:
  every `.gguf`) a 302 to `/cdn/...` with the headers the client reads (`X-Repo-Commit`,
  `X-Linked-Etag`, `X-Linked-Size`, `ETag`); both honour `Range` (206, `Content-Range`);
- the Hub's errors, with its `X-Error-Code` headers: an unknown repository (401
  `RepoNotFound`, as the Hub answers without a token), a gated one (401 `GatedRepo` on
  its files unless the token is allowed), an unknown revision or file (404), rate
  limiting (429 with `Retry-After`), and a slow repository (answers after a delay).

Every byte of every body sent is counted (`sent`, by path), and every request noted.
`RangeHost` serves plain files for `/api/sources/url`, optionally ignoring `Range`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

_INFO = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)(?:/revision/(?P<rev>[^/]+))?$")
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")
_CDN = re.compile(r"^/cdn/(?P<repo>[^/]+/[^/]+)/(?P<sha>[0-9a-f]{40})/(?P<path>.+)$")
_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")
_CHUNK = 1 << 16


@dataclass
class Repo:
    """A fixture repository: a folder at one commit, and how the Hub treats it."""

    folder: Path
    sha: str = field(default_factory=lambda: hashlib.sha1(str(time.time_ns()).encode()).hexdigest())
    #: Branch names besides the sha itself.
    branches: tuple[str, ...] = ("main",)
    #: A gated repository: its files need this token.
    gated_token: str | None = None
    #: Answer everything with 429.
    rate_limited: bool = False
    #: Seconds to wait before answering anything.
    delay: float = 0.0
    #: Answer the model info, then send each file's headers a byte every 0.2 s, forever.
    trickle: bool = False

    def files(self) -> dict[str, Path]:
        return {
            path.relative_to(self.folder).as_posix(): path
            for path in sorted(self.folder.rglob("*"))
            if path.is_file()
        }


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:  # quiet
        return

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def do_GET(self) -> None:
        self._serve(body=True)

    def _serve(self, *, body: bool) -> None:
        path = unquote(urlsplit(self.path).path)
        self.server.note(self.command, path, self.headers)
        # The client may close once it has read what it wanted.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.server.route(self, path, body)

    def answer(self, status: int, headers: dict[str, str], data: bytes = b"", body: bool = True):
        self.send_response(status)
        for name, value in {"Content-Length": str(len(data)), **headers}.items():
            self.send_header(name, value)
        self.end_headers()
        if body and data:
            self.wfile.write(data)
            self.server.count(self.path, len(data))

    def error(self, status: int, code: str | None, message: str, body: bool) -> None:
        headers = {"Content-Type": "application/json", "X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self.answer(status, headers, json.dumps({"error": message}).encode(), body)

    def send_file(self, file: Path, headers: dict[str, str], body: bool, honour_range=True):
        size = file.stat().st_size
        start, end, status = 0, size, 200
        match = _RANGE.match(self.headers.get("Range", ""))
        if honour_range and match:
            start = int(match[1])
            end = min(size, int(match[2]) + 1) if match[2] else size
            if start >= size:
                self.answer(416, {"Content-Range": f"bytes */{size}"}, body=body)
                return
            status = 206
            headers = {**headers, "Content-Range": f"bytes {start}-{end - 1}/{size}"}
        self.send_response(status)
        for name, value in {"Content-Length": str(end - start), **headers}.items():
            self.send_header(name, value)
        self.end_headers()
        if not body:
            return
        with file.open("rb") as handle:
            handle.seek(start)
            left = end - start
            while left > 0:
                chunk = handle.read(min(_CHUNK, left))
                self.wfile.write(chunk)
                self.server.count(self.path, len(chunk))
                left -= len(chunk)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: FakeHub

    def note(self, method: str, path: str, headers) -> None:
        self.owner.requests.append((method, path, {k.lower(): v for k, v in headers.items()}))

    def count(self, path: str, size: int) -> None:
        with self.owner.lock:
            self.owner.sent[unquote(urlsplit(path).path)] += size

    def route(self, handler: _Handler, path: str, body: bool) -> None:
        self.owner.route(handler, path, body)


class FakeHub:
    """The server; `repos` maps `ORG/NAME` to `Repo`."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.repos: dict[str, Repo] = {}
        self.sent: Counter[str] = Counter()
        #: (method, path, headers with lower-case names) of every request.
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.lock = threading.Lock()
        self._server = _Server((host, 0), _Handler)
        self._server.owner = self
        self.url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reset(self) -> None:
        """Forget what was sent and asked."""
        self.sent.clear()
        self.requests.clear()

    def bytes_sent(self, prefix: str = "") -> int:
        return sum(size for path, size in self.sent.items() if path.startswith(prefix))

    def fetched(self, repo: str) -> set[str]:
        """The files of `repo` whose bytes were asked for (through resolve)."""
        return {
            match["path"]
            for method, path, _ in self.requests
            if method == "GET" and (match := _RESOLVE.match(path)) and match["repo"] == repo
        }

    # ---------------------------------------------------------------- routes

    def route(self, handler: _Handler, path: str, body: bool) -> None:
        for pattern, serve in ((_INFO, self._info), (_RESOLVE, self._resolve), (_CDN, self._cdn)):
            if match := pattern.match(path):
                repo = self.repos.get(match["repo"])
                if repo is None:
                    handler.error(401, "RepoNotFound", "Repository not found", body)
                    return
                time.sleep(repo.delay)
                if repo.rate_limited:
                    handler.answer(429, {"Retry-After": "7"}, b"slow down", body)
                    return
                serve(handler, repo, match, body)
                return
        handler.error(404, None, "Not found", body)

    def _revision(self, handler: _Handler, repo: Repo, revision: str, body: bool) -> bool:
        if revision in (repo.sha, *repo.branches):
            return True
        handler.error(404, "RevisionNotFound", "Invalid rev id", body)
        return False

    def _info(self, handler: _Handler, repo: Repo, match: re.Match, body: bool) -> None:
        if not self._revision(handler, repo, match["rev"] or "main", body):
            return
        siblings = []
        for name, file in repo.files().items():
            size = file.stat().st_size
            sibling = {"rfilename": name, "size": size, "blobId": _etag(repo, name)}
            if name.endswith(".gguf"):
                sibling["lfs"] = {"size": size, "sha256": "0" * 64, "pointerSize": 134}
            siblings.append(sibling)
        info = {
            "_id": "fixture", "id": match["repo"], "sha": repo.sha, "private": False,
            "gated": "manual" if repo.gated_token else False, "siblings": siblings,
        }  # fmt: skip
        handler.answer(200, {"Content-Type": "application/json"}, json.dumps(info).encode(), body)

    def _allowed(self, handler: _Handler, repo: Repo, body: bool) -> bool:
        if repo.gated_token is None:
            return True
        if handler.headers.get("Authorization") == f"Bearer {repo.gated_token}":
            return True
        handler.error(401, "GatedRepo", "Access to this model is restricted", body)
        return False

    def _resolve(self, handler: _Handler, repo: Repo, match: re.Match, body: bool) -> None:
        if not self._revision(handler, repo, match["rev"], body):
            return
        if not self._allowed(handler, repo, body):
            return
        if repo.trickle:
            _trickle(handler)
            return
        file = repo.files().get(match["path"])
        if file is None:
            handler.error(404, "EntryNotFound", "Entry not found", body)
            return
        etag = f'"{_etag(repo, match["path"])}"'
        headers = {"X-Repo-Commit": repo.sha, "ETag": etag}
        if match["path"].endswith(".gguf"):
            location = f"{self.url}/cdn/{match['repo']}/{repo.sha}/{match['path']}"
            headers.update({"Location": location, "X-Linked-Etag": etag,
                            "X-Linked-Size": str(file.stat().st_size)})  # fmt: skip
            handler.answer(302, headers, body=body)
            return
        handler.send_file(file, headers, body)

    def _cdn(self, handler: _Handler, repo: Repo, match: re.Match, body: bool) -> None:
        file = repo.files().get(match["path"])
        if file is None or match["sha"] != repo.sha:
            handler.answer(403, {}, b"signature expired", body)
            return
        handler.send_file(file, {"ETag": f'"{_etag(repo, match["path"])}"'}, body)


def _trickle(handler: _Handler) -> None:
    """A status line and a header that never ends, a byte every 0.2 s, until the client
    closes the connection."""
    for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.2)


def _etag(repo: Repo, name: str) -> str:
    return hashlib.sha1(f"{repo.sha}/{name}".encode()).hexdigest()


class RangeHost(FakeHub):
    """Plain files by path (`files`), for GGUF URLs; `ignore_range` sends whole bodies,
    `redirects` maps a path to the URL it redirects to."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.files: dict[str, Path] = {}
        self.redirects: dict[str, str] = {}
        self.ignore_range = False
        super().__init__(host)

    def route(self, handler: _Handler, path: str, body: bool) -> None:
        if path in self.redirects:
            handler.answer(302, {"Location": self.redirects[path]}, body=body)
        elif path in self.files:
            handler.send_file(self.files[path], {}, body, honour_range=not self.ignore_range)
        else:
            handler.answer(404, {}, b"no such file", body)


@contextlib.contextmanager
def serving(server: FakeHub) -> Iterator[FakeHub]:
    try:
        yield server
    finally:
        server.close()
