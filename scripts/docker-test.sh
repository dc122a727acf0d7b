#!/usr/bin/env bash
# make docker-test: the deployment, end to end, with a real Docker engine (slow; not part of make test).
# Builds the image from a clean checkout of HEAD, starts compose.yaml (postgres, redis, migrate, api, worker,
# proxy), checks that every published port is on 127.0.0.1, that the HTTPS proxy answers (self-signed) and
# redirects http, that /metrics needs METRICS_TOKEN and Redis its password, creates a user and a key with the
# CLI inside the api container, uploads a small tabular zip, builds it to ready, calls /predict (directly and
# through the proxy), scales the api to 2 replicas (a key's rate limit spent across both is refused on
# either; a key revoked through one is refused by the other at once), scales the workers to 2, kills the one running a second build mid-training, and checks
# that the job is picked up again (BullMQ stalled-job recovery), ends ready with the retry in its history, and
# that nothing was lost. Prints each step's time and the image size. Removes the containers, networks and
# volumes it made, its checkout and the untagged images its builds left; keeps the images it tagged
# (builder-test/*) as the next run's build cache (DOCKER_TEST_RMI=1 removes them too).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
run_id="$(date +%s)-$$"
project="buildertest${run_id//-/}"
work="$(mktemp -d /tmp/builder-docker-test.XXXXXX)"
image="builder-test/builder:latest"
pg_image="builder-test/postgres:local"
redis_image="builder-test/redis:local"
proxy_image="builder-test/proxy:latest"
port="${DOCKER_TEST_PORT:-18080}" # and port+1: the api's second replica; port+2: the proxy's HTTPS, port+3: its http
https_port=$((port + 2))
http_port=$((port + 3))
DOCKER="${DOCKER:-/usr/bin/docker}"
[ -x "$DOCKER" ] || DOCKER=docker

t_start=$(date +%s)
step_t=$t_start
step() { # step NAME: prints the time the previous step took and starts NAME
  local now; now=$(date +%s)
  [ -n "${step_name:-}" ] && printf '   %-58s %4ss\n' "$step_name" "$((now - step_t))"
  step_name="$1"; step_t=$now
  echo "== $1"
}
fail() { echo "docker-test FAILED: $*" >&2; exit 1; }

