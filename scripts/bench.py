"""Benchmark of every stage of the suite, at the snapshot's size and at multiples of it (`make bench`).

Each stage runs in its own process, so that its wall time and peak memory (the largest resident set of
one process, and the memory of its whole process tree) are its own, recorded with the machine's load. Results go to bench/results/bench.json and bench.md.
This is a measurement, not a test: nothing here passes or fails on a time.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.core import paths  # noqa: E402
from analysis.reporting import run  # noqa: E402

PY = sys.executable
# The CaLMQA authors' detect_lang.py and detect_repetitions.py over the snapshot's 21,152 model answers,
# in one process on this machine (the reference figure; scripts/bench_surface.py re-measures it).
PEER_SURFACE_SECONDS = 14.0


def tree_pss_kib(pid: int) -> int:
    """Proportional set size of a process and all its descendants: their memory, shared pages counted once."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/smaps_rollup") as rollup:
                total += next(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    pending += map(int, children.read().split())
        except (OSError, StopIteration):
            pass  # the process ended meanwhile
    return total


def measure(args: list[str], cwd: Path = ROOT) -> dict:
    """Run a command; its wall time, its processor time (of it and the children it waited for), peak memory
    (of its largest process, and of its whole process tree sampled every second), the load average before
    and after, and the last line it printed (a JSON result)."""
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    process = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tree_peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(1):
            tree_peak[0] = max(tree_peak[0], tree_pss_kib(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.stdout.read(), process.stderr.read()
    done.set()
    sampler.join()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed:\n{stderr[-3000:]}")
    lines = stdout.strip().splitlines()
    return {"seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "peak_mib": usage.ru_maxrss / 1024, "tree_peak_mib": tree_peak[0] / 1024 or None, "load_before": load_before, "load_after": os.getloadavg()[0], "output": lines[-1] if lines else ""}


def python_stage(code: str) -> list[str]:
    return [PY, "-c", f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); {code}"]


def build_stage(source: Path, db_path: Path, verify: bool) -> list[str]:
    return python_stage(
        f"from analysis.pipeline.build import build; r = build({str(source)!r}, {str(db_path)!r}, verify={verify}, progress=False); "
        "print(json.dumps(r))")


def notebook_stage(name: str, db_path: Path, out: Path) -> list[str]:
    return python_stage(
        f"from pathlib import Path; from analysis.reporting import run; o = Path({str(out)!r}); "
        f"run.run_notebook({name!r}, db_path=Path({str(db_path)!r}), figures_root=o / 'figures', "
        "reports_root=o / 'reports', build_root=o / 'build')")


def import_stage(db_path: Path, folder: Path) -> list[str]:
    """A new model's answers to every question (GPT-4o's, renamed), imported into a copy of the database:
    surface verdicts are computed for those answers only."""
    return python_stage(
        f"import shutil; from pathlib import Path; from analysis import store; from analysis.pipeline import imports; f = Path({str(folder)!r}); "
        f"f.mkdir(exist_ok=True); copy = f / 'copy.duckdb'; shutil.copy({str(db_path)!r}, copy); "
        "con = store.connect(copy); "
        "con.sql(\"COPY (SELECT q.name AS question, q.language, 'bench-model' AS model, a.text AS answer FROM answers a "
        "JOIN questions q USING (question_id) WHERE a.model = 'gpt-4o') TO '\" + str(f / 'answers.csv') + \"' (HEADER)\"); "
        "con.close(); s = imports.import_file('answers', f / 'answers.csv', copy); "
        "print(json.dumps({'added': s.added}))")


def repeat(label: str, scale: int, args: list[str], runs: int, results: list, cwd: Path = ROOT) -> list[dict]:
    samples = []
    for attempt in range(runs):
        sample = measure(args, cwd)
        samples.append(sample)
        print(f"  x{scale} {label}: {sample['seconds']:.1f} s ({sample['cpu_seconds']:.1f} s processor), "
              f"{sample['peak_mib']:.0f} MiB largest process, "
              f"{sample['tree_peak_mib'] or 0:.0f} MiB all processes, load {sample['load_before']:.1f} -> "
              f"{sample['load_after']:.1f} (run {attempt + 1}/{runs})", file=sys.stderr, flush=True)
    seconds = [s["seconds"] for s in samples]
    results.append({
        "stage": label, "scale": scale, "runs": runs, "min_seconds": round(min(seconds), 2),
        "median_seconds": round(statistics.median(seconds), 2),
        "median_cpu_seconds": round(statistics.median(s["cpu_seconds"] for s in samples), 2),
        "peak_mib": round(max(s["peak_mib"] for s in samples)),
        "tree_peak_mib": round(max(s["tree_peak_mib"] or 0 for s in samples)) or None,
        "load": [round(min(s["load_before"] for s in samples), 2), round(max(s["load_after"] for s in samples), 2)],
        "detail": _detail(samples[-1]["output"]),
    })
    return samples


def _detail(output: str):
    try:
        return json.loads(output)
    except json.JSONDecodeError:
        return None


def stage_seconds(result: dict, stage: str) -> float | None:
    timings = (result.get("detail") or {}).get("stage_seconds") or {}
    return timings.get(stage)


def make_tree_copy(dest: Path) -> Path:
    """The project's files (tracked or not, less ignored outputs) with their times kept, sharing .venv and the data."""
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                           check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, files):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, target)
    (dest / "data" / "raw").mkdir(parents=True, exist_ok=True)
    os.symlink(paths.RAW_CALMQA, dest / "data" / "raw" / "calmqa")
    os.symlink(ROOT / ".venv", dest / ".venv")
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--runs", type=int, default=3, help="runs per stage at the snapshot's size")
    parser.add_argument("--runs-scaled", type=int, default=1, help="runs per stage at larger scales")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--build-only", action="store_true", help="time the database build alone (no notebooks)")
    args = parser.parse_args()
    notebooks = [] if args.build_only else run.notebook_names()
    results: list[dict] = []
    work = Path(args.work or tempfile.mkdtemp(prefix="calmqa-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        for scale in args.scales:
            runs = args.runs if scale == 1 else args.runs_scaled
            print(f"scale x{scale}", file=sys.stderr)
            if scale == 1:
                source = paths.RAW_CALMQA
                repeat("data check (checksums)", scale, python_stage(
                    f"from pathlib import Path; from analysis.io import release; release.verify(Path({str(source)!r}))"), runs, results)
            else:
                source = work / f"release-x{scale}"
                repeat("generate synthetic release", scale, python_stage(
                    f"from pathlib import Path; from analysis.core import paths; from analysis.pipeline import synthetic; "
                    f"synthetic.write_release(paths.RAW_CALMQA, Path({str(source)!r}), {scale})"), 1, results)
            db_path = work / f"calmqa-x{scale}.duckdb"
            build = repeat("database build (all stages)", scale, build_stage(source, db_path, scale == 1), runs, results)
            detail = _detail(build[-1]["output"]) or {}
            for stage, seconds in (detail.get("stage_seconds") or {}).items():
                results.append({"stage": f"  of which {stage}", "scale": scale, "runs": runs,
                                "min_seconds": round(min(_detail(b["output"])["stage_seconds"][stage] for b in build), 2),
                                "median_seconds": round(statistics.median(
                                    _detail(b["output"])["stage_seconds"][stage] for b in build), 2),
                                "median_cpu_seconds": None, "peak_mib": None, "tree_peak_mib": None,
                                "load": None, "detail": None})
            for name in notebooks:
                repeat(f"notebook {name}", scale, notebook_stage(name, db_path, work / f"out-x{scale}"), runs, results)
            if scale == 1 and not args.build_only:
                repeat("import one new model's answers (copy of the database)", scale,
                       import_stage(db_path, work / "import"), runs, results)
            if scale > 1:
                shutil.rmtree(source, ignore_errors=True)
            db_path.unlink(missing_ok=True)
        if 1 in args.scales and not args.build_only:
            measure(["make", "--no-print-directory", "setup"])  # so that the copy never re-installs .venv
            tree = make_tree_copy(work / "tree")
            repeat("make figures (cold)", 1, ["make", "--no-print-directory", "figures"], 1, results, cwd=tree)
            repeat("make figures (nothing changed)", 1, ["make", "--no-print-directory", "figures"], args.runs,
                   results, cwd=tree)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    write_results(results, args.out)


def growth(results: list[dict]) -> list[str]:
    """How each stage's median time grows from the snapshot to the largest scale."""
    by_stage: dict[str, dict[int, float]] = {}
    for r in results:
        by_stage.setdefault(r["stage"], {})[r["scale"]] = r["median_seconds"]
    lines = []
    for stage, times in by_stage.items():
        if 1 in times and len(times) > 1 and times[1] > 0:
            largest = max(times)
            lines.append(f"- {stage.strip()}: x{largest} data takes {times[largest] / times[1]:.1f} times as long "
                         f"({times[1]:.1f} s -> {times[largest]:.1f} s)")
    return lines


def write_results(results: list[dict], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    (out / "bench.json").write_text(json.dumps({"machine": machine, "results": results}, indent=2) + "\n",
                                    encoding="utf-8")
    rows = ["| stage | scale | runs | min (s) | median (s) | processor, median (s) "
            "| peak memory (MiB): largest process / all | load |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        tree = "" if r["tree_peak_mib"] is None else f"{r['tree_peak_mib']:,}"
        peak = "" if r["peak_mib"] is None else f"{r['peak_mib']:,} / {tree}"
        load = "" if r["load"] is None else f"{r['load'][0]:.1f} -> {r['load'][1]:.1f}"
        cpu = "" if r["median_cpu_seconds"] is None else f"{r['median_cpu_seconds']:.2f}"
        rows.append(f"| {r['stage']} | x{r['scale']} | {r['runs']} | {r['min_seconds']:.2f} | "
                    f"{r['median_seconds']:.2f} | {cpu} | {peak} | {load} |")
    surface = [r for r in results if r["stage"].strip() == "of which surface" and r["scale"] == 1]
    peer = []
    if surface:
        ours = surface[0]["median_seconds"]
        peer = [f"The surface stage (language identification, repetitions, indicators) on the snapshot's 21,152 model "
                f"answers takes {ours:.1f} s on {machine['cpus']} cores. The CaLMQA authors' scripts are quoted at about "
                f"{PEER_SURFACE_SECONDS:.0f} s for the same work in one process ({ours / PEER_SURFACE_SECONDS:.0%} of that)."]
        measured = paths.BENCH_RESULTS / "surface.json"
        if measured.is_file():
            authors = json.loads(measured.read_text(encoding="utf-8"))["authors"]
            peer.append(f"Re-measured on this machine by `make bench-surface` (scripts/bench_surface.py), the authors' "
                        f"approach took {authors['seconds']:.0f} s ({authors['language_seconds']:.0f} s language "
                        f"identification, {authors['repetition_seconds']:.0f} s repetitions): the project's stage takes "
                        f"{ours / authors['seconds']:.0%} of that.")
    notes = ["Peak memory: the largest resident set of any one process of the stage (a process started from the "
             "benchmark counts the benchmark's own ~100 MiB until it replaces itself, `exec`), and the largest sum "
             "of the proportional set sizes of all its processes, sampled every second (pages shared between the "
             "processes counted once). Processor: user and system time of the stage and the children it waited "
             "for, which other work on the machine changes less than the wall time. Load: the 1-minute load "
             "average before the first and after the last run; other work on the machine slows every stage, so "
             "compare growth ratios from one run of the benchmark."]
    text = "\n".join([f"Machine: {machine['cpus']} cores, Python {machine['python']}.", "", *rows, "", *notes, "",
                      *peer, "", "Growth with the data:", *growth(results)]) + "\n"
    (out / "bench.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
