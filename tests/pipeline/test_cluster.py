"""The verdict stages on a Dask cluster (`DASK=`, analysis/pipeline/executors.py and dask_executor.py):
the same tables to the byte as on the forked processes, a worker killed mid-chunk, a scheduler that
cannot be reached or goes away, a worker that runs another version of the package, and no dask at all
without DASK.

The clusters are real: a `LocalCluster` of worker processes (processes=True), or a scheduler and a
worker started as `dask scheduler` / `dask worker` are. The faults are real too: a worker process or
the scheduler's process is sent SIGKILL while the surface stage runs, by a worker plugin that the test
registers on the cluster (the plugins run in the workers, so the kill happens while a chunk runs).
"""

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import distributed
import duckdb
import pytest
from same_tables import assert_same_tables
from tiny_release import answer, question, write_release

from analysis import cli
from analysis.core import paths
from analysis.core.errors import WorkerRefused
from analysis.pipeline import executors, imports, surface
from analysis.pipeline.build import build

# Every test starts a cluster, builds a database or loads the models: `make test` only.
pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent

# Sentences in the languages the n-gram engine judges, their neighbours and others, so that the
# answers get verdicts of every kind (and repetitions and provider errors).
SENTENCES = {
    "Kirundi": [
        "Ishirahamwe rishobora kwunguka mu gihe rigurisha ibicuruzwa canke ibikorwa vyaryo ku giciro kiruta ico vyaritwaye.",
        "Abana bose bafise uburenganzira bwo kwiga amashure, kandi abavyeyi babo barabafasha.",
        "Uburundi ni igihugu kiri mu karere k'ibiyaga binini, gifise imisozi myinshi.",
    ],
    "Papiamento": [
        "Aruba ta un isla chikí den laman Karibe, ku hopi turista tur aña.",
        "Mi ta gusta kome pan ku keshi tur mainta promé ku mi bai trabou.",
        "E hende ta biba na Kòrsou desde hopi aña i e ta papia tres idioma.",
    ],
    "Hiligaynon": [
        "Ang mga tawo sa Iloilo nagahambal sang Hiligaynon kag Kinaray-a.",
        "Malipayon gid ako nga makita ka liwat diri sa amon banwa.",
    ],
    "German": [
        "Der Föhn ist ein warmer, trockener Fallwind auf der Leeseite der Alpen.",
        "Man sagt halb vier, weil die halbe Stunde zur nächsten vollen Stunde gezählt wird.",
    ],
}
OTHERS = [
    "Ang mga bata ay naglalaro sa parke tuwing hapon kasama ang kanilang mga kaibigan.",
    "Abantu benshi bo mu Rwanda bavuga Ikinyarwanda n'Igifaransa.",
    "La ciudad tiene muchas casas antiguas y calles estrechas cerca del puerto.",
    "The weather today is sunny and warm, which is perfect for a long walk by the river.",
]
MODELS = ("Claude Opus", "GPT 4o", "GPT 4 Turbo")
QUESTIONS_PER_LANGUAGE = 12


def _answer_text(language: str, i: int, j: int) -> str:
    own, k = SENTENCES[language], 3 * i + j
    if k % 17 == 5:
        return ""  # a provider error
    if k % 17 == 9:
        return "SAFETY"
    if k % 5 == 3:  # an answer in another language
        return OTHERS[k % len(OTHERS)] + " " + own[k % len(own)]
    text = " ".join(own[(k + m) % len(own)] for m in range(1 + k % 3))
    return " ".join([text] * 5) if k % 7 == 2 else text  # some repeat themselves


def write_study_release(folder: Path) -> Path:
    """The tiny release with questions in Kirundi, Papiamento, Hiligaynon and German answered by three models
    (some 150 model answers): the surface and language_id_all stages both have chunks to send."""
    write_release(folder, gzip_files=False)
    for language in SENTENCES:
        entries = []
        for i in range(QUESTIONS_PER_LANGUAGE):
            name = f"{language.lower()}:{i + 10}"
            text = SENTENCES[language][i % len(SENTENCES[language])].split(",")[0] + f" ({i})?"
            entries.append(
                {
                    "question": question(
                        name, 5, language, {language: text, "English": f"Question {i}?"}, "other", False
                    ),
                    "answers": [
                        answer(name, language, "Human", SENTENCES[language][0]),
                        *(
                            answer(name, language, model, _answer_text(language, i, j))
                            for j, model in enumerate(MODELS)
                        ),
                    ],
                }
            )
        target = folder / "datasets" / f"dataset-specific-{language.lower()}.json"
        if target.exists():  # German: keep the tiny release's questions
            entries = json.loads(target.read_text(encoding="utf-8"))["entries"] + entries
        target.write_text(json.dumps({"entries": entries}, ensure_ascii=False), encoding="utf-8")
    return folder


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def beside(db: Path) -> list[str]:
    """What is in the database's folder besides it and its lock."""
    return sorted(p.name for p in db.parent.iterdir() if p.name not in (db.name, db.name + ".lock"))


