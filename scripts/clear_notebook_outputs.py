"""Clear the outputs and execution counts of notebooks, in place, keeping the stored JSON layout.

The pre-commit hook runs it on every staged notebook: notebooks are stored without outputs (an executed
copy lives in build/executed/), so that a diff shows what changed in the narrative or the code and
Make reruns a report only when its notebook really changed. Exit 1 when a file was changed (pre-commit
then shows it for staging), 0 otherwise.
"""

import json
import sys
from pathlib import Path


def cleared(text: str) -> str:
    notebook = json.loads(text)
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def main(files: list[str]) -> int:
    changed = []
    for name in files:
        path = Path(name)
        text = path.read_text(encoding="utf-8")
        new = cleared(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(name)
    for name in changed:
        print(f"cleared the outputs of {name}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
