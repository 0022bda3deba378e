"""The verdict stages' chunks on a Dask cluster (`executors.start` with DASK; nothing else imports this
module, so a build without DASK imports no dask).

`DASK=local:N` starts N worker processes of one thread each on this machine (no more than it has cores:
`executors.local_workers`), and their scheduler in a process of its own (`_local_cluster`);
`DASK=tcp://host:port` connects to a running scheduler (`dask scheduler`, with workers started by
`dask worker tcp://host:port`). Every wait on the network is bounded: the scheduler must answer Dask's
handshake within `CONNECT_SECONDS` (`_probe`: a port that accepts and never answers, or answers with
something else than Dask, is one message naming the address, and no client is made for it), each
question the driver asks it within `ANSWER_SECONDS`, and while results are awaited it must keep answering
(`_results`: a chunk may take long, a scheduler that stops answering may not). Before any work is sent, every worker's
versions are compared with the driver's: Dask's own packages (`Client.get_versions`), and the package,
the libraries the verdicts run and langid's model (`executors.identity`); a difference is refused,
naming both. A plugin then loads the models on every worker, and on every worker that joins later
(a worker the nanny restarts, a machine added), which it first checks the same way.

The chunks of a batch are submitted `IN_FLIGHT_PER_THREAD` per worker thread at a time, the next as each
result is taken (the stages keep two batches in flight, so up to twice that), so that the scheduler holds
the texts of those chunks only, not of every chunk of the batches in flight. A worker that dies mid-chunk
has its chunk run again on another by the scheduler; a scheduler that cannot be reached, or that goes away
during the build, ends it with one message naming its address (a `Failure`: exit status 2, and the
build's temporary database is removed, so the previous one stays byte-identical).
"""

import asyncio
import collections
import contextlib
import functools
import logging
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator

import distributed
from dask import config as dask_config
from distributed.versions import required_packages, scheduler_relevant_packages

from ..core import environment
from ..core.errors import Failure, WorkerRefused

# How long the driver tries to reach the scheduler, and waits for it to have a worker.
CONNECT_SECONDS = 10
# How long the scheduler may take to answer a question of the driver (its workers' versions, its threads...),
# and how often, while results are awaited, the driver asks whether it is still there.
ANSWER_SECONDS = 60
LIVENESS_SECONDS = 30
POLL_SECONDS = 0.02
# Dask warns when the tasks sent at once exceed this size (10 MB by default); a chunk's are below it.
GRAPH_WARNING = "1GiB"
# Chunks of one batch submitted at once per worker thread: one running, one waiting on the worker so that it
# never waits for the driver, and no more, as their texts are held by the scheduler until their results are taken.
IN_FLIGHT_PER_THREAD = 2
# Where to read how to start a cluster.
HOW_TO = "docs/performance.md, section On a cluster"

# On a worker: per plugin (one per build or import), None once the worker loaded its models, or why it
# refused the work.
_admitted: dict[str, str | None] = {}


class _LostScheduler(logging.Filter):
    """Drops what the client logs while it tries to reconnect to a scheduler that went away, and when it
    gives up: the build has already ended with its own message."""

    def filter(self, record: logging.LogRecord) -> bool:
        cancelled = record.exc_info is not None and isinstance(record.exc_info[1], asyncio.CancelledError)
        return not (record.funcName == "_reconnect" or cancelled)


logging.getLogger("distributed.client").addFilter(_LostScheduler())


def _differences(driver: dict[str, str], worker: dict[str, str]) -> list[str]:
    return [
        f"{name} {worker.get(name, '(missing)')} where the driver runs {version}"
        for name, version in driver.items()
        if worker.get(name) != version
    ]