def n_rows(db: Path, sql: str) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()[0][0]


@pytest.fixture(scope="module")
def study(tmp_path_factory, language_id_model) -> tuple[Path, Path]:
    """The release of `write_study_release` and its database built without Dask."""
    folder = write_study_release(tmp_path_factory.mktemp("study") / "release")
    db = folder.parent / "pool.duckdb"
    build(folder, db, verify=False, progress=False)
    # The stages have work of every kind: answers the n-gram engine judges, provider errors, repetitions.
    assert n_rows(db, "SELECT count(*) FROM answer_language_all WHERE engine = 'ngram'") > 20
    assert n_rows(db, "SELECT count(*) FROM answer_surface WHERE provider_error") > 2
    assert n_rows(db, "SELECT count(*) FROM answer_surface WHERE repetition") > 2
    return folder, db


@pytest.fixture
def cluster():
    """A LocalCluster of two worker processes of one thread, as `DASK=local:2` starts (which runs their
    scheduler in a process of its own)."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR
    ) as local:
        yield local


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cli_run(argv, capsys) -> tuple[int, str]:
    capsys.readouterr()
    status = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


# ------------------------------------------------------------------------------------ the same tables


def test_a_build_on_a_local_cluster_gives_the_tables_of_the_forked_processes(study, tmp_path):
    folder, pool = study
    on_cluster = tmp_path / "dask.duckdb"
    build(folder, on_cluster, verify=False, progress=False, dask="local:2")
    assert_same_tables(on_cluster, pool)


def test_an_import_on_a_cluster_gives_the_verdicts_of_one_without(study, cluster, tmp_path):
    folder, pool = study
    answers = tmp_path / "answers.csv"
    lines = ["question,language,model,answer"]
    for i in range(QUESTIONS_PER_LANGUAGE):
        for language in ("Kirundi", "Papiamento"):
            lines.append(f'{language.lower()}:{i + 10},{language},imported,"{_answer_text(language, i, 2)} {i}"')
    answers.write_text("\n".join(lines) + "\n", encoding="utf-8")
    databases = []
    for dask in (None, cluster.scheduler_address):
        db = tmp_path / ("dask" if dask else "pool") / "calmqa.duckdb"
        db.parent.mkdir()
        shutil.copyfile(pool, db)
        summary = imports.import_file("answers", answers, db, dask=dask)
        assert summary.added == 2 * QUESTIONS_PER_LANGUAGE
        databases.append(db)
    assert_same_tables(databases[1], databases[0])
    assert (
        n_rows(
            databases[1],
            "SELECT count(*) FROM answer_language_all JOIN answers USING (answer_id) "
            "WHERE model = 'imported' AND engine = 'ngram'",
        )
        > 0
    )


# ------------------------------------------------------------------------------------------- faults


class KillOnce(distributed.WorkerPlugin):
    """Sends SIGKILL to a process (its own worker's when `pid` is None) as the worker starts running its
    `after`-th chunk whose key starts with `prefix`, once in the whole cluster: the first worker to get
    there writes the pid it kills into `marker` (created exclusively), the others find it there."""

    def __init__(self, marker: Path, prefix: str, after: int, pid: int | None = None):
        self.marker, self.prefix, self.after, self.pid = str(marker), prefix, after, pid
        self.started = 0

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or not str(key).startswith(self.prefix):
            return
        self.started += 1
        if self.started != self.after:
            return
        victim = self.pid or os.getpid()
        with contextlib.suppress(FileExistsError):
            descriptor = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(descriptor, str(victim).encode())
            os.close(descriptor)
            os.kill(victim, signal.SIGKILL)


def test_a_worker_killed_in_the_surface_stage_has_its_chunk_run_again(study, cluster, tmp_path, monkeypatch):
    folder, pool = study
    marker = tmp_path / "killed"
    with distributed.Client(cluster, set_as_default=False) as client:
        pids = set(client.run(os.getpid).values())
        client.register_plugin(KillOnce(marker, "_chunk_verdicts", after=4), name="kill-once")
        # Small batches, so that the kill falls in the middle of the stage with batches before and after it.
        monkeypatch.setattr(surface, "BATCH_SIZE", 30)
        on_cluster = tmp_path / "dask.duckdb"
        build(folder, on_cluster, verify=False, progress=False, dask=cluster.scheduler_address)
        killed = int(marker.read_text())
        assert killed in pids
        with pytest.raises(ProcessLookupError):
            os.kill(killed, 0)
        # The nanny started a new worker process in its place.
        client.wait_for_workers(2, timeout=60)
        assert killed not in set(client.run(os.getpid).values())
    assert_same_tables(on_cluster, pool)


@pytest.fixture
def db(study, tmp_path) -> Path:
    """A previous database, to be left byte-identical by a build that fails."""
    (tmp_path / "db").mkdir()
    path = tmp_path / "db" / "calmqa.duckdb"
    shutil.copyfile(study[1], path)
    return path


def test_an_unreachable_scheduler_ends_the_build_with_one_message(study, db, capsys):
    before = digest(db)
    address = f"tcp://127.0.0.1:{closed_port()}"
    status, text = cli_run(["build-db", "--source", study[0], "--db", db, "--no-verify", "--dask", address], capsys)
    assert status == 2, text
    assert "Traceback" not in text and f"the Dask scheduler at {address} cannot be reached" in text, text
    assert digest(db) == before and beside(db) == []


@pytest.mark.parametrize("value", ["local:0", "localhost:8786", "tcp://host", "local:2;touch x"])
def test_a_dask_value_that_names_no_cluster_is_refused(study, db, capsys, value):
    status, text = cli_run(["build-db", "--source", study[0], "--db", db, "--no-verify", "--dask", value], capsys)
    assert status == 2 and "expected local:N" in text and "Traceback" not in text, text


def start(args: list[str], log: Path) -> subprocess.Popen:
    """A Dask command-line process (`dask scheduler`, `dask worker`) of this environment, as a user starts one;
    it finds the test's plugins on the path (this file's folder, and tests/ for the helpers it imports)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent), str(paths.ROOT)])}
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "dask"), *args], stdout=log.open("w"), stderr=subprocess.STDOUT, env=env
    )


