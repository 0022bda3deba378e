"""jsonschema, which altair, nbformat and so Papermill and nbconvert import, loads `rfc3987_syntax` when
it is installed (JupyterLab's dependencies install it) to check the `iri` string format, and that module
compiles a Lark grammar as it is imported: about a second of CPU in every kernel and every run of a
notebook. Neither Vega-Lite's schema nor the notebook format uses the `iri` format, so the suite's
processes do without it: `skip_iri_grammar()` before those libraries are imported."""

import sys


def skip_iri_grammar() -> None:
    """Make `import rfc3987_syntax` raise ImportError, which jsonschema expects of a missing package; a
    process that has imported it already keeps it."""
    # A None entry is the import system's documented way to make an import fail; typeshed types
    # sys.modules as holding modules only.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