class _VerdictModels(distributed.WorkerPlugin):
    """Loads the verdict stages' models once on every worker, present or joining later, after checking
    that the worker runs what the driver runs."""

    def __init__(self, token: str, load: Callable[[], None], identity: Callable[[], dict], expected: dict) -> None:
        self.token, self.load, self.identity, self.expected = token, load, identity, expected

    async def setup(self, worker) -> None:
        # In a thread: loading takes seconds, during which the worker keeps answering the scheduler.
        differing = _differences(self.expected, await asyncio.to_thread(self.identity))
        if differing:
            _admitted[self.token] = f"worker {worker.address} runs " + "; ".join(differing)
            return
        await asyncio.to_thread(self.load)
        _admitted[self.token] = None


def _run(token: str, function: Callable, item):
    """`function(item)` on a worker that loaded the models of the plugin `token`."""
    if token not in _admitted:
        raise WorkerRefused(
            f"a worker of the Dask cluster has not loaded the verdict models (its log says why): {HOW_TO}"
        )
    if _admitted[token] is not None:
        raise WorkerRefused(f"the Dask cluster refused a worker that joined during the build: {_admitted[token]}")
    return function(item)


def _silent(address: str, seconds: float) -> Failure:
    return Failure(
        f"the Dask scheduler at {address} did not answer within {seconds:g} s (is it a Dask scheduler, and "
        f"running?); nothing was written ({HOW_TO})"
    )


def _probe(address: str) -> None:
    """Dask's handshake with the scheduler at `address`, within `CONNECT_SECONDS`, before any client is made:
    a port where nothing listens, one that accepts and never answers (distributed waits for its handshake
    without a deadline) and one that answers with something else than Dask's messages are each one
    message naming the address."""
    from distributed.comm import connect as comm_connect

    async def handshake() -> None:
        # Dask's own deadline (a refused port, retried until then) ends first however loaded the machine is,
        # so a refused port is told as refused; the outer one only catches a port that accepts and never
        # sends Dask's handshake, which Dask waits for without a deadline.
        comm = await asyncio.wait_for(comm_connect(address, timeout=CONNECT_SECONDS), 2 * CONNECT_SECONDS)
        await comm.close()

    try:
        asyncio.run(handshake())
    except TimeoutError:
        raise _silent(address, 2 * CONNECT_SECONDS) from None
    except OSError as exc:
        raise Failure(
            f"the Dask scheduler at {address} cannot be reached ({exc}): start it with `dask scheduler` and its "
            f"workers with `dask worker {address}` ({HOW_TO}); nothing was written"
        ) from None
    except Exception as exc:  # noqa: BLE001 - whatever the bytes of another server make Dask's decoder raise
        raise Failure(
            f"what listens at {address} is not a Dask scheduler (its first answer is not Dask's handshake: "
            f"{type(exc).__name__}); nothing was written ({HOW_TO})"
        ) from None


