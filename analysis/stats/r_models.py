"""The bridge to R for ordinal and mixed models: cumulative link (mixed) models with `ordinal`, post-hoc
contrasts with `emmeans`, Nakagawa's R squared, and mixed logistic regressions with pymer4 (lme4).

Every function takes a pandas frame (the statistics libraries demand one) and returns tidy polars frames.
Categorical columns must be pandas categoricals with string categories: their first category becomes
R's reference level, and an ordered categorical becomes an ordered factor (the response of an ordinal
model). R's console is captured while R runs, so nothing R prints reaches a notebook; R's warnings and
messages are returned with each fit instead, and an R error is raised as `RError` with R's message.
"""

from __future__ import annotations

import importlib
import math
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import polars.selectors as cs

if TYPE_CHECKING:
    import pandas as pd

R_INSTALL_HINT = (
    "Install R and the packages: on Debian/Ubuntu `apt-get install r-base-core r-cran-ordinal "
    "r-cran-emmeans r-cran-performance r-cran-lme4 r-cran-lmertest`; with conda `conda install -c "
    "conda-forge r-base r-ordinal r-emmeans r-performance r-lme4 r-lmertest`"
)
R_PACKAGE_INSTALL = {
    "ordinal": ("r-cran-ordinal", "r-ordinal"),
    "emmeans": ("r-cran-emmeans", "r-emmeans"),
    "performance": ("r-cran-performance", "r-performance"),
    "lme4": ("r-cran-lme4", "r-lme4"),
    "lmerTest": ("r-cran-lmertest", "r-lmertest"),
}
# The logit link's residual variance on the latent scale (Nakagawa and Schielzeth 2013).
LOGIT_RESIDUAL_VARIANCE = math.pi**2 / 3


class RUnavailable(RuntimeError):
    """R, rpy2 or an R package that a function needs is missing; the message says how to install it."""


class RError(RuntimeError):
    """R stopped with an error; `r_message` is R's own message."""

    def __init__(self, action: str, r_message: str):
        self.r_message = r_message.strip()
        super().__init__(f"R failed while {action}: {self.r_message}")


# R code kept in one private environment: wrappers that collect R's warnings and messages with the
# result (so that they are reported, not printed) and return plain data frames.
_R_HELPERS = r"""
local({
  with_messages <- function(expr) {
    messages <- character()
    value <- withCallingHandlers(expr,
      warning = function(w) { messages <<- c(messages, conditionMessage(w)); invokeRestart("muffleWarning") },
      message = function(m) { messages <<- c(messages, trimws(conditionMessage(m))); invokeRestart("muffleMessage") })
    list(value = value, messages = messages)
  }

  fit_ordinal <- function(formula, data, random) {
    f <- stats::as.formula(formula)
    with_messages(if (random) {
      ordinal::clmm(f, data = data, link = "logit", threshold = "flexible", Hess = TRUE, nAGQ = 1L)
    } else {
      ordinal::clm(f, data = data, link = "logit", threshold = "flexible")
    })
  }

  parameter_table <- function(fit) {
    s <- summary(fit)$coefficients
    data.frame(term = rownames(s), estimate = s[, 1], std_error = s[, 2], z = s[, 3], p = s[, 4],
               is_threshold = rownames(s) %in% names(fit$alpha), row.names = NULL)
  }

  random_effect_table <- function(fit) {
    if (!inherits(fit, "clmm")) {
      return(data.frame(group = character(), term = character(), variance = numeric(), n_levels = integer()))
    }
    vc <- ordinal::VarCorr(fit)
    rows <- lapply(names(vc), function(g) {
      v <- diag(as.matrix(vc[[g]]))
      data.frame(group = g, term = names(v), variance = unname(v), n_levels = unname(fit$dims$nlev.gf[[g]]))
    })
    do.call(rbind, rows)
  }

  fit_summary <- function(fit) {
    if (inherits(fit, "clmm")) {
      ev <- eigen(fit$Hessian, only.values = TRUE)$values
      code <- as.integer(fit$optRes$convergence)
      message <- paste(fit$optRes$message, collapse = "; ")
      max_gradient <- max(abs(fit$gradient))
      cond_h <- max(ev) / min(ev)
      iterations <- as.integer(fit$Niter)
    } else {
      code <- as.integer(fit$convergence$code)
      message <- paste(c(fit$convergence$messages, fit$convergence$alg.message), collapse = "; ")
      max_gradient <- fit$maxGradient
      cond_h <- fit$cond.H
      iterations <- as.integer(fit$niter[1])
    }
    data.frame(n_obs = as.integer(stats::nobs(fit)), log_likelihood = as.numeric(stats::logLik(fit)),
               aic = stats::AIC(fit), code = code, message = message, max_gradient = max_gradient,
               condition_number_hessian = cond_h, iterations = iterations)
  }

  fixed_design <- function(fit) {
    X <- if (inherits(fit, "clmm")) stats::model.matrix(fit) else stats::model.matrix(fit)$X
    X[, names(fit$beta), drop = FALSE]
  }

  pairwise_contrasts <- function(fit, data, specs, by, adjust, across_groups) {
    emm <- emmeans::emmeans(fit, specs = specs, by = by, data = data)
    pairs_ <- graphics::pairs(emm, parens = NULL)
    s <- if (across_groups) summary(pairs_, by = NULL, adjust = adjust) else summary(pairs_, adjust = adjust)
    with_messages(as.data.frame(s))
  }

  environment()
})
"""

