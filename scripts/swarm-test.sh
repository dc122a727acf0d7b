#!/usr/bin/env bash
# make swarm-test: the Docker Swarm stack (deploy/swarm/builder-stack.yaml + the S3 stand-in), for real, on a
# single-node Swarm of this machine's Docker engine (root; slow, minutes; not part of make test).
#   1. dockerd and the local Debian base (docker/local-base.sh), the images from a clean checkout of HEAD, and
#      `docker swarm init` when this engine is not in a swarm yet;
#   2. docker stack deploy: api x2, worker x2, migrate (one task), Postgres, Redis, the S3 stand-in (moto), the
#      HTTPS proxy; a user and a key with the CLI in an api task; a tabular build to ready through the proxy;
#   3. a rolling update of the api (a new image tag: start-first, one replica at a time) under a steady /predict
#      load through the proxy: every request must succeed;
#   4. a second build, and `docker kill` of the worker task running it mid-training: the job must be run again by
#      another worker and end ready.
# Prints the figures it measured (failed requests during the update, latency, the time until the killed
# worker's job ran again and until it was ready) and, with SWARM_TEST_RESULTS=FILE, appends them there too.
# Removes the stack, its volumes, secret and network, leaves the swarm if it made it, and the untagged images its
# builds left; keeps the builder-swarm/* images as the next run's cache (SWARM_TEST_RMI=1 removes them).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stack="bsw$$"
work="$(mktemp -d /tmp/builder-swarm-test.XXXXXX)"
image="builder-swarm/builder:latest"
rollout_image="builder-swarm/builder:rollout"
pg_image="builder-swarm/postgres:local"
redis_image="builder-swarm/redis:local"
proxy_image="builder-swarm/proxy:latest"
s3_image="builder-swarm/s3-standin:latest"
https_port="${SWARM_TEST_PORT:-18443}" # and https_port+1: the proxy's plain http (a redirect)
lease_s=8
load_rate="${SWARM_TEST_RATE:-20}"
DOCKER="${DOCKER:-/usr/bin/docker}"
[ -x "$DOCKER" ] || DOCKER=docker
made_swarm=0

t_start=$(date +%s)
step_t=$t_start
step() {
  local now; now=$(date +%s)
  [ -n "${step_name:-}" ] && printf '   %-62s %4ss\n' "$step_name" "$((now - step_t))"
  step_name="$1"; step_t=$now
  echo "== $1"
}
fail() { echo "swarm-test FAILED: $*" >&2; exit 1; }
figures=()
figure() { figures+=("$1"); echo "   >> $1"; }

