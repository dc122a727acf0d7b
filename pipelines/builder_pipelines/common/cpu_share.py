"""How many cores a training run may use on a shared host: the CPU count less the cores others keep busy."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

# /proc/stat's first line: cpu user nice system idle iowait irq softirq steal guest guest_nice (guest time is
# already inside user and nice, so only the first eight fields add up to the total).
NICE = 1


def read_cpu_times() -> list[int] | None:
    try:
        with open("/proc/stat", encoding="ascii") as f:
            first = f.readline().split()
    except OSError:
        return None
    return [int(x) for x in first[1:9]] if first and first[0] == "cpu" and len(first) >= 9 else None


def busy_cores(
    cpus: int,
    window_s: float = 1.0,
    read: Callable[[], list[int] | None] = read_cpu_times,
    sleep: Callable[[float], None] = time.sleep,
    loadavg: Callable[[], tuple[float, float, float]] = os.getloadavg,
    own_nice: int | None = None,
) -> int:
    """Cores kept busy by processes that compete with this one.

    The 1-minute load average counts every runnable process, so a nice-19 job (a benchmark, a backup) halved a
    build's threads although the kernel gives its time to the build. Where /proc/stat exists and this process is not
    niced itself, the cores niced processes use (measured over ``window_s``) are taken off the load average; the
    load average stays the base, so a momentary dip in ordinary work does not hand out cores it keeps busy.
    """
    try:
        load = loadavg()[0]
    except OSError:
        load = 0.0
    if (os.nice(0) if own_nice is None else own_nice) > 0:
        return int(load)  # niced ourselves: niced neighbours compete on equal terms
    before = read()
    if before is None:
        return int(load)
    sleep(window_s)
    after = read()
    total = sum(b - a for a, b in zip(before[:8], after[:8])) if after else 0
    if not after or total <= 0:
        return int(load)
    niced_cores = cpus * (after[NICE] - before[NICE]) / total
    return max(0, int(load - niced_cores))