compose() {
  (cd "$work/src" && BUILDER_IMAGE="$image" POSTGRES_IMAGE="$pg_image" REDIS_IMAGE="$redis_image" BUILDER_PORT="$port-$((port + 1))" \
    PROXY_IMAGE="$proxy_image" BUILDER_HTTPS_PORT="$https_port" BUILDER_HTTP_PORT="$http_port" \
    docker-compose -p "$project" "$@")
}
cleanup() {
  local rc=$?
  echo "== teardown (project $project)"
  if [ -f "$work/src/compose.yaml" ]; then
    if [ $rc -ne 0 ]; then compose logs --tail=40 api worker migrate proxy 2>&1 | tail -120 || true; fi
    compose down -v --remove-orphans >/dev/null 2>&1 || true
  fi
  if [ "${DOCKER_TEST_RMI:-0}" = 1 ]; then "$DOCKER" image rm "$image" "$pg_image" "$redis_image" "$proxy_image" >/dev/null 2>&1 || true; fi
  # Untagged images that appeared during this run (its builds' stage images, the builder-test images it
  # replaced): only those, not every dangling image on the host.
  if [ -n "${dangling_before+set}" ]; then
    for id in $("$DOCKER" images -q --no-trunc -f dangling=true); do
      grep -qx "$id" <<<"$dangling_before" || "$DOCKER" image rm "$id" >/dev/null 2>&1 || true
    done
  fi
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT

if ! command -v docker-compose >/dev/null; then
  [ "$(id -u)" -eq 0 ] || fail "docker-compose is not installed and this is not root (Debian: apt-get install docker-compose)"
  echo "== installing docker-compose (Debian package)"
  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker-compose >/dev/null
fi
for tool in git curl python3 openssl; do command -v "$tool" >/dev/null || fail "$tool is not installed"; done

step "docker engine and the local Debian base (docker/local-base.sh)"
"$repo/docker/local-base.sh"

dangling_before="$("$DOCKER" images -q --no-trunc -f dangling=true)"

step "clean checkout of HEAD"
mkdir -p "$work/src"
git -C "$repo" archive HEAD | tar -x -C "$work/src"
# What an offline machine gives the build: the torch CPU wheel (no PyTorch index here) and its proxy's CAs.
cp /opt/wheels/torch-2.13.0+cpu-*.whl "$work/src/docker/wheels/" 2>/dev/null || echo "   (no local torch wheel: the build uses PyTorch's CPU index)"
cp /usr/local/share/ca-certificates/*.crt "$work/src/docker/ca-certificates/" 2>/dev/null || true
torch_index=none
ls "$work/src/docker/wheels/"*.whl >/dev/null 2>&1 || torch_index=https://download.pytorch.org/whl/cpu

step "docker build (CPU variant)"
DOCKER_BUILDKIT=0 "$DOCKER" build -q --network host --build-arg TORCH_INDEX="$torch_index" -t "$image" "$work/src" >/dev/null
image_size="$("$DOCKER" image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')"
echo "   image $image: $image_size"

step "postgres and redis stand-ins from Debian packages (no Docker Hub here)"
DOCKER_BUILDKIT=0 "$DOCKER" build -q --network host -t "$pg_image" -f "$work/src/docker/local/postgres.Dockerfile" "$work/src/docker/local" >/dev/null
DOCKER_BUILDKIT=0 "$DOCKER" build -q --network host -t "$redis_image" -f "$work/src/docker/local/redis.Dockerfile" "$work/src/docker/local" >/dev/null

step "the HTTPS proxy image (docker/proxy: nginx from Debian; the one compose.yaml builds, not a stand-in)"
DOCKER_BUILDKIT=0 "$DOCKER" build -q --network host -t "$proxy_image" "$work/src/docker/proxy" >/dev/null

step "docker-compose up -d (postgres, redis, migrate, api, 1 worker, proxy)"
secret() { head -c 24 /dev/urandom | base64 | tr -dc A-Za-z0-9; }
metrics_token="$(secret)"
cat >"$work/src/.env" <<EOF
POSTGRES_PASSWORD=$(secret)
REDIS_PASSWORD=$(secret)
METRICS_TOKEN=$metrics_token
LOG_LEVEL=info
# Short leases so a killed worker's job is handed on within about 20 s.
JOB_LEASE_S=8
EOF
compose up -d --no-build >/dev/null 2>&1 || { compose up -d --no-build; fail "compose up"; }
# The api replica N's address on this host (BUILDER_PORT is a range: each replica takes a free port of it).
api_url() { echo "http://127.0.0.1:$(compose port --index="$1" api 8080 | sed "s/.*://")"; }
for _ in $(seq 1 60); do compose port --index=1 api 8080 2>/dev/null | grep -q : && break; sleep 1; done
base="$(api_url 1)"
for _ in $(seq 1 90); do curl -sf "$base/readyz" >/dev/null && break; sleep 2; done
curl -sf "$base/readyz" >/dev/null || fail "the api did not become ready on $base"
[ "$(compose ps -q migrate | xargs "$DOCKER" inspect -f '{{.State.ExitCode}}')" = 0 ] || fail "migrate did not exit 0"

step "network defaults: 127.0.0.1 only, HTTPS proxy, /metrics and Redis not anonymous"
# Every port the project publishes, as Docker reports it: all on 127.0.0.1 (BUILDER_BIND / BUILDER_API_BIND unset).
published="$(for c in $(compose ps -q); do "$DOCKER" port "$c"; done | sort -u)"
echo "$published" | sed 's/^/   /'
echo "$published" | grep -q . || fail "nothing is published"
if echo "$published" | grep -v -- '-> 127\.0\.0\.1:' | grep -q .; then fail "a port is published beyond 127.0.0.1: $published"; fi
echo "$published" | grep -q -- "8443/tcp -> 127.0.0.1:$https_port" || fail "the proxy's HTTPS is not on 127.0.0.1:$https_port"
tls="https://127.0.0.1:$https_port"
for _ in $(seq 1 60); do curl -skf "$tls/readyz" >/dev/null && break; sleep 1; done
curl -skf "$tls/healthz" >/dev/null || fail "no /healthz through the HTTPS proxy on $tls"
subject="$(echo | openssl s_client -connect "127.0.0.1:$https_port" -servername localhost 2>/dev/null | openssl x509 -noout -subject -ext subjectAltName 2>/dev/null | tr '\n' ' ')"
echo "   certificate: $subject"
[[ "$subject" == *"CN = localhost"*"IP Address:127.0.0.1"* ]] || fail "the proxy's self-signed certificate is not for localhost and 127.0.0.1: $subject"
# Plain http:// is refused by curl on the HTTPS port and redirected on the http one.
location="$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "http://127.0.0.1:$http_port/healthz?x=1")"
[ "$location" = "308 https://127.0.0.1:$https_port/healthz?x=1" ] || fail "http:// is not redirected to https://: $location"
# The api's own headers come back through the proxy.
[ -n "$(curl -sk -D - -o /dev/null "$tls/healthz" | grep -i '^x-request-id:')" ] || fail "no x-request-id through the proxy"
for url in "$tls" "$base"; do
  anon="$(curl -sk -o /dev/null -w '%{http_code}' "$url/metrics")"
  wrong="$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer not-$metrics_token" "$url/metrics")"
  right="$(curl -sk -o "$work/metrics.txt" -w '%{http_code}' -H "Authorization: Bearer $metrics_token" "$url/metrics")"
  echo "   $url/metrics: anonymous $anon, wrong token $wrong, METRICS_TOKEN $right"
  [ "$anon $wrong $right" = "401 401 200" ] || fail "/metrics on $url answered $anon $wrong $right, not 401 401 200"
  grep -q '^builder_http_requests_total' "$work/metrics.txt" || fail "no builder_http_requests_total in /metrics on $url"
done
noauth="$(compose exec -T redis env -u REDISCLI_AUTH redis-cli ping 2>&1 | tr -d '\r')"
[[ "$noauth" == *NOAUTH* ]] || fail "Redis answers without its password: $noauth"
echo "   redis without the password: $noauth"

step "user and API key with the CLI inside the api container"
email="docker-test@hospital.example"
user_id="$(compose exec -T api ./builder users create --email "$email" --password 'a long docker-test passphrase' | tail -1)"
key="$(compose exec -T api ./builder keys create --email "$email" --name docker-test --scopes predict,build 2>/dev/null | tail -1)"
[[ "$key" == bld_* ]] || fail "no key from ./builder keys create"
auth=(-H "Authorization: Bearer $key")
curl -sf "${auth[@]}" "$base/v1/me" | grep -q "$user_id" || fail "/v1/me does not know the new key"
# The dashboard's sign-in through the proxy: the session cookie is Secure (NODE_ENV=production), so a browser
# keeps and sends it over https:// only; curl's cookie jar follows the same rule.
curl -sk -c "$work/jar" -o /dev/null -H 'content-type: application/json' "$tls/v1/session" \
  -d "{\"email\": \"$email\", \"password\": \"a long docker-test passphrase\"}"
grep -q 'builder_session' "$work/jar" || fail "no session cookie from sign-in through the HTTPS proxy"
[ "$(awk '/builder_session/ {print $4}' "$work/jar")" = TRUE ] || fail "the session cookie is not Secure"
[ "$(curl -sk -b "$work/jar" -o /dev/null -w '%{http_code}' "$tls/v1/session")" = 200 ] || fail "the Secure session cookie does not work over https://"
echo "   dashboard sign-in over https://: Secure session cookie kept and accepted"

step "upload a small tabular zip"
python3 - "$work/data.zip" <<'EOF'
import csv, io, random, sys, zipfile
rng = random.Random(7)
buf = io.StringIO()
w = csv.writer(buf)
w.writerow(["patient_id", "age", "marker", "noise", "diagnosis"])
for i in range(1200):
    y = i % 2
    w.writerow([f"P{i:05d}", round(rng.gauss(55 + 8 * y, 10), 1), round(rng.gauss(1.0 + 1.2 * y, 0.8), 3), round(rng.random(), 3), y])
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("table.csv", buf.getvalue())
EOF
curl -sf -X PUT "${auth[@]}" --data-binary @"$work/data.zip" "$base/v1/files/$user_id/dt/data.zip" >/dev/null || fail "upload"

experiment() { # experiment ID BUDGET_S OPTIMIZATION_TYPE: posts a tabular build (1 = fastest, 0 = best: searches the whole budget)
  curl -sf -X POST "${auth[@]}" -H 'content-type: application/json' "$base/v1/experiments" -d "{
    \"zip_gcloud\": \"$user_id/dt/data.zip\", \"label_cols\": [\"diagnosis\"], \"data_cols\": [\"age\", \"marker\", \"noise\"],
    \"model_type\": 0, \"optimization_type\": $3, \"experiment_id\": $1, \"user_token\": \"x\", \"user_id\": \"$user_id\",
    \"study_type\": \"Builder\", \"task\": \"data\", \"optimization_metric\": \"AUC\", \"time_budget_s\": $2 }" >/dev/null
}
field() { curl -sf "${auth[@]}" "$base/v1/experiments/$1" | python3 -c "import json,sys; print(json.load(sys.stdin)$2)"; }
wait_status() { # wait_status ID STATUS TIMEOUT_S
  local s=""
  for _ in $(seq 1 "$3"); do
    s="$(field "$1" "['status']")"
    [ "$s" = "$2" ] && return 0
    case "$s" in failed|invalid_dataset|cancelled) fail "experiment $1 ended $s: $(field "$1" "['failure_reason']")";; esac
    sleep 1
  done
  fail "experiment $1 is $s, not $2, after $3 s"
}

step "build experiment 1 to ready (1 worker)"
experiment 1 20 1
wait_status 1 ready 400

step "POST /predict"
pred="$(curl -s -w ' %{http_code}' -X POST "${auth[@]}" -H 'content-type: application/json' "$base/predict" -d '{"experiment_id": 1, "message": [70, 2.5, 0.5]}')"
[[ "$pred" == *'"error":0'*' 201' ]] || fail "predict answered: $pred"
echo "   $pred"
pred_tls="$(curl -sk -w ' %{http_code}' -X POST "${auth[@]}" -H 'content-type: application/json' "$tls/predict" -d '{"experiment_id": 1, "message": [70, 2.5, 0.5]}')"
[[ "$pred_tls" == *'"error":0'*' 201' ]] || fail "predict through the HTTPS proxy answered: $pred_tls"
echo "   through the HTTPS proxy: $pred_tls"

step "api scaled to 2 replicas: one rate limit (Redis), revocations at once (Postgres notify)"
compose up -d --no-build --no-recreate --scale api=2 >/dev/null 2>&1
for _ in $(seq 1 60); do [ "$(compose ps -q api | wc -l)" -ge 2 ] && break; sleep 1; done
[ "$(compose ps -q api | wc -l)" -ge 2 ] || fail "a second api replica did not start"
api_a="$base"; api_b="$(api_url 2)"
[ "$api_a" != "$api_b" ] || fail "both api replicas answer on $api_a"
for _ in $(seq 1 90); do curl -sf "$api_b/readyz" >/dev/null && break; sleep 1; done
curl -sf "$api_b/readyz" >/dev/null || fail "the second api replica did not become ready on $api_b"
echo "   replica A $api_a, replica B $api_b"
# A dashboard session on replica A (the cookie is Secure in production: sent by hand over this plain HTTP).
curl -s -D "$work/session.h" -o "$work/session.json" -H 'content-type: application/json' "$api_a/v1/session" \
  -d "{\"email\": \"$email\", \"password\": \"a long docker-test passphrase\"}"
cookie="$(grep -i '^set-cookie: builder_session=' "$work/session.h" | head -1 | sed 's/^[^:]*: //; s/;.*//')"
csrf="$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['csrf_token'])" "$work/session.json")"
[ -n "$cookie" ] && [ -n "$csrf" ] || fail "no dashboard session from replica A"
dash=(-H "Cookie: $cookie" -H "x-csrf-token: $csrf" -H 'content-type: application/json')
new_key() { # new_key NAME [LIMIT]: creates a key through replica A; prints "id key"
  local body="{\"name\": \"$1\"${2:+, \"rate_limit_per_minute\": $2}}"
  curl -sf -X POST "${dash[@]}" "$api_a/v1/api-keys" -d "$body" | python3 -c "import json,sys; b=json.load(sys.stdin); print(b['id'], b['key'])" || echo "- -"
}
me() { # me URL KEY: prints "status remaining code" for GET /v1/me
  curl -s -D "$work/me.h" -o "$work/me.json" -H "Authorization: Bearer $2" "$1/v1/me" >/dev/null
  local status remaining code
  status="$(head -1 "$work/me.h" | cut -d' ' -f2)"
  remaining="$(grep -i '^x-ratelimit-remaining-requests:' "$work/me.h" | tr -d '\r' | cut -d' ' -f2 || true)" # none on a 403
  code="$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('error', {}).get('code', '-'))" "$work/me.json" 2>/dev/null || echo '-')"
  echo "$status ${remaining:--} $code"
}
read -r _ limited < <(new_key rate-limited 6)
[[ "${limited:-}" == bld_* ]] || fail "no key from POST /v1/api-keys on replica A"
seen=""
for i in 1 2 3 4 5 6; do
  if [ $((i % 2)) = 1 ]; then url=$api_a; else url=$api_b; fi
  read -r st rem _ < <(me "$url" "$limited")
  seen="$seen $st/$rem"
