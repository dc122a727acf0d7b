# A stand-in for the official postgres image, from Debian's postgresql-15, for machines that cannot pull from
# Docker Hub (make docker-test). It honours the same POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB and data
# path as the official image, so compose.yaml is unchanged. A real host uses postgres:15-bookworm.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
