"""A steady /predict load through the HTTPS proxy, for make swarm-test's rolling update (scripts/swarm-test.sh).

    predict_load.py URL KEY BODY_JSON STOP_FILE [--rate 20] [--threads 4]

Sends POST URL/predict at a fixed total rate from a few threads, each on its own keep-alive connection to the proxy
(the proxy is not what is updated), until STOP_FILE exists. Every answer other than 201 with "error": 0, and every
connection error or timeout, is a failed request. Prints one JSON object: requests, failed, the statuses seen, the
first few failures, and latency percentiles in milliseconds.
"""

import argparse
import http.client
import json
import os
import ssl
import statistics
import threading
import time
import urllib.parse


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("key")
    parser.add_argument("body")
    parser.add_argument("stop_file")
    parser.add_argument("--rate", type=float, default=20.0, help="requests per second, all threads together")
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()

    target = urllib.parse.urlsplit(args.url)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the proxy's self-signed certificate
    headers = {"Authorization": f"Bearer {args.key}", "Content-Type": "application/json"}
    body = args.body.encode()
    interval = args.threads / args.rate
    lock = threading.Lock()
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    failures: list[str] = []
    failed = 0

    def record(status: str, latency_ms: float | None, failure: str | None) -> None:
        nonlocal failed
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
            if latency_ms is not None:
                latencies.append(latency_ms)
            if failure:
                failed += 1
                if len(failures) < 10:
                    failures.append(f"{time.strftime('%H:%M:%S')} {failure}")

    def run(offset: float) -> None:
        conn: http.client.HTTPSConnection | None = None
        next_at = time.monotonic() + offset
        while not os.path.exists(args.stop_file):
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            next_at += interval
            if conn is None:
                conn = http.client.HTTPSConnection(target.hostname, target.port, timeout=30, context=context)
            started = time.monotonic()
            try:
                conn.request("POST", "/predict", body=body, headers=headers)
                response = conn.getresponse()
                text = response.read().decode(errors="replace")
                latency = (time.monotonic() - started) * 1000
                ok = response.status == 201 and '"error":0' in text.replace(" ", "")
                record(str(response.status), latency, None if ok else f"{response.status} {text[:200]}")
                if response.getheader("connection", "").lower() == "close":
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException) as err:
                record("connection error", None, f"{type(err).__name__}: {err}")
                conn.close()
                conn = None

    threads = [threading.Thread(target=run, args=(i * interval / args.threads,)) for i in range(args.threads)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    total = sum(statuses.values())
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) >= 2 else [0.0] * 99
    print(
        json.dumps(
            {
                "requests": total,
                "failed": failed,
                "seconds": round(elapsed, 1),
                "rate_per_s": round(total / elapsed, 1) if elapsed else 0,
                "statuses": statuses,
                "first_failures": failures,
                "latency_ms": {
                    "p50": round(quantiles[49], 1),
                    "p99": round(quantiles[98], 1),
                    "max": round(max(latencies), 1) if latencies else 0,
                },
            }
        )
    )


if __name__ == "__main__":
    main()