def _asked(address: str, ask: Callable[..., object], *args, **kwargs):
    """`ask(*args, **kwargs)`, a synchronous call of the client that waits for the scheduler, answered within
    `ANSWER_SECONDS` or one message naming the address. (Distributed bounds few of its calls; this one
    waits in a thread of its own, left to the client's loop, which the build closes, when it times out.)"""
    outcome: dict[str, object] = {}

    def call() -> None:
        try:
            outcome["value"] = ask(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            outcome["error"] = exc

    waiting = threading.Thread(target=call, name="calmqa-dask-call", daemon=True)
    waiting.start()
    waiting.join(ANSWER_SECONDS)
    if waiting.is_alive():
        raise _silent(address, ANSWER_SECONDS)
    error = outcome.get("error")
    if isinstance(error, (OSError, distributed.client.ClosedClientError)):
        raise Failure(f"the Dask scheduler at {address} went away ({error}); nothing was written") from None
    if isinstance(error, BaseException):
        raise error
    return outcome["value"]


def _check_versions(client: distributed.Client, address: str, identity: Callable[[], dict]) -> None:
    """Refuse the cluster unless every worker (and the scheduler, for Dask's packages) runs the driver's versions."""
    ours = identity()
    try:
        theirs = _asked(address, client.run, identity)
    except Failure:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure here means the worker cannot run this package's code
        raise Failure(
            f"the workers of the Dask cluster at {address} cannot run this package's version check "
            f"({type(exc).__name__}: {exc}): install the driver's package on every worker ({HOW_TO})"
        ) from None
    problems = [
        f"worker {worker} runs {difference}"
        for worker, found in sorted(theirs.items())
        for difference in _differences(ours, found)
    ]
    versions = _asked(address, client.get_versions)
    # A synchronous client returns the versions themselves; distributed types the call for asynchronous ones too.
    assert isinstance(versions, dict)
    dask_packages = ["python", *required_packages]
    driver = {name: str(versions["client"]["packages"].get(name)) for name in dask_packages}
    scheduler = versions["scheduler"]["packages"]
    problems += [
        f"the scheduler runs {difference}"
        for difference in _differences(
            {name: v for name, v in driver.items() if name in scheduler_relevant_packages},
            {name: str(v) for name, v in scheduler.items()},
        )
    ]
    for worker, found in sorted(versions["workers"].items()):
        problems += [
            f"worker {worker} runs {difference}"
            for difference in _differences(driver, {name: str(v) for name, v in found["packages"].items()})
        ]
    if problems:
        raise WorkerRefused(
            f"the Dask cluster at {address} does not run what this driver runs, so its verdicts could differ: "
            + "; ".join(problems)
            + f". Install the driver's versions on every worker ({HOW_TO})."
        )


def _results(client: distributed.Client, run: Callable, items: Iterable, key: str, address: str) -> Iterator:
    """`run` over `items` on the cluster, the results as they complete, with the cluster's failures said in
    one message each. At most `IN_FLIGHT_PER_THREAD` items per worker thread are submitted at once, the
    first ones before this returns (so that the workers start while the caller does something else), the
    next each time a result is taken: the texts the items carry are held by the scheduler only while
    their chunks are in flight."""
    waiting = collections.deque(items)
    completed = distributed.as_completed(loop=client.loop)

    def gone(exc: Exception) -> Failure:
        return Failure(f"the Dask scheduler at {address} went away during the build ({exc}); nothing was written")

    def submit() -> None:
        try:
            # Named after the function (`_chunk_verdicts-<uuid>`), as the scheduler's dashboard shows them.
            with dask_config.set({"distributed.admin.large-graph-warning-threshold": GRAPH_WARNING}):
                completed.add(client.submit(run, waiting.popleft(), key=f"{key}-{uuid.uuid4().hex}", pure=False))
        except (OSError, distributed.client.ClosedClientError) as exc:
            raise gone(exc) from None

    threads = sum(_asked(address, client.nthreads).values())
    # At least one worker thread's worth: a cluster with no worker at this moment (its nannies restarting
    # them) keeps the chunks queued until one joins, as it would with every chunk submitted.
    window = IN_FLIGHT_PER_THREAD * max(1, threads)
    while waiting and completed.count() < window:
        submit()

    def next_done() -> distributed.Future:
        """The next completed chunk, however long it takes, as long as the scheduler keeps answering."""
        asked = time.monotonic()
        while not completed.has_ready():
            time.sleep(POLL_SECONDS)
            if time.monotonic() - asked > LIVENESS_SECONDS:
                _asked(address, client.nthreads)
                asked = time.monotonic()
        return next(completed)

    def taken() -> Iterator:
        try:
            while not completed.is_empty():
                future = next_done()
                result = future.result()
                future.release()
                if waiting:
                    submit()
                yield result
        except distributed.client.FutureCancelledError as exc:
            raise Failure(
                f"the Dask scheduler at {address} went away during the build ({exc.reason}); nothing was written"
            ) from None
        except distributed.KilledWorker as exc:
            raise Failure(
                f"a chunk was run on {exc.allowed_failures + 1} workers of the Dask cluster at {address} and each "
                f"died while running it (the last, {exc.last_worker.address}); nothing was written"
            ) from None

    return taken()


def _local_cluster(n_workers: int, folder: str) -> distributed.SpecCluster:
    """N worker processes of one thread each on this machine, and their scheduler in a process of its own:
    in this one (as `LocalCluster` runs it) it would hold the texts of the chunks in flight, and what its
    messages leave behind, in the driver's memory."""
    from distributed.deploy.subprocess import SubprocessScheduler

    # Its HTTP server (the dashboard's, without bokeh) on a free port of this machine only: by default it
    # takes 8787, or warns when another cluster has it.
    scheduler_options = {
        "host": "127.0.0.1",
        "port": 0,
        "dashboard": True,
        "dashboard_address": "127.0.0.1:0",
        "scheduler_file": os.path.join(folder, "scheduler.json"),  # where it says its address
    }
    worker = {"cls": distributed.Nanny, "options": {"host": "127.0.0.1", "nthreads": 1, "silence_logs": logging.ERROR}}
    # The scheduler's process logs errors only, unless the environment says otherwise (its configuration is
    # read from the environment it inherits): its standard error is a pipe nobody reads while it runs.
    with environment.variables_set(DASK_LOGGING__DISTRIBUTED=os.environ.get("DASK_LOGGING__DISTRIBUTED", "error")):
        return distributed.SpecCluster(
            scheduler={"cls": SubprocessScheduler, "options": {"scheduler_kwargs": scheduler_options}},
            workers=dict.fromkeys(range(n_workers), worker),
            silence_logs=logging.ERROR,
        )


@contextlib.contextmanager
def connect(
    dask: str, load: Callable[[], None], identity: Callable[[], dict]
) -> Iterator[tuple[Callable[[Callable, Iterable], Iterator], int, str]]:
    """The cluster that `dask` names (`local:N` or `tcp://host:port`), its versions checked and its workers'
    models loaded by `load`: yields (map_unordered, the workers' threads, where for the progress bars)."""
    with contextlib.ExitStack() as stack:
        if dask.startswith("local:"):
            cluster = _local_cluster(
                int(dask.removeprefix("local:")), stack.enter_context(tempfile.TemporaryDirectory())
            )
            stack.enter_context(cluster)
            address = cluster.scheduler_address
        else:
            address = dask
            _probe(address)
        try:
            client = distributed.Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise Failure(
                f"the Dask scheduler at {dask} cannot be reached ({exc}): start it with `dask scheduler` and its "
                f"workers with `dask worker {dask}` ({HOW_TO}); nothing was written"
            ) from None
        except Exception as exc:  # noqa: BLE001 - it answered the probe's handshake, then something else
            raise Failure(
                f"the Dask scheduler at {dask} failed to take this driver as a client ({type(exc).__name__}: "
                f"{exc}); nothing was written ({HOW_TO})"
            ) from None
        stack.enter_context(client)
        try:
            client.wait_for_workers(1, timeout=CONNECT_SECONDS)
        except TimeoutError:
            raise Failure(
                f"the Dask scheduler at {dask} has no worker after {CONNECT_SECONDS} s: start them with "
                f"`dask worker {dask}` ({HOW_TO}); nothing was written"
            ) from None
        _check_versions(client, dask, identity)
        token = f"calmqa-verdict-models-{uuid.uuid4().hex}"
        _asked(dask, client.register_plugin, _VerdictModels(token, load, identity, identity()), name=token)
        stack.callback(_unregister, client, token, dask)

        def map_unordered(function: Callable, items: Iterable) -> Iterator:
            # A chunk's texts travel inside its task, on purpose: data scattered to a worker would die with
            # it, and its chunk could not be run again.
            return _results(client, functools.partial(_run, token, function), items, function.__name__, dask)

        yield map_unordered, sum(_asked(dask, client.nthreads).values()), f"Dask {dask}"


def _unregister(client: distributed.Client, token: str, address: str) -> None:
    """Remove the build's plugin (the scheduler would otherwise send it to every worker that joins); a
    scheduler that went away, or does not answer, has nothing the build needs removed: its work is done."""
    if client.status == "running":
        with contextlib.suppress(Failure):
            _asked(address, client.unregister_worker_plugin, token)
