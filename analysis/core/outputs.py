"""The files a notebook run writes, recorded by the functions that write them: the run (`reporting.run`)
names a file in the environment variable `CALMQA_OUTPUTS`, the kernel it starts inherits the variable,
and every save function of the package (`viz.export.save_figure` and `save_table`, `viz.tables.save`)
appends one JSON line per file it wrote (its path and which function wrote it). The run reads them back
into the notebook's manifest (`reporting.run.write_manifest`). Without the variable nothing is recorded.
"""

import json
import os
from pathlib import Path

ENV = "CALMQA_OUTPUTS"


def written(path: Path | str, by: str) -> None:
    """Record that `by` (the save function) wrote the file `path`."""
    log = os.environ.get(ENV)
    if not log:
        return
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"path": str(Path(path).resolve()), "by": by}) + "\n")


def read(log: Path | str) -> list[dict]:
    """The files a run recorded, in the order they were written ([] when it recorded none)."""
    try:
        text = Path(log).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]