_helpers = None


def _robjects():
    """rpy2's robjects with R started, or `RUnavailable` saying how to install what is missing."""
    library_path = os.environ.get("LD_LIBRARY_PATH")
    try:
        return importlib.import_module("rpy2.robjects")
    except ImportError as exc:
        raise RUnavailable(
            f"rpy2 is not importable ({exc}); it is part of the project's Python environment "
            f"(environment.yml / pyproject.toml). {R_INSTALL_HINT}."
        ) from exc
    except (OSError, RuntimeError, ValueError) as exc:
        raise RUnavailable(f"R could not be started through rpy2 ({exc}). {R_INSTALL_HINT}.") from exc
    finally:
        # rpy2 puts R's and the system's library folders on LD_LIBRARY_PATH to start R. R is loaded by
        # then; left in place, the variable makes every process started afterwards (Jupyter kernels,
        # Papermill runs) load the system's libpython, an older Python than this one.
        if library_path is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = library_path


def require_r_packages(*packages: str) -> None:
    """Raise `RUnavailable` naming every missing R package and how to install it."""
    ro = _robjects()
    with quiet_r():
        missing = [p for p in packages if not ro.r["requireNamespace"](p, quietly=True)[0]]
    if missing:
        debian = " ".join(R_PACKAGE_INSTALL.get(p, (f"r-cran-{p.lower()}",))[0] for p in missing)
        conda = " ".join(R_PACKAGE_INSTALL.get(p, (None, f"r-{p.lower()}"))[1] for p in missing)
        raise RUnavailable(
            f"the R package{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"{'are' if len(missing) > 1 else 'is'} not installed: on Debian/Ubuntu `apt-get install {debian}`; "
            f"with conda `conda install -c conda-forge {conda}`; or in R `install.packages(c("
            + ", ".join(f'"{p}"' for p in missing)
            + "))`"
        )


@contextmanager
def quiet_r() -> Iterator[list[str]]:
    """Collect everything R writes to its console (instead of printing it) while the block runs."""
    _robjects()
    from rpy2.rinterface_lib import callbacks

    written: list[str] = []
    saved = callbacks.consolewrite_print, callbacks.consolewrite_warnerror
    callbacks.consolewrite_print = written.append
    callbacks.consolewrite_warnerror = written.append
    try:
        yield written
    finally:
        callbacks.consolewrite_print, callbacks.consolewrite_warnerror = saved


def _call(action: str, function_name: str, *args) -> Any:
    """Call one of the R helpers; an R error becomes `RError` with R's message."""
    global _helpers
    ro = _robjects()
    from rpy2.rinterface_lib.embedded import RRuntimeError

    with quiet_r():
        try:
            if _helpers is None:
                _helpers = ro.r(_R_HELPERS)
            return _helpers[function_name](*args)
        except RRuntimeError as exc:
            raise RError(action, str(exc)) from None


def _check_categoricals(frame: pd.DataFrame) -> None:
    import pandas as pd

    for name, column in frame.items():
        if isinstance(column.dtype, pd.CategoricalDtype) and not all(isinstance(c, str) for c in column.cat.categories):
            # rpy2 would silently fall back to strings and lose the level order and the reference level.
            raise ValueError(f"column {name!r}: the categories of a categorical column must be strings")


def _to_r(frame: pd.DataFrame):
    """A pandas frame as an R data.frame, through rpy2's pandas conversion in a local converter context."""
    _check_categoricals(frame)
    ro = _robjects()
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    with localconverter(ro.default_converter + pandas2ri.converter) as converter:
        return converter.py2rpy(frame)


