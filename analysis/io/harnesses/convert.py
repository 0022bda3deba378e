"""`study_from`: a study folder from a harness's outputs (`make study-from`, docs/harnesses.md)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ...core.errors import Failure, Problems
from . import helm, inspect_logs, lm_eval, writer
from .common import Harvest, Options, metric_key

READERS = {"inspect": inspect_logs.read, "lm-eval": lm_eval.read, "helm": helm.read}


def study_from(format: str, sources: list[Path], out: Path, options: Options, command: str) -> writer.Written:
    """Read the harness's outputs in `sources`, check them together and write the study folder `out`.
    Every problem of the inputs is collected and raised as one `InputError`, before anything is written."""
    if format not in READERS:
        raise Failure(f"FORMAT={format!r}: expected one of {', '.join(READERS)} (docs/harnesses.md)")
    if options.language is not None and options.language_field is not None:
        raise Failure(
            "QUESTION_LANGUAGE= gives every question one language and LANGUAGE_FIELD= says where each sample's is: "
            "give one of them"
        )
    problems = Problems()
    harvest = READERS[format](sources, options, problems)
    problems.raise_if_any()
    if options.metrics is not None:
        keep_metrics(harvest, options)
    writer.check(harvest, problems)
    problems.raise_if_any()
    return writer.write(harvest, out, command=command, sources=sources)


def keep_metrics(harvest: Harvest, options: Options) -> None:
    """Keep the metrics METRICS= names (by the harness's name or by key); what it names that no sample has
    is an error that lists what they have."""
    assert options.metrics is not None
    found = {name for metric in harvest.metrics for name in (metric, metric_key(metric))}
    unknown = [m for m in options.metrics if m not in found]
    if unknown:
        raise Failure(
            f"METRICS= names {', '.join(map(repr, unknown))}, which no sample has; the samples' metrics: "
            f"{', '.join(harvest.metrics) or 'none'}"
        )
    for metric in [m for m in harvest.metrics if not options.keeps(m)]:
        del harvest.metrics[metric]
    samples = []
    for sample in harvest.samples:
        kept = tuple((m, v) for m, v in sample.scores if m in harvest.metrics)
        for metric, _ in sample.scores:
            if metric not in harvest.metrics:
                harvest.left_out[f"metric `{metric}` (not in METRICS=)"] += 1
        samples.append(dataclasses.replace(sample, scores=kept))
    harvest.samples = samples
