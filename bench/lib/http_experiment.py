"""Runs one whole experiment through Builder's HTTP API, as a user would: the benchmarks' `--http` mode.

Starts `./builder serve` on a free port with a temporary BUILDER_DATA_DIR (PGlite), creates a user and an
API key with the CLI, PUTs the zip to /v1/files/<user_id>/<dir>/<file>.zip, POSTs /v1/experiments, polls
GET /v1/experiments/<id> until a terminal state (printing progress), and returns the experiment, the
published manifest, the wall time (POST to terminal) and the peak RSS of the server + pipeline process
tree (summed over the tree, sampled from /proc every second).

Standard library only; run with pipelines/.venv/bin/python. Linux only (/proc).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TERMINAL = {"ready", "failed", "invalid_dataset", "cancelled"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                # the command name may hold spaces; the parent pid is the 2nd field after the closing ')'
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def tree_rss_mib(root_pid: int) -> float:
    """RSS summed over root_pid and all its descendants (shared pages counted once per process)."""
    tree, todo, total_kb = _children(), [root_pid], 0
    while todo:
        pid = todo.pop()
        todo.extend(tree.get(pid, []))
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total_kb += int(line.split()[1])
                        break
        except OSError:
            pass
    return total_kb / 1024


class RssSampler(threading.Thread):
    def __init__(self, pid: int, every_s: float = 1.0):
        super().__init__(daemon=True)
        self.pid, self.every_s, self.peak_mib = pid, every_s, 0.0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            self.peak_mib = max(self.peak_mib, tree_rss_mib(self.pid))
            self._halt.wait(self.every_s)

    def stop(self) -> float:
        self._halt.set()
        self.join()
        return self.peak_mib


class BuilderServer:
    """`./builder serve` on a free port with its own temporary data folder (PGlite, local bucket)."""

    def __init__(self, env: dict[str, str] | None = None):
        self.data_dir = tempfile.mkdtemp(prefix="builder-bench-")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "REDIS_URL", "GCS_BUCKET", "BUILDER_RUNNER")
        }
        self.env.update({"BUILDER_DATA_DIR": self.data_dir, "PORT": str(self.port), "HOST": "127.0.0.1", **(env or {})})
        self.log_path = os.path.join(self.data_dir, "serve.log")
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> BuilderServer:
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [str(ROOT / "builder"), "serve", "--port", str(self.port)],
            cwd=ROOT,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(
                    f"builder serve exited {self.proc.returncode}:\n{Path(self.log_path).read_text()[-3000:]}"
                )
            try:
                urllib.request.urlopen(f"{self.url}/v1/me", timeout=2)
            except urllib.error.HTTPError:
                return self  # any HTTP answer (401 here) means it is listening
            except OSError:
                time.sleep(0.5)
                continue
            return self
        raise SystemExit("builder serve did not start within 120 s")

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._log.close()
        if not os.environ.get("BENCH_KEEP_DATA"):
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def cli(self, *args: str) -> str:
        """Runs ./builder <args> against this server's data folder; -> the last line of stdout."""
        out = subprocess.run([str(ROOT / "builder"), *args], cwd=ROOT, env=self.env, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"builder {' '.join(args[:2])} failed: {out.stderr[-2000:]}")
        return out.stdout.strip().splitlines()[-1]

    def create_user(self, email: str = "bench@example.org") -> tuple[str, str]:
        """-> (user_id, api key)."""
        user_id = self.cli("users", "create", "--email", email, "--password", "benchmark-password-1")
        key = self.cli("keys", "create", "--email", email, "--name", "bench", "--rate-limit", "100000")
        return user_id, key


def request(
    method: str,
    url: str,
    key: str,
    body: bytes | None = None,
    content_type: str | None = None,
    stream_path: str | None = None,
) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {key}"}
    if content_type:
        headers["Content-Type"] = content_type
    data = body
    if stream_path:  # streamed from disk, never read whole into memory
        headers["Content-Length"] = str(os.path.getsize(stream_path))
        data = open(stream_path, "rb")
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=600) as res:
            raw = res.read() or b"{}"
            try:
                return res.status, json.loads(raw)
            except ValueError:  # /logs answers plain text lines, not JSON
                return res.status, {"raw": raw.decode("utf-8", "replace")}
    except urllib.error.HTTPError as err:
        text = err.read().decode("utf-8", "replace")
        try:
            return err.code, json.loads(text)
        except ValueError:
            return err.code, {"raw": text}
    finally:
        if stream_path and hasattr(data, "close"):
            data.close()


