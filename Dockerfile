# Chat Template Playground:
#   docker build -t chat-template-playground .
#   docker run -p 8000:8000 -v playground-data:/data chat-template-playground

# Stage 1: the npm packages, pinned by package-lock.json: the browser assets (what
# ./playground copies) and the packages the server runs in Node: @huggingface/jinja (the
# transformers.js engine) and @huggingface/ollama-utils (the Hub's Ollama templates).
FROM node:20.18.1-bookworm-slim AS assets
WORKDIR /build
COPY package.json package-lock.json ./
COPY static/src ./static/src
RUN npm ci --no-audit --no-fund \
    && npm run build \
    && mkdir vendor \
    && cp node_modules/htmx.org/dist/htmx.min.js \
          static/vendor/template-editor.js \
          vendor/ \
    && mkdir -p runtime/node_modules/@huggingface/jinja/dist \
    && cp node_modules/@huggingface/jinja/package.json \
          node_modules/@huggingface/jinja/LICENSE \
          runtime/node_modules/@huggingface/jinja/ \
    && cp node_modules/@huggingface/jinja/dist/index.cjs \
          runtime/node_modules/@huggingface/jinja/dist/ \
    && mkdir -p runtime/node_modules/@huggingface/ollama-utils/dist \
    && cp node_modules/@huggingface/ollama-utils/package.json \
          node_modules/@huggingface/ollama-utils/LICENSE \
          runtime/node_modules/@huggingface/ollama-utils/ \
    && cp node_modules/@huggingface/ollama-utils/dist/index.js \
          runtime/node_modules/@huggingface/ollama-utils/dist/

# Stage 2: the Ollama engine's Go worker, built from its sources with Debian's Go (1.19,
# standard library only), as ./playground builds it; one static binary.
FROM node:20.18.1-bookworm-slim AS gotemplate
WORKDIR /build/gotemplate
COPY app/render/engines/ollama/gotemplate/go.mod app/render/engines/ollama/gotemplate/*.go ./
RUN apt-get update \
    && apt-get install -y --no-install-recommends golang-go=2:1.19~1 \
    && rm -rf /var/lib/apt/lists/* \
    && CGO_ENABLED=0 GOCACHE=/tmp/gocache go build -trimpath -o /build/bin/ollama-gotemplate . \
    && rm -rf /tmp/gocache

# Stage 3: the app under gunicorn, as a non-root user.
FROM python:3.11.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PLAYGROUND_BIND=0.0.0.0:8000 \
    PLAYGROUND_WORKERS=2 \
    PLAYGROUND_THREADS=4 \
    PLAYGROUND_DATA_DIR=/data
# A numeric user (10001), so that Kubernetes' runAsNonRoot can check it.
RUN groupadd --system --gid 10001 playground \
    && useradd --system --no-log-init --uid 10001 --gid playground \
       --home-dir /nonexistent --shell /usr/sbin/nologin playground \
    && mkdir /data \
    && chown playground:playground /data
WORKDIR /srv/playground
# Every dependency pinned with its hashes (requirements.lock, `./playground lock`), then the
# app itself with nothing left to resolve, built by the setuptools the lock pins.
COPY requirements.lock ./
RUN pip install --no-cache-dir --require-hashes --no-deps -r requirements.lock
COPY pyproject.toml README.md gunicorn.conf.py ./
COPY app ./app
RUN pip install --no-cache-dir --no-deps --no-build-isolation .
COPY templates_lib ./templates_lib
# The documentation the page links to, served at /docs/.
COPY docs ./docs
COPY static ./static
COPY --from=assets /build/vendor ./static/vendor
# Node, one binary that links only glibc and the C++ runtime (Debian's base image has both:
# apt needs libstdc++ too), and the npm packages the server runs, which Node finds beside
# the app as in a checkout.
COPY --from=assets /usr/local/bin/node /usr/local/bin/node
COPY --from=assets /build/runtime/node_modules ./node_modules
# The Go worker beside its sources, where the engine looks for it.
COPY --from=gotemplate /build/bin/ollama-gotemplate ./app/render/engines/ollama/gotemplate/
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; port = os.environ['PLAYGROUND_BIND'].rpartition(':')[2]; urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=4)"]
# `docker run IMAGE check /model ...` runs `./playground check` on a mounted folder or file
# (docs/check.md); any other command, the default one included, runs as given.
ENTRYPOINT ["/bin/sh", "-c", "if [ \"$1\" = check ]; then shift; exec python -m app.check \"$@\"; fi; exec \"$@\"", "entry"]
CMD ["python", "-m", "gunicorn", "-c", "gunicorn.conf.py"]
