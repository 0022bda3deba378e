"""A notebook's code run in this process, as the report runner would have Papermill run it, without a
kernel: the cells of the sections the study has (`reporting.run.sections_for`, the cells the runner
keeps), the `parameters` cell followed by the values the runner injects (`db_path`, `output_dir`), then
every other code cell in order, each cell's last expression kept as its output as IPython keeps it, and
everything `display`ed kept too. The package calls are the notebook's own; only the figures' static
exports (the PNG, SVG and PDF that vl-convert draws, which take most of a report's time) are replaced,
with `cheap_exports`, by writing the chart's Vega-Lite specs for the screen and for print (altair
validates them against the schema as the real exports do) in their place.

`shared_engine` trains the language identification of `study_shapes.LANGUAGE_POOL` once and gives each
study's build the engine the build would train (the same models, the study's languages as targets):
`test_study_reports` checks that it is the engine `train_for_languages` trains.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from analysis.core import paths
from analysis.pipeline import language_id_all
from analysis.reporting import run
from analysis.viz import export, print_pdf


@dataclass
class Outputs:
    """What a notebook's cells showed: each cell's last value and what it displayed, in order."""

    shown: list = field(default_factory=list)

    def markdown(self) -> list[str]:
        """The Markdown the notebook showed (summaries, notes), as text."""
        return [item.data for item in self.shown if type(item).__name__ == "Markdown"]


def code_cells(name: str, paper: str | None = None) -> list[dict]:
    """The code cells of notebook `name` that the runner keeps for a study (`paper`: the paper it declares)."""
    notebook = json.loads((paths.NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))
    return [cell for cell in run.sections_for(notebook, paper)["cells"] if cell["cell_type"] == "code"]


def run_cells(name: str, db_path: Path, output_dir: Path, parameters: dict | None = None) -> Outputs:
    """Run notebook `name`'s code cells for the study in `db_path`, writing into `output_dir`."""
    import IPython.display

    outputs = Outputs()
    namespace: dict = {"__name__": "__main__"}
    real_display = IPython.display.display

    def display(*objects, **_):
        outputs.shown.extend(objects)

    IPython.display.display = display  # the cells import it from there
    try:
        for number, cell in enumerate(code_cells(name)):
            tree = ast.parse("".join(cell["source"]))
            filename = f"<{name} cell {number}>"
            if "parameters" in cell["metadata"].get("tags", []):
                exec(compile(tree, filename, "exec"), namespace)
                namespace.update(db_path=str(db_path), output_dir=str(output_dir), **(parameters or {}))
                continue
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, filename, "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
                if value is not None:
                    outputs.shown.append(value)
    finally:
        IPython.display.display = real_display
        connection = namespace.get("con")
        if connection is not None:
            connection.close()
    return outputs


@contextlib.contextmanager
def cheap_exports() -> Iterator[None]:
    """`viz.export.save_figure` without vl-convert: the PDF file holds the chart's print spec
    (`print_pdf.print_spec`: the spec the report shows, validated by altair against Vega-Lite's schema as
    every export does, with the print layout), the SVG and PNG files nothing."""

    def print_spec(chart, path):
        Path(path).write_text(json.dumps(print_pdf.print_spec(chart), ensure_ascii=False), encoding="utf-8")
        return Path(path)

    class NoPng:
        @staticmethod
        def svg_to_png(svg, scale, ppi) -> bytes:
            return b""

    saved = export._svg, export._vl_convert, print_pdf.save
    export._svg, export._vl_convert, print_pdf.save = (lambda chart: ""), (lambda: NoPng), print_spec
    try:
        yield
    finally:
        export._svg, export._vl_convert, print_pdf.save = saved


@functools.cache
def pool_engine(codes: tuple[str, ...], udhr_folder: Path) -> language_id_all.Engine:
    """The engine `train_for_languages` trains for languages named by the `codes` themselves."""
    return _train({code: code for code in codes}, udhr_folder)


_train = language_id_all.train_for_languages


def engine_for(languages: dict[str, str], base: language_id_all.Engine) -> language_id_all.Engine:
    """The engine of a study whose languages (name -> code) all have codes `base` was trained for: the same
    models, each language with a code `base` knows as a target (in name order, as training gives them)."""
    known = set(base.targets.values())
    targets = {name: code for name, code in sorted(languages.items()) if code in known}
    letters = {name: base.letters[code] for name, code in targets.items()}
    engine = copy.copy(base)  # the models' log-likelihoods as `base` computed them, shared
    engine.targets, engine.letters, engine.provenance = targets, letters, dict(base.provenance)
    return engine


@contextlib.contextmanager
def shared_engine(codes: tuple[str, ...], udhr_folder: Path = paths.UDHR) -> Iterator[None]:
    """Builds in this block get the engine of their languages from one engine trained for `codes`; a study
    with a language whose code is not among them is trained as usual."""

    def trained(languages: dict[str, str], folder=udhr_folder) -> language_id_all.Engine:
        if not set(languages.values()) <= set(codes):
            return _train(languages, folder)
        return engine_for(languages, pool_engine(codes, Path(folder)))

    language_id_all.train_for_languages = trained
    try:
        yield
    finally:
        language_id_all.train_for_languages = _train


# The errors of each (spec, schema) pair altair has validated in this process (`remembered_validation`), with the
# schemas themselves, held so that no other schema is ever given the id a key names.
_KNOWN_ERRORS: dict[tuple, tuple] = {}


@contextlib.contextmanager
def remembered_validation() -> Iterator[None]:
    """altair's schema validation done once per distinct spec: the errors of a (spec, schema) pair are
    remembered for the rest of the process (validation is a pure function of them), so that the generated
    studies of every test in a worker share them. A chart's inline datasets (the rows of the frame it draws,
    which the schema takes whatever they hold) are left out of what is validated, so that two studies' charts
    of one structure are validated once."""
    from altair.utils import schemapi

    errors_of = schemapi._get_errors_from_spec

    def remembered(spec, schema, rootschema=None):
        if isinstance(spec, dict) and isinstance(spec.get("datasets"), dict):
            spec = {**spec, "datasets": {name: [] for name in spec["datasets"]}}
        key = (json.dumps(spec, sort_keys=True, default=repr), id(schema), id(rootschema))
        if key not in _KNOWN_ERRORS:
            _KNOWN_ERRORS[key] = (schema, rootschema, errors_of(spec, schema, rootschema=rootschema))
        return _KNOWN_ERRORS[key][2]

    schemapi._get_errors_from_spec = remembered
    try:
        yield
    finally:
        schemapi._get_errors_from_spec = errors_of
