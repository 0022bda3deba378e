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
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..core import paths
from ..core.errors import Failure
from . import language_id_all, tokenizer
from .language_id import Identifier, langid_model_sha256

# Worker processes forked by default.
PROCESSES = 2
# The libraries whose versions a Dask worker must share with the driver for its verdicts to be the
# driver's, besides the package itself and langid's model (`identity`).
VERDICT_LIBRARIES = ("pycld2", "langid", "py3langid", "quicktok-v1", "regex", "numpy", "scipy")
PACKAGE = "calmqa-analysis"
_PACKAGE_FOLDER = Path(__file__).resolve().parent.parent
_LOCAL = re.compile(r"local:([1-9][0-9]*)")
_ADDRESS = re.compile(r"tcp://(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}")

# map(function, items): runs `function` on every item on the workers and yields the results as they come,
# in any order; every item is taken when it is called (the Dask cluster's are submitted a few at a time).
MapUnordered = Callable[[Callable, Iterable], Iterator]
# A surface chunk names the n-gram engine as its identifier by this prefix and the engine's key.
_NGRAM = "ngram:"


# ---------------------------------------------------------------- the models


@dataclass(frozen=True)
class VerdictModels:
    """What every worker loads once: the paper pipeline's language identification with its langid engine,
    the repetition rule's tokenizer, and the n-gram engine of language_id_all, as the bytes of its file
    (read once by the driver, so that a worker needs no file system shared with it; None where no
    stage needs it)."""

    langid_engine: str = "langid-batch"
    engine_file: bytes | None = None
    # The surface stage's language identification: the paper's pipeline (`paper`, the CaLMQA release) or
    # the n-gram engine itself (`engine`, a study: trained for its languages by the build).
    surface_identification: str = "paper"

    @classmethod
    def read(cls, model: Path | str = paths.LANGUAGE_ID_MODEL, langid_engine: str = "langid-batch") -> "VerdictModels":
        """The models with the n-gram engine trained into `model` (checked here: a missing or outdated
        file stops the build before anything is done, with its own message)."""
        return cls(langid_engine, language_id_all.read_file(model))

    @classmethod
    def for_study(cls, engine: language_id_all.Engine) -> "VerdictModels":
        """The models of a study's build: its trained `engine` judges every answer's language."""
        return cls(engine_file=engine.to_bytes(), surface_identification="engine")

    @classmethod
    def of_database(
        cls,
        con: duckdb.DuckDBPyConnection,
        model: Path | str = paths.LANGUAGE_ID_MODEL,
        udhr_folder: Path | str = paths.UDHR,
    ) -> "VerdictModels":
        """The models the database `con` was built with, for an import's verdicts to be those a rebuild
        gives: a study's engine (`study.language_identification = 'engine'`) trained again as its build
        trained it, for the database's languages on the UDHR of `udhr_folder`; else those of `model`."""
        (identification,) = con.execute("SELECT language_identification FROM study").fetchall()[0]
        if identification != "engine":
            return cls.read(model)
        languages = dict(con.execute("SELECT language, iso_code FROM languages").fetchall())
        return cls.for_study(language_id_all.train_for_languages(languages, udhr_folder))

    @property
    def surface_key(self) -> str:
        """What a surface chunk names its language identification by (`surface_identifier`)."""
        if self.surface_identification == "engine":
            return f"{_NGRAM}{self.engine_key}"
        return self.langid_engine

    @functools.cached_property
    def engine_key(self) -> str:
        """The sha256 of the n-gram engine's file: the key by which a worker keeps the engine it loaded."""
        if self.engine_file is None:
            raise ValueError("these models hold no n-gram engine: read them with `VerdictModels.read`")
        return hashlib.sha256(self.engine_file).hexdigest()

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


@functools.cache
def identifier(langid_engine: str) -> Identifier:
    """The paper pipeline's language identification with `langid_engine`, loaded once per process."""
    return Identifier(langid_engine)


def surface_identifier(key: str) -> Identifier | language_id_all.EngineIdentifier:
    """The surface stage's language identification that `key` names (`VerdictModels.surface_key`): the
    paper's pipeline with a langid engine, or a loaded n-gram engine."""
    if key.startswith(_NGRAM):
        return language_id_all.EngineIdentifier(ngram_engine(key.removeprefix(_NGRAM)))
    return identifier(key)


_engines: dict[str, language_id_all.Engine] = {}


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


def check_address(dask: str) -> None:
    """Refuse a DASK value that is neither `local:N` nor a scheduler's `tcp://host:port`."""
    if not (_LOCAL.fullmatch(dask) or _ADDRESS.fullmatch(dask)):
        raise Failure(
            f"DASK={dask!r}: expected local:N (a cluster of N worker processes on this machine) or the address "
            "of a running Dask scheduler, tcp://host:port (docs/performance.md, section On a cluster)"
        )


@contextlib.contextmanager
def start(models: VerdictModels, dask: str | None = None, processes: int = PROCESSES) -> Iterator[Workers]:
    """The workers of a build or an import, started once: `processes` worker processes forked from this
    one (1: this process alone), or with `dask` the Dask cluster it names. The forked workers inherit the
    models loaded here before the fork; start them before opening the database, while this process holds
    little memory (a worker keeps its own copy of every page the parent changes after the fork)."""
    if dask:
        check_address(dask)
        from . import dask_executor

        with dask_executor.connect(dask, models.load, identity) as (map_unordered, parallelism, where):
            yield Workers(map_unordered, models, parallelism, where)
        return
    if processes > 1:
        models.load()
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            yield Workers(pool.imap_unordered, models, processes, f"{processes} processes")
    else:
        models.load_engine()
        yield Workers(map, models, 1, "this process")
