"""`make bench` (scripts/bench.py) adds to one table: a run replaces the rows it measured and keeps the
others with their commit, rows from before rows had a commit never pass for the latest figures, and the
before/after table names what is still to measure."""

import importlib.util
import json
import subprocess

import pytest

from analysis.core import paths


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench", paths.ROOT / "scripts" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def row(stage, scale, seconds, **extra):
    return {
        "stage": stage,
        "scale": scale,
        "runs": 1,
        "min_seconds": seconds,
        "median_seconds": seconds,
        "cpu_seconds": seconds,
        "peak_mib": 100,
        "load": [0.5, 0.7],
        "detail": None,
        **extra,
    }


def breakdown(seconds, imports, export):
    phases = {
        "kernel start": 1.0,
        "imports and set-up": imports,
        "analysis": 1.0,
        "static export": export,
        "HTML export": 1.0,
        "kernel shutdown": 0.1,
        "provenance": 0.1,
        "other": 0.3,
    }
    return {"seconds": seconds, "phases": phases}


def test_a_run_replaces_what_it_measured_and_keeps_the_rest(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "commit", lambda: "abc1234")
    previous = tmp_path / "bench.json"
    earlier = [
        {k: v for k, v in row(stage, scale, s).items() if k not in ("cpu_seconds", "load")}
        for stage, scale, s in [
            ("database build (all stages)", 50, 411.0),
            ("  of which release", 1, 1.8),
            ("  of which release", 50, 127.5),
            ("make figures (cold)", 1, 165.4),
        ]
    ]
    previous.write_text(json.dumps({"results": earlier}), encoding="utf-8")
    merged = bench.merge([row("make figures (cold)", 1, 50.0)], previous)
    assert [(r["stage"], r["scale"], r["commit"]) for r in merged] == [
        ("  of which release", 1, bench.EARLIER),
        ("database build (all stages)", 50, bench.EARLIER),
        ("  of which release", 50, bench.EARLIER),
        ("make figures (cold)", 1, "abc1234"),
    ]
    assert merged[-1]["median_seconds"] == 50.0 and merged[-1]["measured"]

    # The earlier 50x build is not "now": the table says how to measure it.
    table = "\n".join(bench.before_after(merged))
    assert "411.0 s, peak 2,906 MiB | not measured yet" in table
    assert "(71x) | not measured yet" in table and "--scales 1 50 --build-only" in table
    assert "| 50.0 s (50 s CPU); load 0.5 -> 0.7, commit abc1234" in table

    # The ingest's numbers, measured later with --build-only, land in the same table.
    again = bench.merge(
        [
            row("database build (all stages)", 50, 240.0),
            row("  of which release", 1, 2.0),
            row("  of which release", 50, 100.0),
        ],
        previous.parent / "none.json",
    )
    table = "\n".join(bench.before_after([*again, *[r for r in merged if r["commit"] != bench.EARLIER]]))
    assert "| 240.0 s, peak 100 MiB; load 0.5 -> 0.7" in table
    assert "| 2.0 s -> 100.0 s (50x) | <= 55x |" in table
    assert any("x50 data takes 50.0 times as long (2.0 s -> 100.0 s; abc1234)" in line for line in bench.growth(again))


def test_the_breakdown_of_each_notebook_of_the_cold_run(bench, monkeypatch):
    monkeypatch.setattr(bench, "commit", lambda: "abc1234")
    cold = row(
        "make figures (cold)",
        1,
        50.0,
        detail={"notebooks": {"01_a": breakdown(8.0, 0.8, 3.0), "02_b": breakdown(12.0, 0.9, 6.5)}},
    )
    results = bench.merge([cold], paths.ROOT / "no-such-file.json")
    table = "\n".join(bench.before_after(results))
    assert "| one notebook, in the cold `make figures` | 12-17 s | 8.0-12.0 s |" in table
    assert "| its import cell (imports and set-up) | about 5 s | 0.8-0.9 s | < 1 s |" in table
    alone = bench.merge(
        [
            row("notebook 01_a", 1, 7.0, detail=breakdown(7.0, 0.7, 3.0)),
            row("notebook 02_b", 1, 9.0, detail=breakdown(9.0, 0.6, 6.5)),
        ],
        paths.ROOT / "no-such-file.json",
    )
    table = "\n".join(bench.before_after(alone))
    assert "| one notebook, run alone (median) | 12-17 s | 7.0-9.0 s; load 0.5 -> 0.7" in table
    assert "| its import cell (imports and set-up), run alone | about 5 s | 0.6-0.7 s | < 1 s |" in table
    lines = bench.notebook_breakdown(results)
    assert (
        lines[2]
        == "| notebook | total (s) | kernel start | imports and set-up | analysis | static export | HTML export | other |"
    )
    # `other` is what the named phases leave of the total: shutdown, provenance and the runner's own.
    assert lines[4] == "| 01_a | 8.0 | 1.0 | 0.8 | 1.0 | 3.0 | 1.0 | 1.2 |"