cleanup() {
  local rc=$?
  set +e
  echo "== teardown (stack $stack)"
  touch "$work/stop-load"
  if "$DOCKER" stack ls --format '{{.Name}}' 2>/dev/null | grep -qx "$stack"; then
    if [ $rc -ne 0 ]; then
      for s in api worker migrate proxy s3; do
        echo "--- ${stack}_$s logs"; "$DOCKER" service logs --tail 30 "${stack}_$s" 2>&1 | tail -30
      done
    fi
    "$DOCKER" stack rm "$stack" >/dev/null
    # stack rm returns before the containers are gone; the volumes and the network go once they are.
    for _ in $(seq 1 90); do
      [ -z "$("$DOCKER" ps -q -f "label=com.docker.stack.namespace=$stack")" ] && break
      sleep 1
    done
  fi
  # A finished job's task (migrate) can outlive its service for a while: removed here, with its anonymous volume.
  "$DOCKER" ps -aq -f "label=com.docker.stack.namespace=$stack" | xargs -r "$DOCKER" rm -fv >/dev/null 2>&1
  for _ in $(seq 1 30); do
    "$DOCKER" network inspect "${stack}_builder" >/dev/null 2>&1 || break
    "$DOCKER" network rm "${stack}_builder" >/dev/null 2>&1 || sleep 1
  done
  "$DOCKER" volume ls -q -f "label=com.docker.stack.namespace=$stack" | xargs -r "$DOCKER" volume rm >/dev/null 2>&1
  # The tasks' anonymous /data volumes (the image declares one).
  if [ -n "${volumes_before+set}" ]; then
    for v in $("$DOCKER" volume ls -q -f dangling=true); do
      grep -qx "$v" <<<"$volumes_before" || "$DOCKER" volume rm "$v" >/dev/null 2>&1
    done
  fi
  "$DOCKER" secret rm builder_s3_credentials >/dev/null 2>&1
  if [ "$made_swarm" = 1 ]; then
    "$DOCKER" swarm leave --force >/dev/null 2>&1
    "$DOCKER" network rm docker_gwbridge >/dev/null 2>&1 # made by swarm init, kept by swarm leave
  fi
  "$DOCKER" image rm "$rollout_image" >/dev/null 2>&1
  if [ "${SWARM_TEST_RMI:-0}" = 1 ]; then
    "$DOCKER" image rm "$image" "$pg_image" "$redis_image" "$proxy_image" "$s3_image" >/dev/null 2>&1
  fi
  if [ -n "${dangling_before+set}" ]; then
    for id in $("$DOCKER" images -q --no-trunc -f dangling=true); do
      grep -qx "$id" <<<"$dangling_before" || "$DOCKER" image rm "$id" >/dev/null 2>&1
    done
  fi
  rm -rf "$work"
  left="$("$DOCKER" ps -aq -f "label=com.docker.stack.namespace=$stack" | wc -l)"
  [ "$left" = 0 ] || echo "   WARNING: $left container(s) of the stack are still there" >&2
  exit $rc
}
trap cleanup EXIT

for tool in git curl python3; do command -v "$tool" >/dev/null || fail "$tool is not installed"; done

step "docker engine and the local Debian base (docker/local-base.sh)"
"$repo/docker/local-base.sh"
dangling_before="$("$DOCKER" images -q --no-trunc -f dangling=true)"
volumes_before="$("$DOCKER" volume ls -q)"
if [ "$("$DOCKER" info -f '{{.Swarm.LocalNodeState}}')" != active ]; then
  "$DOCKER" swarm init --advertise-addr 127.0.0.1 >/dev/null
  made_swarm=1
  echo "   single-node swarm made (it is left again at the end)"
fi
"$DOCKER" secret inspect builder_s3_credentials >/dev/null 2>&1 && fail "a secret builder_s3_credentials already exists: another stack uses it"

