"""Where the verdict stages run their batches: the surface stage, the language_id_all stage and an
import's verdicts of the answers it adds. By default on worker processes forked from this one; with
DASK (`make db DASK=local:2`, `DASK=tcp://host:8786`) on a Dask cluster (`pipeline.dask_executor`,
docs/performance.md, section "On a cluster"). Without DASK nothing imports dask.

Wherever they run, the stages send the same chunks and the driver (this process) writes the verdicts
to the database a batch at a time, in batch order, sorted by id within a batch: the tables are the
same to the byte.

The models (the paper pipeline's language identification, the o200k_base tokenizer, the n-gram engine
of language_id_all: `VerdictModels`) are loaded once per worker process and kept in this module's
caches, which the chunk functions read: a forked worker inherits those loaded in this process before
the fork; a Dask worker loads them when it joins, from the installed package and the n-gram engine's
bytes sent once with the plugin. No chunk carries a model, only the key of the models it needs.
"""

import contextlib
import functools
import hashlib
import importlib.metadata
import multiprocessing
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from ..core import paths
from ..core.errors import Failure
from ..io import short_text_evaluation
from . import language_id_all, language_routing, tokenizer
from .language_id import Identifier, langid_model_sha256

# Worker processes forked by default.
PROCESSES = 2
# The libraries whose versions a Dask worker must share with the driver for its verdicts to be the
# driver's, besides the package itself and langid's model (`identity`).
VERDICT_LIBRARIES = (
    "pycld2",
    "langid",
    "py3langid",
    "quicktok-v1",
    "regex",
    "numpy",
    "scipy",
    "lingua-language-detector",
)
PACKAGE = "calmqa-analysis"
_PACKAGE_FOLDER = Path(__file__).resolve().parent.parent
_LOCAL = re.compile(r"local:([1-9][0-9]*)")
_ADDRESS = re.compile(r"tcp://(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}")

# map(function, items): runs `function` on every item on the workers and yields the results as they come,
# in any order; every item is taken when it is called (the Dask cluster's are submitted a few at a time).
MapUnordered = Callable[[Callable, Iterable], Iterator]
# A surface chunk names a study's routed identification by this prefix, its route and the keys of its
# n-gram engine and routing.
_ROUTED = "routed:"


# ---------------------------------------------------------------- the models


@dataclass(frozen=True)
class VerdictModels:
    """What every worker loads once: the paper pipeline's language identification with its langid engine,
    the repetition rule's tokenizer, and the n-gram engine of language_id_all, as the bytes of its file
    (read once by the driver, so that a worker needs no file system shared with it; None where no
    stage needs it)."""

    langid_engine: str = "langid-batch"
    engine_file: bytes | None = None
    # The surface stage's language identification: the paper's pipeline (`paper`, the CaLMQA release) or a
    # study's routing (`routed`: `language_routing.RoutedIdentifier` with the n-gram engine trained for its
    # languages, the routing's rows as CSV bytes and the study's route).
    surface_identification: str = "paper"
    routing_file: bytes | None = None
    route: str = language_routing.AUTO

    @classmethod
    def read(cls, model: Path | str = paths.LANGUAGE_ID_MODEL, langid_engine: str = "langid-batch") -> "VerdictModels":
        """The models with the n-gram engine trained into `model` (checked here: a missing or outdated
        file stops the build before anything is done, with its own message)."""
        return cls(langid_engine, language_id_all.read_file(model))

    @classmethod
    def for_study(cls, engine: language_id_all.Engine, routing_rows: pl.DataFrame, route: str) -> "VerdictModels":
        """The models of a study's build: its trained `engine` and the routing (rows of
        `short_text_evaluation.ROUTING_SCHEMA` for its languages) judge every answer's language by `route`
        (`auto`, `ngram`, `lingua` or `none`)."""
        rows = routing_rows.select(list(short_text_evaluation.ROUTING_SCHEMA)).sort("route", "iso_code", "from_chars")
        return cls(
            engine_file=engine.to_bytes(compressed=False),
            surface_identification="routed",
            routing_file=rows.write_csv().encode(),
            route=route,
        )

    @classmethod
    def of_database(
        cls,
        con: duckdb.DuckDBPyConnection,
        model: Path | str = paths.LANGUAGE_ID_MODEL,
        udhr_folder: Path | str = paths.UDHR,
    ) -> "VerdictModels":
        """The models the database `con` was built with, for an import's verdicts to be those a rebuild
        gives: a study's engine trained again as its build trained it, for the database's languages on the
        UDHR of `udhr_folder`, with the routing and route the database holds
        (`study.language_identification`); else those of `model`."""
        (identification,) = con.execute("SELECT language_identification FROM study").fetchall()[0]
        if identification == "paper":
            return cls.read(model)
        languages = dict(con.execute("SELECT language, iso_code FROM languages").fetchall())
        rows = con.sql(
            "SELECT r.route, l.iso_code, r.from_chars, r.engine, r.margin, r.screen_margin, r.pct_correct "
            "FROM language_routing r JOIN languages l USING (language)"
        ).pl()
        engine = language_id_all.train_for_languages(languages, udhr_folder)
        return cls.for_study(engine, rows.cast(short_text_evaluation.ROUTING_SCHEMA), identification)

    @property
    def surface_key(self) -> str:
        """What a surface chunk names its language identification by (`surface_identifier`)."""
        if self.surface_identification == "routed":
            return f"{_ROUTED}{self.route}:{self.engine_key}:{self.routing_key}"
        return self.langid_engine

    @functools.cached_property
    def engine_key(self) -> str:
        """The sha256 of the n-gram engine's file: the key by which a worker keeps the engine it loaded."""
        if self.engine_file is None:
            raise ValueError("these models hold no n-gram engine: read them with `VerdictModels.read`")
        return hashlib.sha256(self.engine_file).hexdigest()

    @functools.cached_property
    def routing_key(self) -> str:
        """The sha256 of the routing's rows: the key by which a worker keeps the routing it loaded."""
        return hashlib.sha256(self.routing_file or b"").hexdigest()

    def load(self) -> None:
        """Load every model into this process's caches (done once per worker process)."""
        if self.surface_identification == "paper":
            identifier(self.langid_engine)
        tokenizer.quicktok_o200k()
        self.load_engine()

    def load_engine(self) -> None:
        """Load the n-gram engine, which the chunks name by its key only, into this process's cache (the
        other models load on first use)."""
        if self.engine_file is not None and self.engine_key not in _engines:
            _engines[self.engine_key] = language_id_all.Engine.from_bytes(self.engine_file, "the driver's model")
        if self.routing_file is not None and self.routing_key not in _routings:
            # Plain rows, not a polars frame: the forked workers read them, where polars must not run.
            _routings[self.routing_key] = language_routing.read_routing(self.routing_file)


