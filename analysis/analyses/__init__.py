"""Queries and summaries, one module per notebook (or paper item), reading the database read-only.
`dimensions` holds the rules every analysis shares: model order, languages by resource level, their
labels and the unreliable-language rule."""
