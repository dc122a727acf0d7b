#!/bin/sh
# Chooses the certificate and the api's address, writes the small files nginx.conf includes, then runs nginx in the
# foreground.
#   /tls/cert.pem + /tls/key.pem (the hospital's, mounted read-only from ./tls): used when both are there.
#   Otherwise a self-signed certificate for BUILDER_HOSTNAME, localhost and 127.0.0.1, made once and kept in the
#   /var/lib/builder-proxy volume (browsers warn about it until the hospital's certificate is put in ./tls).
# A certificate added or replaced later: `docker compose restart proxy` (or `docker compose exec proxy nginx -s
# reload` when only the files under the same names changed).
set -eu
host="${BUILDER_HOSTNAME:-localhost}"
https_port="${BUILDER_HTTPS_PORT:-443}"
case "$host" in *[!A-Za-z0-9.-]*) echo "builder-proxy: BUILDER_HOSTNAME must be a host name, got '$host'" >&2; exit 1;; esac
case "$https_port" in ''|*[!0-9]*) echo "builder-proxy: BUILDER_HTTPS_PORT must be a port number, got '$https_port'" >&2; exit 1;; esac

if [ -s /tls/cert.pem ] && [ -s /tls/key.pem ]; then
  cert=/tls/cert.pem key=/tls/key.pem
  # The master runs as root but without CAP_DAC_OVERRIDE (compose drops it): a key readable only by another user
  # cannot be read. Say so plainly rather than let nginx fail with "Permission denied" further down.
  if ! [ -r "$key" ]; then
    echo "builder-proxy: cannot read tls/key.pem: make it root's and private: sudo chown root:root tls/key.pem && sudo chmod 600 tls/key.pem" >&2
    exit 1
  fi
  echo "builder-proxy: serving the certificate in ./tls: $(openssl x509 -in "$cert" -noout -subject -enddate | tr '\n' ' ')"
else
  cert=/var/lib/builder-proxy/self-signed-cert.pem key=/var/lib/builder-proxy/self-signed-key.pem
  if [ ! -s "$cert" ] || [ ! -s "$key" ] || ! openssl x509 -in "$cert" -noout -checkhost "$host" | grep -q 'does match'; then
    # Two years: longer is refused by some browsers even for a certificate accepted by hand.
    names="DNS:localhost,IP:127.0.0.1"
    [ "$host" = localhost ] || names="DNS:$host,$names"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 730 \
      -subj "/CN=$host" -addext "subjectAltName=$names" \
      -keyout "$key" -out "$cert" 2>/dev/null
    chmod 600 "$key"
    echo "builder-proxy: made a self-signed certificate for $host (put the hospital's in ./tls: docs/deployment.md)"
  fi
  echo "builder-proxy: serving the self-signed certificate, SHA-256 fingerprint $(openssl x509 -in "$cert" -noout -fingerprint -sha256 | cut -d= -f2)"
fi
printf 'ssl_certificate %s;\nssl_certificate_key %s;\n' "$cert" "$key" >/run/builder-proxy/tls.conf
# Plain http:// is answered with a redirect to the same host on the HTTPS port clients see (the published one).
if [ "$https_port" = 443 ]; then suffix=""; else suffix=":$https_port"; fi
printf 'return 308 https://$host%s$request_uri;\n' "$suffix" >/run/builder-proxy/redirect.conf
# Where the api is (host:port) and which DNS server finds it: nginx looks the name up itself, every 5 s. On compose
# and Swarm, Docker's resolver (127.0.0.11) and the service name api; on Kubernetes, the cluster's DNS (from
# resolv.conf) and the Service's full name (nginx ignores resolv.conf's search domains).
upstream="${BUILDER_API_UPSTREAM:-api:8080}"
case "$upstream" in *[!A-Za-z0-9.:-]*|'') echo "builder-proxy: BUILDER_API_UPSTREAM must be host:port, got '$upstream'" >&2; exit 1;; esac
resolver="${BUILDER_DNS_RESOLVER:-$(awk '$1 == "nameserver" {print $2; exit}' /etc/resolv.conf)}"
case "$resolver" in *:*) resolver="[$resolver]";; esac
[ -n "$resolver" ] || { echo "builder-proxy: no nameserver in /etc/resolv.conf; set BUILDER_DNS_RESOLVER" >&2; exit 1; }
printf 'resolver %s valid=5s ipv6=off;\n' "$resolver" >/run/builder-proxy/resolver.conf
printf 'set $builder_api http://%s;\n' "$upstream" >/run/builder-proxy/upstream.conf
nginx -t -q
exec nginx -g 'daemon off;'