step "clean checkout of HEAD"
mkdir -p "$work/src"
git -C "$repo" archive HEAD | tar -x -C "$work/src"
cp /opt/wheels/torch-2.13.0+cpu-*.whl "$work/src/docker/wheels/" 2>/dev/null || echo "   (no local torch wheel: the build uses PyTorch's CPU index)"
cp /usr/local/share/ca-certificates/*.crt "$work/src/docker/ca-certificates/" 2>/dev/null || true
torch_index=none
ls "$work/src/docker/wheels/"*.whl >/dev/null 2>&1 || torch_index=https://download.pytorch.org/whl/cpu

step "docker build: Builder (CPU), proxy, and the Postgres, Redis and S3 stand-ins"
build() { DOCKER_BUILDKIT=0 "$DOCKER" build -q --network host "$@" >/dev/null; }
build --build-arg TORCH_INDEX="$torch_index" -t "$image" "$work/src"
build -t "$proxy_image" "$work/src/docker/proxy"
build -t "$pg_image" -f "$work/src/docker/local/postgres.Dockerfile" "$work/src/docker/local"
build -t "$redis_image" -f "$work/src/docker/local/redis.Dockerfile" "$work/src/docker/local"
build -t "$s3_image" -f "$work/src/docker/local/s3-standin.Dockerfile" "$work/src/docker"
echo "   image $image: $("$DOCKER" image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')"

step "docker stack deploy (api x2, worker x2, migrate, postgres, redis, s3 stand-in, proxy)"
secret() { head -c 24 /dev/urandom | base64 | tr -dc A-Za-z0-9; }
printf '[default]\naws_access_key_id = swarmtest\naws_secret_access_key = %s\n' "$(secret)" \
  | "$DOCKER" secret create builder_s3_credentials - >/dev/null
export POSTGRES_PASSWORD REDIS_PASSWORD
POSTGRES_PASSWORD="$(secret)"; REDIS_PASSWORD="$(secret)"
export BUILDER_IMAGE="$image" PROXY_IMAGE="$proxy_image" POSTGRES_IMAGE="$pg_image" REDIS_IMAGE="$redis_image" \
  S3_STANDIN_IMAGE="$s3_image" S3_ENDPOINT=http://s3:5000 S3_BUCKET=builder JOB_LEASE_S=$lease_s \
  BUILDER_HTTPS_PORT="$https_port" BUILDER_HTTP_PORT="$((https_port + 1))"
"$DOCKER" stack deploy -c "$work/src/deploy/swarm/builder-stack.yaml" -c "$work/src/deploy/swarm/s3-standin.yaml" "$stack" >/dev/null
tls="https://127.0.0.1:$https_port"
# Healthy api tasks: their container's health check (/readyz) passes.
healthy_api() { "$DOCKER" ps -q -f "label=com.docker.swarm.service.name=${stack}_api" -f health=healthy; }
for _ in $(seq 1 180); do
  [ "$(healthy_api | wc -l)" -ge 2 ] && curl -skf "$tls/readyz" >/dev/null && break
  sleep 2
done
[ "$(healthy_api | wc -l)" -ge 2 ] || fail "two healthy api replicas did not come up"
curl -skf "$tls/readyz" >/dev/null || fail "no /readyz through the HTTPS proxy on $tls"
"$DOCKER" service ls --filter "label=com.docker.stack.namespace=$stack" --format '   {{.Name}} {{.Mode}} {{.Replicas}}'
for _ in $(seq 1 60); do
  [ "$("$DOCKER" service ps "${stack}_migrate" --format '{{.CurrentState}}' | grep -c '^Complete')" -ge 1 ] && break
  sleep 2
done
"$DOCKER" service ps "${stack}_migrate" --format '{{.CurrentState}}' | grep -q '^Complete' || fail "the migrate job did not complete"

api_task() { healthy_api | head -1; }
step "user and API key with the CLI in an api task"
email="swarm-test@hospital.example"
user_id="$("$DOCKER" exec "$(api_task)" ./builder users create --email "$email" --password 'a long swarm-test passphrase' | tail -1)"
# The steady load below sends 1,200 requests a minute: above the default per-key limit (600), which would answer 429.
key="$("$DOCKER" exec "$(api_task)" ./builder keys create --email "$email" --name swarm-test --rate-limit 6000 --scopes predict,build 2>/dev/null | tail -1)"
[[ "$key" == bld_* ]] || fail "no key from ./builder keys create"
auth=(-H "Authorization: Bearer $key")
curl -skf "${auth[@]}" "$tls/v1/me" | grep -q "$user_id" || fail "/v1/me through the proxy does not know the new key"

step "upload a small tabular zip (to the S3 stand-in, through the proxy)"
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
curl -skf -X PUT "${auth[@]}" --data-binary @"$work/data.zip" "$tls/v1/files/$user_id/st/data.zip" >/dev/null || fail "upload"

experiment() { # experiment ID BUDGET_S OPTIMIZATION_TYPE (1 = fastest, 0 = best: searches the whole budget)
  curl -skf -X POST "${auth[@]}" -H 'content-type: application/json' "$tls/v1/experiments" -d "{
    \"zip_gcloud\": \"$user_id/st/data.zip\", \"label_cols\": [\"diagnosis\"], \"data_cols\": [\"age\", \"marker\", \"noise\"],
    \"model_type\": 0, \"optimization_type\": $3, \"experiment_id\": $1, \"user_token\": \"x\", \"user_id\": \"$user_id\",
    \"study_type\": \"Builder\", \"task\": \"data\", \"optimization_metric\": \"AUC\", \"time_budget_s\": $2 }" >/dev/null \
    || fail "POST /v1/experiments $1"
}
field() { curl -skf "${auth[@]}" "$tls/v1/experiments/$1" | python3 -c "import json,sys; print(json.load(sys.stdin)$2)"; }
wait_status() { # wait_status ID STATUS TIMEOUT_S
  local s=""
  for _ in $(seq 1 "$3"); do
    s="$(field "$1" "['status']" 2>/dev/null || echo '?')"
    [ "$s" = "$2" ] && return 0
    case "$s" in failed|invalid_dataset|cancelled) fail "experiment $1 ended $s: $(field "$1" "['failure_reason']")";; esac
    sleep 1
  done
  fail "experiment $1 is $s, not $2, after $3 s"
}

step "build experiment 1 to ready"
experiment 1 20 1
wait_status 1 ready 600
predict_body='{"experiment_id": 1, "message": [70, 2.5, 0.5]}'
pred="$(curl -sk -w ' %{http_code}' -X POST "${auth[@]}" -H 'content-type: application/json' "$tls/predict" -d "$predict_body")"
[[ "$pred" == *'"error":0'*' 201' ]] || fail "predict answered: $pred"
echo "   $pred"

step "rolling update of the api under a steady /predict load ($load_rate requests/s through the proxy)"
"$DOCKER" tag "$image" "$rollout_image"
before="$("$DOCKER" service ps -q -f desired-state=running "${stack}_api" | sort)"
python3 "$repo/scripts/swarm/predict_load.py" "$tls" "$key" "$predict_body" "$work/stop-load" --rate "$load_rate" >"$work/load.json" &
load_pid=$!
sleep 10 # the load's steady state before the update
t_update=$(date +%s)
"$DOCKER" service update --detach=true --image "$rollout_image" "${stack}_api" >/dev/null 2>&1
state=""
for _ in $(seq 1 300); do
  state="$("$DOCKER" service inspect -f '{{if .UpdateStatus}}{{.UpdateStatus.State}}{{end}}' "${stack}_api")"
  case "$state" in completed) break;; rollback*|paused) fail "the api update ended $state";; esac
  sleep 1
done
[ "$state" = completed ] || fail "the api update is still $state after 300 s"
update_s=$(($(date +%s) - t_update))
sleep 10 # and after it
touch "$work/stop-load"
wait "$load_pid" || fail "the load generator failed"
after="$("$DOCKER" service ps -q -f desired-state=running "${stack}_api" | sort)"
[ -n "$(comm -12 <(echo "$before") <(echo "$after"))" ] && fail "an api task from before the update is still running"
[ "$("$DOCKER" service inspect -f '{{.Spec.TaskTemplate.ContainerSpec.Image}}' "${stack}_api" | cut -d@ -f1)" = "$rollout_image" ] \
  || fail "the api does not run $rollout_image"
read -r requests failed rate p50 p99 max statuses < <(python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
print(r['requests'], r['failed'], r['rate_per_s'], r['latency_ms']['p50'], r['latency_ms']['p99'], r['latency_ms']['max'], json.dumps(r['statuses']).replace(' ', ''))
for f in r['first_failures']: print('   failure:', f, file=sys.stderr)
" "$work/load.json")
figure "rolling update of 2 api replicas: ${update_s} s; /predict during it and 10 s either side: $requests requests at $rate/s, $failed failed (statuses $statuses), latency p50 $p50 ms, p99 $p99 ms, max $max ms"
[ "$failed" = 0 ] || fail "$failed of $requests /predict requests failed during the rolling update"

step "experiment 2 training, then docker kill of the worker task running it"
experiment 2 60 0
wait_status 2 training 300
workers="$("$DOCKER" ps -q -f "label=com.docker.swarm.service.name=${stack}_worker")"
[ "$(echo "$workers" | wc -l)" -ge 2 ] || fail "2 worker tasks are not running"
victim=""
for _ in $(seq 1 60); do
  for w in $workers; do
    if "$DOCKER" top "$w" -eo pid,args 2>/dev/null | grep -q "builder_pipelines"; then victim=$w; fi
  done
  [ -n "$victim" ] && break
  sleep 1
done
[ -n "$victim" ] || fail "no worker task runs a pipeline for experiment 2"
survivor="$(echo "$workers" | grep -v "^$victim" | head -1)"
sleep 3 # well into training
t_kill_ms=$(date +%s%3N)
"$DOCKER" kill "$victim" >/dev/null
echo "   killed worker task ${victim:0:12} ($("$DOCKER" inspect -f '{{.Config.Hostname}}' "$victim")) while experiment 2 was $(field 2 "['status']")"

step "experiment 2 run again by another worker, and ready"
runner=""
for _ in $(seq 1 300); do
  for w in $("$DOCKER" ps -q -f "label=com.docker.swarm.service.name=${stack}_worker"); do
    [ "$w" = "${victim:0:12}" ] && continue
    if "$DOCKER" top "$w" -eo pid,args 2>/dev/null | grep -q "builder_pipelines"; then runner=$w; fi
  done
  [ -n "$runner" ] && break
  [ "$(field 2 "['status']")" = ready ] && break
  sleep 1
done
wait_status 2 ready 900
t_ready_ms=$(date +%s%3N)
attempts="$(field 2 "['attempts']")"
[ "$attempts" -ge 2 ] || fail "experiment 2 shows $attempts attempt(s), expected a second one"
resumed_at="$(field 2 "['history']" | python3 -c "
import ast, sys
from datetime import datetime
h = ast.literal_eval(sys.stdin.read())
again = [e for e in h if e.get('attempt', 1) >= 2]
print(int(datetime.fromisoformat(again[0]['at'].replace('Z', '+00:00')).timestamp() * 1000) if again else '')")"
[ -n "$resumed_at" ] || fail "the second attempt is not in experiment 2's history: $(field 2 "['history']")"
if [ -z "$runner" ]; then who="(its pipeline was not seen running: the retry ended between two looks)"
elif [ "${runner:0:12}" = "${survivor:0:12}" ]; then who="the other worker task (${runner:0:12})"
else who="the task Swarm started in place of the killed one (${runner:0:12})"; fi
figure "worker task killed mid-training (JOB_LEASE_S=$lease_s): the job ran again $(awk "BEGIN {printf \"%.1f\", ($resumed_at - $t_kill_ms) / 1000}") s after the kill, on $who, and was ready $(( (t_ready_ms - t_kill_ms) / 1000 )) s after it (attempts $attempts)"

step "nothing lost"
for id in 1 2; do
  code="$(curl -sk -o /dev/null -w '%{http_code}' -X POST "${auth[@]}" -H 'content-type: application/json' "$tls/v1/experiments/$id/predict" -d '{"message": [40, 0.5, 0.1]}')"
  [ "$code" = 201 ] || fail "experiment $id predict: $code"
done
count="$(curl -skf "${auth[@]}" "$tls/v1/experiments" | python3 -c "import json,sys; print(json.load(sys.stdin)['total'])")"
[ "$count" = 2 ] || fail "expected 2 experiments, the API lists $count"

step "done"
echo "swarm-test passed in $(( $(date +%s) - t_start )) s. Figures:"
for f in "${figures[@]}"; do echo "  - $f"; done
if [ -n "${SWARM_TEST_RESULTS:-}" ]; then
  {
    echo "make swarm-test, $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$repo" rev-parse --short HEAD), $(nproc) cores, Docker $("$DOCKER" version -f '{{.Server.Version}}')"
    for f in "${figures[@]}"; do echo "  - $f"; done
  } >>"$SWARM_TEST_RESULTS"
fi
