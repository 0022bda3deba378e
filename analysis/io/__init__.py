"""Every reader of the suite's input files: the release (fetch, verify, JSON and CSV), records (CSV,
JSONL), the NativQA tables, the claims registry, the UDHR, the files researchers import, the
benchmarks' results and the language identification evaluation's files. Readers validate and collect
every problem (file, record, field); none of them touches the database."""
