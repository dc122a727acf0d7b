#!/usr/bin/env bash
# make docker-test: the deployment, end to end, with a real Docker engine (slow; not part of make test).
# Builds the image from a clean checkout of HEAD, starts compose.yaml (postgres, redis, migrate, api, worker),
# creates a user and a key with the CLI inside the api container, uploads a small tabular zip, builds it to
# ready, calls /predict, scales the workers to 2, kills the one running a second build mid-training, and checks
# that the job is picked up again (BullMQ stalled-job recovery), ends ready with the retry in its history, and
# that nothing was lost. Prints each step's time and the image size. Removes the containers, networks and
# volumes it made and its checkout; keeps the images it tagged (builder-test/*) as the next run's build cache
# (DOCKER_TEST_RMI=1 removes them too).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
run_id="$(date +%s)-$$"
project="buildertest${run_id//-/}"
work="$(mktemp -d /tmp/builder-docker-test.XXXXXX)"
image="builder-test/builder:latest"
pg_image="builder-test/postgres:local"
redis_image="builder-test/redis:local"
port="${DOCKER_TEST_PORT:-18080}"
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
  (cd "$work/src" && BUILDER_IMAGE="$image" POSTGRES_IMAGE="$pg_image" REDIS_IMAGE="$redis_image" BUILDER_PORT="$port" \
    docker-compose -p "$project" "$@")
}
cleanup() {
  local rc=$?
  echo "== teardown (project $project)"
  if [ -f "$work/src/compose.yaml" ]; then
    if [ $rc -ne 0 ]; then compose logs --tail=40 api worker migrate 2>&1 | tail -120 || true; fi
    compose down -v --remove-orphans >/dev/null 2>&1 || true
  fi
  if [ "${DOCKER_TEST_RMI:-0}" = 1 ]; then "$DOCKER" image rm "$image" "$pg_image" "$redis_image" >/dev/null 2>&1 || true; fi
  "$DOCKER" image prune -f >/dev/null 2>&1 || true # dangling layers of replaced builder-test images
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT

command -v docker-compose >/dev/null || fail "docker-compose is not installed (Debian: apt-get install docker-compose)"

step "docker engine and the local Debian base (docker/local-base.sh)"
"$repo/docker/local-base.sh"

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

step "docker-compose up -d (postgres, redis, migrate, api, 1 worker)"
cat >"$work/src/.env" <<EOF
POSTGRES_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -dc A-Za-z0-9)
LOG_LEVEL=info
# Short leases so a killed worker's job is handed on within about 20 s.
JOB_LEASE_S=8
EOF
compose up -d --no-build >/dev/null 2>&1 || { compose up -d --no-build; fail "compose up"; }
base="http://127.0.0.1:$port"
for _ in $(seq 1 90); do curl -sf "$base/readyz" >/dev/null && break; sleep 2; done
curl -sf "$base/readyz" >/dev/null || fail "the api did not become ready on $base"
[ "$(compose ps -q migrate | xargs "$DOCKER" inspect -f '{{.State.ExitCode}}')" = 0 ] || fail "migrate did not exit 0"

step "user and API key with the CLI inside the api container"
email="docker-test@hospital.example"
user_id="$(compose exec -T api ./builder users create --email "$email" --password 'a long docker-test passphrase' | tail -1)"
key="$(compose exec -T api ./builder keys create --email "$email" --name docker-test 2>/dev/null | tail -1)"
[[ "$key" == bld_* ]] || fail "no key from ./builder keys create"
auth=(-H "Authorization: Bearer $key")
curl -sf "${auth[@]}" "$base/v1/me" | grep -q "$user_id" || fail "/v1/me does not know the new key"

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

step "scale workers to 2"
compose up -d --no-build --no-recreate --scale worker=2 >/dev/null 2>&1
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