def _to_polars(r_frame) -> pl.DataFrame:
    ro = _robjects()
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    with localconverter(ro.default_converter + pandas2ri.converter) as converter:
        frame = converter.rpy2py(r_frame)
    # R factors arrive as categoricals; the tables carry plain strings.
    return pl.from_pandas(frame.reset_index(drop=True)).with_columns(cs.categorical().cast(pl.String))


def _messages(r_list) -> tuple[str, ...]:
    return tuple(str(m) for m in r_list.rx2("messages"))


@dataclass(frozen=True)
class OrdinalFit:
    """A cumulative link (mixed) model fitted by R's `ordinal`, with its tidy results.

    `coefficients`: one row per fixed effect (log-odds of a higher rating). `thresholds`: the flexible cut points between adjacent rating levels.
    `random_effects`: variance of each random term (empty for `clm`). `convergence`: the optimiser's
    code (0 = converged) and message, the largest absolute gradient, the condition number of the Hessian.
    """

    formula: str
    coefficients: pl.DataFrame
    thresholds: pl.DataFrame
    random_effects: pl.DataFrame
    n_obs: int
    log_likelihood: float
    aic: float
    convergence: dict
    r_messages: tuple[str, ...]
    r_fit: Any = field(repr=False)
    r_data: Any = field(repr=False)

    @property
    def converged(self) -> bool:
        return self.convergence["code"] == 0


def _fit_ordinal(formula: str, data: pd.DataFrame, random: bool) -> OrdinalFit:
    require_r_packages("ordinal")
    r_data = _to_r(data)
    command = "clmm" if random else "clm"
    result = _call(f"fitting ordinal::{command}({formula})", "fit_ordinal", formula, r_data, random)
    r_fit = result.rx2("value")
    parameters = _to_polars(_call("tabulating the parameters", "parameter_table", r_fit))
    summary = _to_polars(_call("summarising the fit", "fit_summary", r_fit)).row(0, named=True)
    coefficients = parameters.filter(~pl.col("is_threshold")).drop("is_threshold")
    return OrdinalFit(
        formula=formula,
        coefficients=coefficients,
        thresholds=parameters.filter(pl.col("is_threshold")).drop("is_threshold").rename({"term": "threshold"}),
        random_effects=_to_polars(_call("tabulating the random effects", "random_effect_table", r_fit)).with_columns(
            std_dev=pl.col("variance").sqrt()
        ),
        n_obs=summary.pop("n_obs"),
        log_likelihood=summary.pop("log_likelihood"),
        aic=summary.pop("aic"),
        convergence=summary,
        r_messages=_messages(result),
        r_fit=r_fit,
        r_data=r_data,
    )


def fit_clmm(formula: str, data: pd.DataFrame) -> OrdinalFit:
    """`ordinal::clmm`: logit link, flexible thresholds, Laplace approximation; random terms as `(1 | g)`."""
    return _fit_ordinal(formula, data, random=True)


def fit_clm(formula: str, data: pd.DataFrame) -> OrdinalFit:
    """`ordinal::clm` (no random effects): logit link, flexible thresholds."""
    return _fit_ordinal(formula, data, random=False)


def pairwise_contrasts(
    fit: OrdinalFit, specs: str, by: str | None = None, adjust: str = "tukey", across_groups: bool = False
) -> pl.DataFrame:
    """All pairwise differences of the estimated marginal means of `specs` (emmeans, latent log-odds scale).

    With `by`, the pairs are formed within each level of `by`. The p values are adjusted by `adjust`
    (an emmeans method: "tukey", "bonferroni", "none", ...) within each `by` group, or over all the
    contrasts together when `across_groups` (with two levels per group, a within-group adjustment
    has one test per family and changes nothing). A positive estimate favours `level_a`.
    """
    require_r_packages("emmeans")
    ro = _robjects()
    result = _call(
        f"computing emmeans contrasts of {specs}" + (f" by {by}" if by else ""),
        "pairwise_contrasts",
        fit.r_fit,
        fit.r_data,
        specs,
        by if by is not None else ro.NULL,
        adjust,
        across_groups,
    )
    table = _to_polars(result.rx2("value"))
    by_columns = [by] if by else []
    return (
        table.rename({"SE": "std_error", "z.ratio": "z", "p.value": "p"})
        .with_columns(
            pl.col("contrast").str.split_exact(" - ", 1).struct.rename_fields(["level_a", "level_b"]).alias("levels"),
            pl.lit(adjust).alias("adjust"),
        )
        .unnest("levels")
        .select(*by_columns, "contrast", "level_a", "level_b", "estimate", "std_error", "z", "p", "adjust")
    )


