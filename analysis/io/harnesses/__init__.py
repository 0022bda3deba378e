"""Study folders (docs/studies.md) from the outputs of the evaluation harnesses researchers run
(docs/harnesses.md): Inspect AI's eval logs (`inspect_logs`, read by inspect_ai's own log API),
lm-evaluation-harness's `--log_samples` files (`lm_eval`) and HELM's run folders (`helm`). Each reader
gives the samples it found (`common.Harvest`); `writer` checks them together, writes the study folder
with a README of what was mapped from where and what was left out, and validates it with the study
reader before it takes its place; `convert.study_from` is the one entry point."""