def test_the_build_on_a_cluster_is_set_beside_the_build_of_the_same_run(bench, monkeypatch):
    monkeypatch.setattr(bench, "commit", lambda: "abc1234")
    none = paths.ROOT / "no-such-file.json"

    def build(stage, seconds, driver, surface, release_peak, surface_peak):
        detail = {
            "peak_mib": driver,
            "stage_seconds": {"release": 60.0, "surface": surface, "language_id_all": 30.0},
            "stage_peak_mib": {"release": release_peak, "surface": surface_peak, "language_id_all": 500},
        }
        return row(stage, 50, seconds, tree_peak_mib=1500, detail=detail)

    pool = build("database build (all stages)", 200.0, 1400, 90.0, 1400, 1100)
    on_cluster = build(bench.dask_build("local:2"), 250.0, 1300, 130.0, 1300, 700)
    # Rows of another run (another measurement time) are not compared.
    later = bench.merge([on_cluster], none)
    later[0]["measured"] = "2099-01-01T00:00+00:00"
    assert bench.cluster_builds([*bench.merge([pool], none), *later]) == []
    assert bench.cluster_comparison([])[0].startswith("Not measured yet")

    results = bench.merge([pool, on_cluster], none)
    assert [r["stage"] for r in results] == ["database build (all stages)", "database build (all stages), DASK=local:2"]
    table = bench.cluster_comparison(results)
    assert table[2] == (
        "| x50 | local:2 | 200.0 | 250.0 | 0.80 | 90.0 / 130.0 | 30.0 / 30.0 | 1,100 / 700 | 1,400 / 1,300 "
        "| 1,500 / 1,500 | 0.5 -> 0.7 | abc1234 |"
    )
    summary = table[-1]
    assert "a speed-up of 0.80 (slower on the cluster)" in summary
    assert (
        "The driver's peak memory over the whole build was 1,300 MiB (target: under 1,024 MiB: not met), set by "
        "the release stage (1,300 MiB), which runs on the driver alike with or without a cluster; in the two "
        "stages on the cluster it was 700 MiB, against 1,100 MiB with the forked processes." in summary
    )
    before_after = "\n".join(bench.before_after(results))
    assert "| database build at x50 on local:2 |  | 250.0 s against 200.0 s on the forked processes" in before_after
    assert (
        "(speed-up 0.80); driver's peak 700 MiB in the stages on the cluster, 1,300 MiB over the build" in before_after
    )


def test_the_largest_process_is_at_least_the_peak_the_build_reports(bench):
    """The build starts the measure of its peak afresh at each stage, so the operating system's figure for
    its process is that of its last stage: bench takes the peak the build prints over all of them."""
    # Measured from a small process: a child's peak counts its parent's resident set until it execs, and
    # this test's own process may hold a gigabyte after the tests before it.
    measuring = (
        "import importlib.util, json, sys; "
        "spec = importlib.util.spec_from_file_location('bench', sys.argv[1]); "
        "bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench); "
        "print(json.dumps(bench.measure([bench.PY, '-c', 'print(1)'])))"
    )
    measured = subprocess.run(
        [bench.PY, "-c", measuring, str(paths.ROOT / "scripts" / "bench.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    quiet = json.loads(measured.stdout.splitlines()[-1])
    assert quiet["peak_mib"] < 1_000
    reported = bench.measure([bench.PY, "-c", "import json; print(json.dumps({'peak_mib': 123456}))"])
    assert reported["peak_mib"] == 123456
