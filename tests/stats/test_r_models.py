"""The R bridge: cross-checks against statsmodels and R's `performance`, errors, and R's console kept quiet."""

import sys

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from statsmodels.miscmodels.ordinal_model import OrderedModel

from analysis.analyses import human_evaluation
from analysis.stats import r_models

# Every test here starts R (rpy2), but the ones that show what happens without it.
pytestmark = pytest.mark.needs_r


@pytest.fixture
def frame(con) -> pd.DataFrame:
    return human_evaluation.model_frame(human_evaluation.ratings(con))


def test_clm_agrees_with_statsmodels_ordered_model(frame):
    fit = r_models.fit_clm("rating ~ model + question_type", frame)
    exog = pd.DataFrame(
        {
            "modelgpt-4-turbo": (frame["model"] == "gpt-4-turbo").astype(float),
            "modelmixtral-8x22b": (frame["model"] == "mixtral-8x22b").astype(float),
            "question_typeagnostic": (frame["question_type"] == "agnostic").astype(float),
        }
    )
    model = OrderedModel(frame["rating"], exog, distr="logit")
    result = model.fit(method="newton", disp=False, maxiter=200)
    # Both use P(rating <= j) = F(threshold_j - x beta), so the coefficients compare directly; OrderedModel
    # stores the first threshold and then the logs of the increments between consecutive thresholds.
    beta = dict(zip(fit.coefficients["term"], fit.coefficients["estimate"]))
    for term in exog.columns:
        assert beta[term] == pytest.approx(result.params[term], abs=1e-4)
    cuts = model.transform_threshold_params(result.params.to_numpy())[1:-1]
    np.testing.assert_allclose(fit.thresholds["estimate"].to_numpy(), cuts, atol=1e-4)
    assert fit.thresholds["threshold"].to_list() == ["1|2", "2|3", "3|4", "4|5"]
    assert fit.log_likelihood == pytest.approx(result.llf, abs=1e-6)
    assert fit.converged and fit.random_effects.is_empty()


@pytest.mark.parametrize("predictors", ["model", "omissions", "model * question_type"])
def test_nakagawa_r2_agrees_with_performance(frame, predictors):
    fit = r_models.fit_clmm(f"rating ~ {predictors} + (1 | annotator)", frame)
    ours = r_models.nakagawa_r2(fit)
    ro = r_models._robjects()
    with r_models.quiet_r():
        theirs = ro.r(
            "function(fit) { r <- performance::r2_nakagawa(fit); v <- insight::get_variance(fit); "
            "c(marginal = unname(r$R2_marginal), conditional = unname(r$R2_conditional), "
            "var_fixed = v$var.fixed, var_random = v$var.random, var_residual = v$var.residual) }"
        )(fit.r_fit)
    theirs = dict(zip(theirs.names, theirs))
    assert ours.marginal == pytest.approx(theirs["marginal"], rel=1e-8)
    assert ours.conditional == pytest.approx(theirs["conditional"], rel=1e-8)
    assert ours.var_fixed == pytest.approx(theirs["var_fixed"], rel=1e-8)
    assert ours.var_random == pytest.approx(theirs["var_random"], rel=1e-6)
    assert ours.var_residual == pytest.approx(np.pi**2 / 3)


def test_clmm_returns_tidy_results(frame):
    fit = r_models.fit_clmm("rating ~ model + (1 | annotator)", frame)
    assert fit.coefficients["term"].to_list() == ["modelgpt-4-turbo", "modelmixtral-8x22b"]
    np.testing.assert_allclose(fit.coefficients["z"], fit.coefficients["estimate"] / fit.coefficients["std_error"])
    assert fit.random_effects.select("group", "term", "n_levels").rows() == [("annotator", "(Intercept)", 5)]
    n_parameters = len(fit.coefficients) + len(fit.thresholds) + len(fit.random_effects)
    assert fit.aic == pytest.approx(-2 * fit.log_likelihood + 2 * n_parameters)
    assert fit.n_obs == 300 and fit.converged and fit.convergence["max_gradient"] < 1e-3


def test_pairwise_contrasts_are_coefficient_differences(frame):
    fit = r_models.fit_clmm("rating ~ model + (1 | annotator)", frame)
    beta = dict(zip(fit.coefficients["term"], fit.coefficients["estimate"]))
    beta = {"claude-3-opus": 0.0, "gpt-4-turbo": beta["modelgpt-4-turbo"], "mixtral-8x22b": beta["modelmixtral-8x22b"]}
    contrasts = r_models.pairwise_contrasts(fit, "model")
    assert len(contrasts) == 3
    for row in contrasts.iter_rows(named=True):
        assert row["contrast"] == f"{row['level_a']} - {row['level_b']}"
        assert row["estimate"] == pytest.approx(beta[row["level_a"]] - beta[row["level_b"]], abs=1e-8)


