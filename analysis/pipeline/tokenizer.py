"""tiktoken's `o200k_base`, offline and verified: the encoding the paper used for repetitions and Table 17.

`o200k_base()` builds the encoding through tiktoken's own constructor (its pattern and special tokens)
from the rank file that `analysis.io.tokenizer_ranks` rebuilds from the `quicktok-v1` package and
verifies against tiktoken's sha256, so the token ids are tiktoken's and nothing is downloaded.

quicktok's C++ encoder (`quicktok_o200k()`) is an independent implementation of the same encoding and
about four times as fast: the surface stage tokenizes with it, and tiktoken's is the reference it is
checked against. `compare_implementations` encodes texts with both and reports any difference
(tests/pipeline/test_tokenizer.py on a sample of the release and on awkward texts, `make check-tokenizer` on
every text of a database).
"""

import contextlib
from collections.abc import Iterable
from functools import cache
from importlib import resources

import tiktoken
import tiktoken.load

from ..core import environment
from ..io.tokenizer_ranks import NAME, O200K_SHA256, O200K_URL, o200k_base_file


@contextlib.contextmanager
def _verified_rank_file():
    """While open, tiktoken reads o200k_base's rank file from `o200k_base_file()` instead of the network;
    any other download fails at once. tiktoken still checks the sha256 itself."""
    original = tiktoken.load.read_file

    def read_file(blobpath: str) -> bytes:
        if blobpath == O200K_URL:
            return o200k_base_file()
        if "://" in blobpath:
            raise OSError(f"refusing to download {blobpath}: the suite works offline")
        return original(blobpath)

    tiktoken.load.read_file = read_file
    try:
        yield
    finally:
        tiktoken.load.read_file = original


@cache
def o200k_base() -> tiktoken.Encoding:
    """tiktoken's o200k_base encoding, built by tiktoken's own constructor from the verified ranks."""
    from tiktoken_ext import openai_public

    # TIKTOKEN_CACHE_DIR="" turns tiktoken's disk cache off, so nothing is read from or written to it.
    with _verified_rank_file(), environment.variables_set(TIKTOKEN_CACHE_DIR=""):
        return tiktoken.Encoding(**openai_public.o200k_base())


@cache
def quicktok_o200k():
    """quicktok's own (C++) implementation of o200k_base, the surface stage's tokenizer: it encodes about
    four times as fast as tiktoken. Its packaged ranks are those `o200k_base_file()` verifies against
    tiktoken's sha256 (checked here before use), and its token ids are tiktoken's on every text of the
    release (`make check-tokenizer`; tests/pipeline/test_tokenizer.py on a sample and on awkward texts)."""
    import quicktok

    o200k_base_file()  # raises unless quicktok's packaged ranks are tiktoken's o200k_base
    # Its packaged data, explicitly: without a folder quicktok would fall back to a user data folder.
    return quicktok.get_encoding(NAME, data_dir=str(resources.files("quicktok").joinpath("data")))


def compare_implementations(texts: Iterable[str]) -> dict:
    """Encode every text with tiktoken (verified ranks) and with quicktok; the counts and the first texts
    whose token ids differ. Special-token strings are encoded as ordinary text by both, as in the suite."""
    reference, second = o200k_base(), quicktok_o200k()
    n_texts = n_tokens = 0
    differing: list[int] = []
    for index, text in enumerate(texts):
        ids = reference.encode_ordinary(text)
        n_texts, n_tokens = n_texts + 1, n_tokens + len(ids)
        if list(second.encode_ordinary(text)) != ids:
            differing.append(index)
    return {
        "encoding": NAME,
        "reference": f"tiktoken {tiktoken.__version__} with ranks of sha256 {O200K_SHA256}",
        "second_implementation": f"quicktok {_quicktok_version()}",
        "n_texts": n_texts,
        "n_tokens": n_tokens,
        "n_differing": len(differing),
        "first_differing": differing[:20],
    }


def _quicktok_version() -> str:
    from importlib.metadata import version

    return version("quicktok-v1")