def scheduler_address(scheduler_file: Path, seconds: float = 60) -> str:
    """The address a starting `dask scheduler` writes into its scheduler file (once it is written whole)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return json.loads(scheduler_file.read_text(encoding="utf-8"))["address"]
        except (OSError, ValueError, KeyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_a_scheduler_that_goes_away_ends_the_build_and_leaves_the_database(study, db, tmp_path, capsys):
    before = digest(db)
    scheduler_file = tmp_path / "scheduler.json"
    scheduler = start(
        [
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--dashboard-address",
            "127.0.0.1:0",
            "--scheduler-file",
            str(scheduler_file),
        ],
        tmp_path / "scheduler.log",
    )
    worker = None
    try:
        address = scheduler_address(scheduler_file)
        # Without a nanny: the worker is this one process, which the test ends.
        worker = start(
            ["worker", address, "--nthreads", "1", "--no-nanny", "--dashboard-address", "127.0.0.1:0"],
            tmp_path / "worker.log",
        )
        with distributed.Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=60)
            client.register_plugin(
                KillOnce(tmp_path / "killed", "_chunk_verdicts", after=2, pid=scheduler.pid), name="kill-scheduler"
            )
        status, text = cli_run(["build-db", "--source", study[0], "--db", db, "--no-verify", "--dask", address], capsys)
        assert scheduler.wait(timeout=10) == -signal.SIGKILL
        assert status == 2, text
        assert "Traceback" not in text and f"the Dask scheduler at {address} went away during the build" in text, text
        assert digest(db) == before and beside(db) == []
    finally:
        for process in (worker, scheduler):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


class OtherPackageVersion(distributed.WorkerPlugin):
    """Makes its worker report another version of the package than the driver's, as a worker with another
    release of it installed would: the version check reads `executors.package_version` on the worker."""

    def setup(self, worker):
        executors.package_version = lambda: "0.0.9 (source simulated)"


def test_a_worker_with_another_version_of_the_package_is_refused_naming_both(study, db, capsys):
    before = digest(db)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR
    ) as local:
        with distributed.Client(local, set_as_default=False) as client:
            client.register_plugin(OtherPackageVersion(), name="other-version")
        status, text = cli_run(
            ["build-db", "--source", study[0], "--db", db, "--no-verify", "--dask", local.scheduler_address], capsys
        )
    assert status == 2, text
    assert "Traceback" not in text and "0.0.9 (source simulated)" in text, text
    assert f"where the driver runs {executors.package_version()}" in text, text
    assert digest(db) == before


def test_a_worker_that_joins_later_with_another_version_is_refused_before_it_computes(monkeypatch):
    """The plugin that loads the models on a worker that joins during the build checks it first; the chunks
    sent to a refused worker fail with the reason, and the build with them."""
    from analysis.pipeline import dask_executor

    expected = executors.identity()
    monkeypatch.setattr(executors, "package_version", lambda: "0.0.9 (source simulated)")
    plugin = dask_executor._VerdictModels(
        "token-of-a-build", executors.VerdictModels().load, executors.identity, expected
    )
    asyncio.run(plugin.setup(SimpleNamespace(address="tcp://10.0.0.9:40000")))
    computed = []
    with pytest.raises(WorkerRefused) as refused:
        dask_executor._run("token-of-a-build", computed.append, "a chunk")
    assert computed == []
    assert "worker tcp://10.0.0.9:40000 runs calmqa-analysis 0.0.9 (source simulated)" in str(refused.value)
    assert f"where the driver runs {expected['calmqa-analysis']}" in str(refused.value)
    with pytest.raises(WorkerRefused, match="has not loaded the verdict models"):
        dask_executor._run("token-of-another-build", computed.append, "a chunk")


def test_a_scheduler_without_workers_ends_the_build_with_one_message(study, db, capsys):
    before = digest(db)
    with distributed.LocalCluster(n_workers=0, dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as empty:
        address = empty.scheduler_address
        status, text = cli_run(["build-db", "--source", study[0], "--db", db, "--no-verify", "--dask", address], capsys)
    assert status == 2 and "Traceback" not in text, text
    assert f"the Dask scheduler at {address} has no worker after" in text and f"dask worker {address}" in text, text
    assert digest(db) == before and beside(db) == []


# ------------------------------------------------------------------------------------ without DASK


def test_the_build_reports_its_peak_memory_over_all_its_stages(study, tmp_path, monkeypatch):
    """Each stage measures its own peak afresh (which forgets the one before): the build's peak still
    counts a stage that held much more than those after it."""
    write_tables = surface.write_tables
    held = 300 * 2**20

    def write_tables_holding_memory(con, workers):
        ballast = b"\x01" * held  # written, so resident
        write_tables(con, workers)
        del ballast

    monkeypatch.setattr(surface, "write_tables", write_tables_holding_memory)
    result = build(study[0], tmp_path / "x.duckdb", verify=False, progress=False)
    peaks = result["stage_peak_mib"]
    assert peaks["surface"] >= held // 2**20
    assert peaks["checks"] < peaks["surface"]
    assert result["peak_mib"] >= peaks["surface"]


def test_without_dask_nothing_imports_dask(study, tmp_path):
    code = (
        "import sys; from analysis.pipeline.build import build; "
        f"build({str(study[0])!r}, {str(tmp_path / 'x.duckdb')!r}, verify=False, progress=False); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=paths.ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_make_passes_dask_to_the_build_and_the_import_quoted(tmp_path):
    env = {**os.environ, "MAKEFLAGS": ""}
    for target in ("db", "import-answers FILE=a.csv"):
        done = subprocess.run(
            [
                "make",
                "--no-print-directory",
                "-n",
                *target.split(),
                "DASK=tcp://scheduler:8786",
                f"DB={tmp_path}/x.duckdb",
            ],
            cwd=paths.ROOT,
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.returncode == 0 and "--dask='tcp://scheduler:8786'" in done.stdout, done.stdout + done.stderr