def test_bonferroni_across_groups_multiplies_by_the_number_of_contrasts(frame):
    fit = r_models.fit_clmm("rating ~ model * question_type + (1 | annotator)", frame)
    raw = r_models.pairwise_contrasts(fit, "question_type", by="model", adjust="none")
    adjusted = r_models.pairwise_contrasts(fit, "question_type", by="model", adjust="bonferroni", across_groups=True)
    within = r_models.pairwise_contrasts(fit, "question_type", by="model", adjust="bonferroni")
    assert adjusted["model"].to_list() == ["claude-3-opus", "gpt-4-turbo", "mixtral-8x22b"]
    np.testing.assert_allclose(adjusted["p"], np.minimum(1, 3 * raw["p"].to_numpy()))
    # One contrast per model: a within-model family of one leaves the p values as they are.
    np.testing.assert_allclose(within["p"], raw["p"])
    np.testing.assert_allclose(adjusted["estimate"], raw["estimate"])


def test_r_error_reaches_python_with_r_message(frame):
    with pytest.raises(r_models.RError, match="object 'no_such_column' not found") as error:
        r_models.fit_clmm("rating ~ no_such_column + (1 | annotator)", frame)
    assert "ordinal::clmm" in str(error.value)


def test_missing_r_package_is_named_with_how_to_install_it():
    with pytest.raises(r_models.RUnavailable) as error:
        r_models.require_r_packages("ordinal", "calmqaNoSuchPackage")
    message = str(error.value)
    assert "calmqaNoSuchPackage is not installed" in message
    assert "apt-get install r-cran-calmqanosuchpackage" in message
    assert "conda-forge r-calmqanosuchpackage" in message
    assert "ordinal" not in message.split("is not installed")[0]


def test_missing_r_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "rpy2.robjects", None)
    with pytest.raises(r_models.RUnavailable, match="apt-get install r-base-core r-cran-ordinal"):
        r_models.require_r_packages("ordinal")


def test_categories_must_be_strings():
    frame = pd.DataFrame({"rating": pd.Categorical([1, 2, 1], categories=[1, 2], ordered=True), "x": [0.0, 1.0, 2.0]})
    with pytest.raises(ValueError, match="column 'rating'"):
        r_models.fit_clm("rating ~ x", frame)


def test_r_console_output_is_captured_not_printed(capsys):
    ro = r_models._robjects()
    with r_models.quiet_r() as written:
        ro.r('print("from R"); message("a message")')
    assert "from R" in "".join(written) and "a message" in "".join(written)
    assert capsys.readouterr() == ("", "")


def test_r_warnings_are_returned_with_the_fit():
    # Complete separation: clm warns that the Hessian is singular or the fit did not converge.
    frame = pd.DataFrame(
        {
            "rating": pd.Categorical(["1", "1", "1", "2", "2", "2"], categories=["1", "2", "3"], ordered=True),
            "group": pd.Categorical(["a", "a", "a", "b", "b", "b"], categories=["a", "b"]),
        }
    )
    fit = r_models.fit_clm("rating ~ group", frame)
    assert any("Hessian is numerically singular" in m for m in fit.r_messages)
    assert not fit.converged


def test_mixed_logistic_respects_the_reference_level(frame):
    data = frame[["no_factuality_issue", "question_type", "annotator"]]
    fit = r_models.fit_mixed_logistic("no_factuality_issue ~ question_type + (1 | annotator)", data)
    assert fit.coefficients["term"].to_list() == ["(Intercept)", "question_typeagnostic"]
    np.testing.assert_allclose(fit.coefficients["probability"], expit(fit.coefficients["estimate"]))
    np.testing.assert_allclose(fit.coefficients["odds_ratio"], np.exp(fit.coefficients["estimate"]))
    reversed_levels = data.assign(question_type=data["question_type"].cat.reorder_categories(["agnostic", "specific"]))
    refit = r_models.fit_mixed_logistic("no_factuality_issue ~ question_type + (1 | annotator)", reversed_levels)
    assert refit.coefficients["term"].to_list() == ["(Intercept)", "question_typespecific"]
    assert refit.coefficients["estimate"][1] == pytest.approx(-fit.coefficients["estimate"][1], abs=1e-4)
    # The intercept is the log-odds at the reference level: specific, then agnostic.
    assert refit.coefficients["estimate"][0] == pytest.approx(fit.coefficients["estimate"].sum(), abs=1e-4)
    assert fit.random_effects["group"].to_list() == ["annotator"]
    assert fit.n_obs == 300


def test_cohens_kappa_agrees_with_r_psych():
    # issue 37: the suite's Cohen's kappa (unweighted and with quadratic weights) against R's psych::cohen.kappa,
    # whose default weights are quadratic. Krippendorff's alpha has no R implementation in Debian 12 (irr is
    # not packaged): tests/stats/test_significance.py checks it against the worked example of Krippendorff's paper.
    from analysis.stats import agreement

    rng = np.random.default_rng(11)
    a = rng.integers(0, 5, 150)
    b = np.clip(a + rng.integers(-2, 3, 150), 0, 4)
    ro = r_models._robjects()
    with r_models.quiet_r():
        kappas = ro.r(
            "function(a, b) { k <- psych::cohen.kappa(cbind(a, b), levels = 0:4); c(k$kappa, k$weighted.kappa) }"
        )(ro.IntVector(a.tolist()), ro.IntVector(b.tolist()))
    unweighted, weighted = list(kappas)
    assert agreement.weighted_kappa(a, b, 5, None) == pytest.approx(unweighted, rel=1e-10)
    assert agreement.weighted_kappa(a, b, 5, "quadratic") == pytest.approx(weighted, rel=1e-10)
