"""Statistics: intervals (Wilson, bootstrap, normal), two-sample comparisons, and the bridge to R for
the ordinal and mixed models."""
