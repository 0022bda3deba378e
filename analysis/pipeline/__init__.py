"""Everything that writes the database: the release's tables, the surface and language verdicts, the
NativQA tables, researchers' imports, the checks, and the one orchestrator (`build`). Also the
language identification engines' training and evaluation, and synthetic releases for benchmarks."""
