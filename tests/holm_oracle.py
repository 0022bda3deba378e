"""statsmodels' Holm adjustment: an oracle (another implementation) of `stats.significance`'s."""

from __future__ import annotations

from unittest import mock

import numpy as np
from statsmodels.stats.multitest import multipletests


def statsmodels_holm(p) -> np.ndarray:
    """The Holm-adjusted `p` values by statsmodels' `multipletests`, without the full garbage collection it
    runs on every call (`gc.collect()`, a third of a second in a test process's heap; it frees nothing the
    adjustment needs)."""
    with mock.patch("gc.collect", return_value=0):
        return multipletests(p, method="holm")[1]
