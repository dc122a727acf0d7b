# A stand-in for an S3-compatible store (MinIO, Ceph RGW, StorageGRID, Amazon S3), for make swarm-test on a machine
# that cannot pull images: moto's server mode, which speaks the S3 REST protocol (path-style, SigV4, multipart) to
# Builder's real S3 client, the same stand-in as the storage tests (test/helpers/s3_standin.py). It keeps objects
# in memory: they are gone when it stops. Not for real data: a real site points S3_ENDPOINT at its own store.
# Built from docker/ (docker build -f docker/local/s3-standin.Dockerfile docker), so that a TLS-inspecting proxy's
# CA in docker/ca-certificates/ is trusted by pip as in Builder's image.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY ca-certificates/ /usr/local/share/ca-certificates/
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt
RUN update-ca-certificates >/dev/null \
 && python3 -m venv /opt/moto \
 && /opt/moto/bin/pip install --no-cache-dir --disable-pip-version-check -q "moto[server]==5.2.5" \
 && useradd --system --uid 10003 --home-dir /nonexistent --shell /usr/sbin/nologin moto
COPY local/s3-standin.py /usr/local/bin/s3-standin.py
USER moto
EXPOSE 5000
ENTRYPOINT ["/opt/moto/bin/python", "/usr/local/bin/s3-standin.py"]