@dataclass(frozen=True)
class NakagawaR2:
    """Variance components on the latent logit scale and the two R squared of Nakagawa and Schielzeth."""

    var_fixed: float
    var_random: float
    var_residual: float

    @property
    def marginal(self) -> float:
        return self.var_fixed / (self.var_fixed + self.var_random + self.var_residual)

    @property
    def conditional(self) -> float:
        return (self.var_fixed + self.var_random) / (self.var_fixed + self.var_random + self.var_residual)


def nakagawa_r2(fit: OrdinalFit) -> NakagawaR2:
    """Marginal and conditional R squared of a logit cumulative link (mixed) model with random intercepts.

    Fixed-effect variance: the sample variance (n - 1, as R's `var` and `performance` compute it) of the
    linear predictor X beta without the thresholds; random variance: the sum of the random-intercept
    variances; residual: pi^2 / 3 of the logistic distribution.
    """
    slopes = fit.random_effects.filter(pl.col("term") != "(Intercept)")
    if not slopes.is_empty():
        raise ValueError(
            f"{fit.formula}: Nakagawa R squared is implemented for random intercepts only, "
            f"not {slopes['term'].to_list()}"
        )
    design = _call("building the fixed-effect design matrix", "fixed_design", fit.r_fit)
    columns = [str(c) for c in design.colnames]
    estimates = dict(zip(fit.coefficients["term"], fit.coefficients["estimate"]))
    linear_predictor = np.asarray(design) @ np.array([estimates[c] for c in columns])
    return NakagawaR2(
        var_fixed=float(np.var(linear_predictor, ddof=1)),
        var_random=float(fit.random_effects["variance"].sum()),
        var_residual=LOGIT_RESIDUAL_VARIANCE,
    )


@dataclass(frozen=True)
class LogisticFit:
    """A mixed logistic regression fitted by pymer4 (lme4::glmer, binomial, Laplace).

    `coefficients`: estimate (log-odds), Wald 95% interval, z, p, and `probability` = logistic(estimate)
    with its interval: for the intercept, the probability of the outcome at the reference levels.
    """

    formula: str
    coefficients: pl.DataFrame
    random_effects: pl.DataFrame
    n_obs: int
    log_likelihood: float
    aic: float
    warnings: tuple[str, ...]


def fit_mixed_logistic(formula: str, data: pd.DataFrame) -> LogisticFit:
    """Fit `formula` (a 0/1 outcome, fixed effects and `(1 | group)` terms) with pymer4's `Lmer`.

    Categorical predictors are pandas categoricals (reference level first), as for `fit_clmm`; they reach
    R as factors with treatment contrasts, so terms are named like R's (`question_typeagnostic`).
    """
    require_r_packages("lme4", "lmerTest")
    _check_categoricals(data)
    from rpy2.rinterface_lib.embedded import RRuntimeError

    with quiet_r():
        # pymer4 loads R packages when imported and replaces R's console writers while it fits;
        # inside quiet_r both are captured, and the writers are restored afterwards.
        from pymer4.models import Lmer

        model = Lmer(formula, data=data, family="binomial")
        try:
            with warnings.catch_warnings():
                # pymer4 0.8 calls pandas' deprecated DataFrame.applymap; nothing the caller can act on.
                warnings.filterwarnings("ignore", category=FutureWarning, module="pymer4")
                model.fit(summarize=False, verbose=False, no_warnings=True)
        except RRuntimeError as exc:
            raise RError(f"fitting lme4::glmer({formula})", str(exc)) from None
    coefficients = (
        pl.from_pandas(model.coefs.reset_index(names="term"))
        .rename(
            {
                "Estimate": "estimate",
                "2.5_ci": "ci_low",
                "97.5_ci": "ci_high",
                "SE": "std_error",
                "OR": "odds_ratio",
                "Prob": "probability",
                "Prob_2.5_ci": "probability_ci_low",
                "Prob_97.5_ci": "probability_ci_high",
                "Z-stat": "z",
                "P-val": "p",
            }
        )
        .select(
            "term",
            "estimate",
            "std_error",
            "ci_low",
            "ci_high",
            "z",
            "p",
            "odds_ratio",
            "probability",
            "probability_ci_low",
            "probability_ci_high",
        )
    )
    random_effects = pl.from_pandas(model.ranef_var.reset_index(names="group")).rename(
        {"Name": "term", "Var": "variance", "Std": "std_dev"}
    )
    return LogisticFit(
        formula=formula,
        coefficients=coefficients,
        random_effects=random_effects,
        n_obs=len(model.data),
        log_likelihood=float(model.logLike),
        aic=float(model.AIC),
        warnings=tuple(str(w) for w in model.warnings),
    )
