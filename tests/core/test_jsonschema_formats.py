"""The suite's processes do without the `iri` format's Lark grammar (`core.jsonschema_formats`)."""

import subprocess
import sys


def test_after_skip_iri_grammar_jsonschema_loads_without_the_grammar_and_checks_no_iri():
    code = (
        "import sys\n"
        "from analysis.core.jsonschema_formats import skip_iri_grammar\n"
        "skip_iri_grammar()\n"
        "import jsonschema\n"
        "assert sys.modules['rfc3987_syntax'] is None\n"
        "import importlib.util\n"
        "# (the older `rfc3987` package, when installed, would check the format instead: not installed here)\n"
        "print('iri' in jsonschema.Draft7Validator.FORMAT_CHECKER.checkers, importlib.util.find_spec('rfc3987') is None)\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.split() in (["False", "True"], ["True", "False"])


def test_the_test_processes_skip_it_too():
    assert sys.modules.get("rfc3987_syntax", "absent") is None
