"""Where the time of a notebook run goes, for `make bench`: the run (`reporting.run`) names a file in
the environment variable `CALMQA_TIMINGS`, the kernel it starts inherits the variable, and every step
timed with `timed` appends one JSON line to that file (wall and CPU seconds, and what it was). Without
the variable nothing is written.

`reset_peak_memory` and `peak_memory_mib` measure the peak memory of this process over a step (the
database build's stages), where the operating system keeps it (Linux's /proc)."""

import contextlib
import json
import os
import time
from collections.abc import Iterator

ENV = "CALMQA_TIMINGS"


@contextlib.contextmanager
def timed(phase: str, **detail) -> Iterator[None]:
    """Time the block as `phase` (e.g. `static export`), with `detail` (e.g. the format written)."""
    path = os.environ.get(ENV)
    if not path:
        yield
        return
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    line = {
        "phase": phase,
        **detail,
        "seconds": round(time.perf_counter() - wall, 4),
        "cpu_seconds": round(time.process_time() - cpu, 4),
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")


def read(path) -> list[dict]:
    """The steps a run recorded, in order ([] when it recorded none)."""
    try:
        text = open(path, encoding="utf-8").read()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def reset_peak_memory() -> None:
    """Start measuring this process's peak resident set afresh (Linux; elsewhere nothing happens)."""
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def peak_memory_mib() -> int | None:
    """This process's peak resident set since `reset_peak_memory` (or since it started), in MiB; None
    where the operating system does not say."""
    try:
        with open("/proc/self/status", encoding="utf-8") as status:
            return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None