done
echo "   a key limited to 6 a minute, requests alternating A,B,A,B,A,B: status/remaining$seen"
[ "$seen" = " 200/5 200/4 200/3 200/2 200/1 200/0" ] || fail "the two replicas do not count one limit: $seen"
read -r st_a _ code_a < <(me "$api_a" "$limited")
read -r st_b _ code_b < <(me "$api_b" "$limited")
echo "   7th request on A: $st_a $code_a; 8th on B: $st_b $code_b"
[ "$st_a $code_a" = "429 rate_limit_exceeded" ] && [ "$st_b $code_b" = "429 rate_limit_exceeded" ] || fail "the spent limit is not refused on both replicas"
read -r doomed_id doomed < <(new_key to-revoke)
[[ "${doomed:-}" == bld_* ]] || fail "no second key from POST /v1/api-keys on replica A"
for url in "$api_b" "$api_b" "$api_a"; do # B has it cached (API_KEY_CACHE_TTL_S, 60 s by default)
  read -r st _ _ < <(me "$url" "$doomed"); [ "$st" = 200 ] || fail "the new key is refused before its revocation: $st"
done
curl -sf -X DELETE "${dash[@]}" "$api_a/v1/api-keys/$doomed_id" >/dev/null || fail "revoking through replica A"
t0=$(date +%s%N); tries=0
while :; do
  tries=$((tries + 1))
  read -r st _ code < <(me "$api_b" "$doomed")
  [ "$st $code" = "403 api_key_revoked" ] && break
  [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 2000 ] || fail "replica B still answers $st $code 2 s after the revocation through A"
  sleep 0.05
