"""o200k_base offline: the rank file rebuilt byte for byte, and token ids identical to a second
implementation on a sample of the release (every text: `make check-tokenizer`)."""

import hashlib
import random

import pytest
import tiktoken.load

from analysis.io import tokenizer_ranks
from analysis.pipeline import surface, tokenizer


def test_rank_file_is_tiktokens_own():
    import inspect

    from tiktoken_ext import openai_public

    # The address and checksum are tiktoken's own; the rebuilt file has exactly that checksum.
    source = inspect.getsource(openai_public.o200k_base)
    assert tokenizer_ranks.O200K_URL in source and tokenizer_ranks.O200K_SHA256 in source
    contents = tokenizer_ranks.o200k_base_file()
    assert hashlib.sha256(contents).hexdigest() == tokenizer_ranks.O200K_SHA256
    assert contents.count(b"\n") == 199_998


def test_encoding_is_built_offline_and_other_downloads_are_refused():
    encoding = tokenizer.o200k_base()
    assert encoding.name == "o200k_base" and encoding.n_vocab == 200_019
    # The surface stage tokenizes with quicktok's implementation of the same encoding.
    assert surface.repetition_tokenizer() is tokenizer.quicktok_o200k()
    with tokenizer._verified_rank_file(), pytest.raises(OSError, match="refusing to download"):
        tiktoken.load.read_file("https://example.invalid/other.tiktoken")


def test_a_rank_file_that_is_not_o200k_is_refused(monkeypatch):
    tokenizer_ranks.o200k_base_file.cache_clear()
    tokenizer.quicktok_o200k.cache_clear()
    monkeypatch.setattr(tokenizer_ranks, "_quicktok_ranks", lambda: [(b"a", 0), (b"b", 1)])
    try:
        with pytest.raises(tokenizer_ranks.TokenizerDataError, match="not tiktoken's published"):
            tokenizer_ranks.o200k_base_file()
        # quicktok reads the same packaged ranks, so it is refused too.
        with pytest.raises(tokenizer_ranks.TokenizerDataError, match="not tiktoken's published"):
            tokenizer.quicktok_o200k()
    finally:
        tokenizer_ranks.o200k_base_file.cache_clear()
        tokenizer.quicktok_o200k.cache_clear()


def test_token_ids_match_a_second_implementation_on_a_sample(con):
    texts = [r[0] for r in con.sql("SELECT coalesce(text, '') FROM answers ORDER BY answer_id").fetchall()]
    sample = random.Random(13).sample(texts, 400) + [
        "",
        "OTHER",
        "Hello <|endoftext|> world",
        "don't I'll 'TWAS",
        "日本語のトークナイザー 中文 한국어",
        "emoji 🚀🔥👍 mixed",
        "   leading\n\ttabs  \r\n",
        "1234567890 3.14159",
        # Texts where two implementations of the pre-tokenizing pattern could part: special tokens,
        # runs of spaces and newlines, contractions in capitals, combining marks, digits in other
        # scripts, unpaired surrogates' replacement, long single "words".
        "<|endoftext|><|endofprompt|><|fim_prefix|>",
        " " * 257 + "x\n\n\n   \n",
        "I'M YOU'RE WE'D THEY'LL SHE'S",
        "e\u0301 a\u0308\u0304 ना\u093cी ก\u0e31\u0e49",
        "٣٤٥ १२३ ௧௨ 〇一",
        "\ufffd\ufeff\u200b\u200d",
        "a" * 5000,
        "ab" * 3000 + " " + "中" * 2000,
        "x\u2028y\u2029z\x0bw\x0cv\x85u",
    ]
    result = tokenizer.compare_implementations(sample)
    assert result["n_texts"] == len(sample) and result["n_tokens"] > 100_000
    assert result["n_differing"] == 0, result["first_differing"]
