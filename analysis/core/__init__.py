"""The bottom layer: every path, the controlled vocabularies, the error type for bad input, and the one
way files are written (atomically) and locked. Imports nothing of the suite."""