done
echo "   revoked through A: B answered 403 api_key_revoked to request $tries after the DELETE, $(( ($(date +%s%N) - t0) / 1000000 )) ms after it (curl and python included)"
read -r st _ code < <(me "$api_a" "$doomed")
[ "$st $code" = "403 api_key_revoked" ] || fail "replica A still answers $st $code after revoking the key"

step "scale workers to 2"
compose up -d --no-build --no-recreate --scale api=2 --scale worker=2 >/dev/null 2>&1
for _ in $(seq 1 60); do [ "$(compose ps -q worker | wc -l)" -ge 2 ] && break; sleep 1; done
workers=$(compose ps -q worker)
[ "$(echo "$workers" | wc -l)" -ge 2 ] || fail "2 workers did not start"
for w in $workers; do
  for _ in $(seq 1 60); do "$DOCKER" exec "$w" node -e "fetch('http://127.0.0.1:8081/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" && break; sleep 1; done
done
echo "   worker devices: $("$DOCKER" exec "$(echo "$workers" | head -1)" node -e "fetch('http://127.0.0.1:8081/readyz').then(r=>r.json()).then(b=>console.log(JSON.stringify(b.devices)))")"

step "experiment 2 training, then docker kill its worker"
experiment 2 60 0
wait_status 2 training 300
# The worker running it: the one whose pipeline (python) process is alive.
victim=""
for _ in $(seq 1 60); do
  for w in $workers; do
    if "$DOCKER" top "$w" -eo pid,args 2>/dev/null | grep -q "builder_pipelines"; then victim=$w; fi
  done
  [ -n "$victim" ] && break
  sleep 1