def run_experiment(
    zip_path: str, body: dict, label: str = "bench", poll_s: float = 2.0, server_env: dict[str, str] | None = None
) -> dict:
    """Uploads zip_path and runs one Builder experiment with `body` (zip_gcloud, user_id, experiment_id are filled
    in). -> {experiment, manifest, wall_s, upload_s, peak_rss_mib}; exits on a non-ready terminal state."""
    with BuilderServer(server_env) as server:
        sampler = RssSampler(server.proc.pid)
        sampler.start()
        user_id, key = server.create_user()
        zip_gcloud = f"{user_id}/{label}/{Path(zip_path).name}"
        t0 = time.monotonic()
        status, up = request(
            "PUT", f"{server.url}/v1/files/{zip_gcloud}", key, stream_path=zip_path, content_type="application/zip"
        )
        if status != 201:
            raise SystemExit(f"upload failed: {status} {up}")
        upload_s = time.monotonic() - t0
        full = {**body, "zip_gcloud": zip_gcloud, "user_id": user_id, "experiment_id": body.get("experiment_id", 1)}
        t0 = time.monotonic()
        status, exp = request(
            "POST", f"{server.url}/v1/experiments", key, json.dumps(full).encode(), "application/json"
        )
        if status not in (200, 202):
            raise SystemExit(f"POST /v1/experiments: {status} {exp}")
        url, last = f"{server.url}/v1/experiments/{full['experiment_id']}", None
        while True:
            try:
                status, exp = request("GET", url, key)
            except urllib.error.URLError as err:
                code = server.proc.poll()
                raise SystemExit(
                    f"lost the server ({err}); builder serve exit status {code}; its log:\n"
                    f"{Path(server.log_path).read_text()[-3000:]}"
                ) from None
            p = exp.get("progress") or {}
            line = (
                exp.get("status"),
                p.get("stage"),
                round(p.get("fraction") or 0, 2),
                p.get("epoch") or p.get("trial"),
            )
            if line != last:
                best = p.get("best_metric")
                print(
                    f"  [{time.monotonic() - t0:6.0f}s] {exp.get('status')}  {p.get('stage') or ''} "
                    f"{100 * (p.get('fraction') or 0):.0f}%"
                    + (f"  best {best:.3f}" if isinstance(best, (int, float)) else "")
                    + f"  tree RSS {tree_rss_mib(server.proc.pid):.0f} MiB",
                    flush=True,
                )
                last = line
            if exp.get("status") in TERMINAL:
                break
            time.sleep(poll_s)
        wall = time.monotonic() - t0
        peak = sampler.stop()
        if exp["status"] != "ready":
            _, logs = request("GET", f"{url}/logs", key)
            raise SystemExit(
                f"experiment ended {exp['status']}: {exp.get('failure_reason')}\n"
                f"{json.dumps(exp.get('dataset_report'))[:2000]}\n{str(logs)[-3000:]}"
            )
        store = (exp.get("model") or {}).get("path") or (exp.get("model") or {}).get("store_path")
        manifest = None
        candidates = [Path(server.data_dir) / "bucket" / "models" / user_id / str(full["experiment_id"])]
        for folder in candidates:
            found = sorted(folder.glob("v*/manifest.json")) if folder.is_dir() else []
            if found:
                manifest = json.loads(found[-1].read_text())
        return {
            "experiment": exp,
            "manifest": manifest,
            "wall_s": wall,
            "upload_s": upload_s,
            "peak_rss_mib": peak,
            "store": store,
        }


def fmt_metric(m: dict | None) -> str:
    if not m or m.get("value") is None:
        return "-"
    lo, hi = m.get("ci_low"), m.get("ci_high")
    ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else ""
    return f"{m['value']:.3f}{ci}"


def print_metrics(metrics: dict, names: list[str]) -> None:
    print("   test " + "   ".join(f"{n} {fmt_metric(metrics.get(n))}" for n in names if n in metrics))
    sys.stdout.flush()
