# A stand-in for the official redis image, from Debian's redis-server (7.0), for machines that cannot pull from
# Docker Hub (make docker-test). compose.yaml passes the command line (with --requirepass); a real host uses
# redis:7-bookworm.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends redis-server redis-tools \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /data && chown redis:redis /data
USER redis
WORKDIR /data
EXPOSE 6379
CMD ["redis-server"]