done
[ -n "$victim" ] || fail "no worker runs a pipeline for experiment 2"
sleep 3 # well into training
"$DOCKER" kill "$victim" >/dev/null
echo "   killed worker ${victim:0:12} while experiment 2 was $(field 2 "['status']")"

step "experiment 2 picked up again and ready"
wait_status 2 ready 600
retries="$(field 2 "['attempts']")"
[ "$retries" -ge 2 ] || fail "experiment 2 shows $retries attempt(s), expected a retry"
field 2 "['history']" | grep -q "'attempt': 2" || fail "the retry is not in experiment 2's history: $(field 2 "['history']")"
echo "   attempts $retries; history: $(field 2 "['history']")"

step "nothing lost"
for id in 1 2; do [ "$(field "$id" "['status']")" = ready ] || fail "experiment $id is not ready"; done
for id in 1 2; do
  code="$(curl -s -o /dev/null -w '%{http_code}' -X POST "${auth[@]}" -H 'content-type: application/json' "$base/v1/experiments/$id/predict" -d '{"message": [40, 0.5, 0.1]}')"
  [ "$code" = 201 ] || fail "experiment $id predict: $code"
done
count="$(curl -sf "${auth[@]}" "$base/v1/experiments" | python3 -c "import json,sys; print(json.load(sys.stdin)['total'])")"
[ "$count" = 2 ] || fail "expected 2 experiments, the API lists $count"

step "done"
echo "docker-test passed: image $image_size, total $(( $(date +%s) - t_start )) s"