@functools.cache
def identifier(langid_engine: str) -> Identifier:
    """The paper pipeline's language identification with `langid_engine`, loaded once per process."""
    return Identifier(langid_engine)


def surface_identifier(key: str) -> Identifier | language_routing.RoutedIdentifier:
    """The surface stage's language identification that `key` names (`VerdictModels.surface_key`): the
    paper's pipeline with a langid engine, or a study's routing with its loaded n-gram engine."""
    if key.startswith(_ROUTED):
        return _routed(key)
    return identifier(key)


@functools.cache
def _routed(key: str) -> language_routing.RoutedIdentifier:
    route, engine_key, routing_key = key.removeprefix(_ROUTED).split(":")
    if routing_key not in _routings:
        raise RuntimeError(f"the routing {routing_key[:12]} was not loaded in this worker process")
    return language_routing.RoutedIdentifier(ngram_engine(engine_key), _routings[routing_key], route)


_engines: dict[str, language_id_all.Engine] = {}
_routings: dict[str, list[dict]] = {}


def ngram_engine(key: str) -> language_id_all.Engine:
    """The n-gram engine of `key` (`VerdictModels.engine_key`), loaded by `VerdictModels.load` in this process."""
    try:
        return _engines[key]
    except KeyError:
        raise RuntimeError(f"the n-gram engine {key[:12]} was not loaded in this worker process") from None


# ---------------------------------------------------------------- what a Dask worker must share


@functools.cache
def _source_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE_FOLDER.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE_FOLDER).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def package_version() -> str:
    """The package's version and a digest of its source: two checkouts of one version may differ."""
    return f"{importlib.metadata.version(PACKAGE)} (source {_source_digest()})"


def identity() -> dict[str, str]:
    """What a worker must share with the driver for its verdicts to be the driver's: the package, the
    libraries the verdicts run, and the model of the langid engines."""
    return {
        PACKAGE: package_version(),
        **{name: importlib.metadata.version(name) for name in VERDICT_LIBRARIES},
        "langid model (sha256)": langid_model_sha256()[:16],
    }


# ---------------------------------------------------------------- the workers


@dataclass(frozen=True)
class Workers:
    """What the verdict stages map their chunks over, and the models the workers hold."""

    map_unordered: MapUnordered
    models: VerdictModels
    parallelism: int  # chunks run at once: a batch is cut into at least a few times as many
    where: str  # for the progress bars


def local_workers(dask: str) -> tuple[str, str | None]:
    """`dask` with a cluster on this machine (`local:N`) of no more worker processes than it has cores,
    and the note that says so when N was more (more would only take turns on the cores, each with its
    own copy of the models); other values as they are, without a note."""
    match = _LOCAL.fullmatch(dask)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if match is None or int(match.group(1)) <= cores:
        return dask, None
    return f"local:{cores}", (
        f"note: DASK={dask} asks for {int(match.group(1)):,} worker processes; this machine has {cores} "
        f"core{'s' if cores != 1 else ''}, so the cluster has {cores} (local:{cores})"
    )


def check_address(dask: str) -> None:
    """Refuse a DASK value that is neither `local:N` nor a scheduler's `tcp://host:port`."""
    if not (_LOCAL.fullmatch(dask) or _ADDRESS.fullmatch(dask)):
        raise Failure(
            f"DASK={dask!r}: expected local:N (a cluster of N worker processes on this machine) or the address "
            "of a running Dask scheduler, tcp://host:port (docs/performance.md, section On a cluster)"
        )


@contextlib.contextmanager
def start(models: VerdictModels, dask: str | None = None, processes: int | None = None) -> Iterator[Workers]:
    """The workers of a build or an import, started once: `processes` worker processes forked from this
    one (default `PROCESSES`, read when called; 1: this process alone), or with `dask` the Dask cluster it names. The forked workers inherit the
    models loaded here before the fork; start them before opening the database, while this process holds
    little memory (a worker keeps its own copy of every page the parent changes after the fork)."""
    if dask:
        check_address(dask)
        dask, note = local_workers(dask)
        if note:
            print(note, file=sys.stderr)
        from . import dask_executor

        with dask_executor.connect(dask, models.load, identity) as (map_unordered, parallelism, where):
            yield Workers(map_unordered, models, parallelism, where)
        return
    processes = PROCESSES if processes is None else processes
    if processes > 1:
        models.load()
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            yield Workers(pool.imap_unordered, models, processes, f"{processes} processes")
    else:
        models.load_engine()
        yield Workers(map, models, 1, "this process")
