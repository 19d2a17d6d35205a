"""LRP-ε relevance of embedding dimensions, the downstream MLP and the relevance regressor (METHODS.md §3 step 3)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from captum.attr import LRP
from captum.attr._utils.lrp_rules import EpsilonRule

from textsift.budgets.lrp import (
    MLPClassifier,
    dimension_relevance,
    fit_relevance_regressor,
    lrp_epsilon,
    predict_relevance,
    train_mlp,
)
from textsift.errors import ConfigError

DIM, CLASSES = 10, 3


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _model(bias: bool, seed: int = 0, hidden: tuple[int, ...] = (16, 8)) -> MLPClassifier:
    return MLPClassifier(DIM, hidden, CLASSES, torch.Generator().manual_seed(seed), bias=bias).eval()


@pytest.fixture(scope="module")
def x() -> torch.Tensor:
    return torch.randn(64, DIM, generator=torch.Generator().manual_seed(1))


def _separable(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    features = torch.randn(n, 6, generator=g)
    direction = torch.tensor([1.0, -2.0, 0.5, 0.0, 1.5, -1.0])
    return features, (features @ direction > 0).long()


def _captum(model: MLPClassifier, x: torch.Tensor, target: torch.Tensor, epsilon: float) -> torch.Tensor:
    clone = copy.deepcopy(model)  # captum attaches rule attributes to the layers
    for layer in clone.layers:
        if isinstance(layer, torch.nn.Linear):
            layer.rule = EpsilonRule(epsilon=epsilon)
    return LRP(clone).attribute(x.clone().requires_grad_(), target=target).detach()


def test_relevance_is_conserved_for_a_bias_free_network(x: torch.Tensor) -> None:
    model = _model(bias=False)
    relevance = lrp_epsilon(model, x, epsilon=1e-9)
    scores = model(x).detach().max(dim=1).values
    assert relevance.shape == x.shape and relevance.dtype == x.dtype
    torch.testing.assert_close(relevance.sum(dim=1), scores, rtol=1e-4, atol=1e-7)


def test_relevance_starts_from_the_target_class_when_one_is_given(x: torch.Tensor) -> None:
    model = _model(bias=False)
    target = torch.arange(x.shape[0]) % CLASSES
    relevance = lrp_epsilon(model, x, epsilon=1e-9, target=target)
    torch.testing.assert_close(relevance.sum(dim=1), model(x).detach()[torch.arange(x.shape[0]), target],
                               rtol=1e-4, atol=1e-7)


def test_a_bias_absorbs_its_share_of_relevance_in_a_linear_model(x: torch.Tensor) -> None:
    model = _model(bias=True, hidden=())
    scores = model(x).detach()
    predicted = scores.argmax(dim=1)
    relevance = lrp_epsilon(model, x, epsilon=1e-9)
    bias = model.layers[0].bias.detach()
    torch.testing.assert_close(relevance.sum(dim=1), scores.max(dim=1).values - bias[predicted],
                               rtol=1e-4, atol=1e-6)
    with_bias = lrp_epsilon(_model(bias=True), x, epsilon=1e-9).sum(dim=1)
    assert not torch.allclose(with_bias, _model(bias=True)(x).detach().max(dim=1).values, rtol=1e-3)


@pytest.mark.parametrize("bias", [False, True])
def test_matches_captum_epsilon_rule(x: torch.Tensor, bias: bool) -> None:
    model = _model(bias=bias, seed=4)
    target = model(x).argmax(dim=1)
    ours = lrp_epsilon(model, x, epsilon=1e-6)
    torch.testing.assert_close(ours, _captum(model, x, target, epsilon=1e-6), rtol=1e-4, atol=1e-6)


def test_larger_epsilon_changes_the_attribution_like_captum(x: torch.Tensor) -> None:
    model = _model(bias=False, seed=5)
    target = model(x).argmax(dim=1)
    ours = lrp_epsilon(model, x, epsilon=0.5)
    torch.testing.assert_close(ours, _captum(model, x, target, epsilon=0.5), rtol=1e-4, atol=1e-6)
    assert (ours - lrp_epsilon(model, x, epsilon=1e-9)).abs().max() > 1e-3


def test_a_dimension_the_model_ignores_gets_no_relevance(x: torch.Tensor) -> None:
    model = _model(bias=True)
    with torch.no_grad():
        model.layers[0].weight[:, 3] = 0.0
    relevance = lrp_epsilon(model, x)
    assert torch.count_nonzero(relevance[:, 3]) == 0
    assert torch.count_nonzero(relevance[:, [0, 1, 2, 4]]) > 0
    r = dimension_relevance(model, x)
    assert r[3] == 0.0 and (r >= 0).all() and r.shape == (DIM,)
    np.testing.assert_allclose(r, relevance.double().abs().mean(dim=0).numpy(), rtol=1e-6)


def test_lrp_changes_neither_the_input_nor_the_model(x: torch.Tensor) -> None:
    model = _model(bias=True)
    state = copy.deepcopy(model.state_dict())
    before = x.clone()
    lrp_epsilon(model, x)
    torch.testing.assert_close(x, before, rtol=0, atol=0)
    for key, value in model.state_dict().items():
        torch.testing.assert_close(value, state[key], rtol=0, atol=0)


def test_invalid_lrp_arguments_are_rejected(x: torch.Tensor) -> None:
    model = _model(bias=False)
    with pytest.raises(ConfigError, match="epsilon"):
        lrp_epsilon(model, x, epsilon=-1.0)
    with pytest.raises(ValueError, match="target"):
        lrp_epsilon(model, x, target=torch.full((x.shape[0],), CLASSES))
    with pytest.raises(TypeError, match="Linear"):
        lrp_epsilon(torch.nn.Sequential(torch.nn.Linear(DIM, 2), torch.nn.Tanh()), x)


@pytest.mark.parametrize("batch_size", [32, None])
def test_train_mlp_learns_a_separable_problem(batch_size: int | None) -> None:
    features, labels = _separable(600, seed=2)
    model = train_mlp(features[:400], labels[:400], hidden=[16], epochs=15 if batch_size else 40, lr=0.05,
                      batch_size=batch_size, generator=torch.Generator().manual_seed(0))
    assert not model.training
    accuracy = (model(features[400:]).argmax(dim=1) == labels[400:]).float().mean().item()
    assert accuracy > 0.9


def test_train_mlp_is_deterministic_for_a_generator_seed_and_leaves_the_global_rng_alone() -> None:
    features, labels = _separable(200, seed=3)
    global_state = torch.get_rng_state()

    def fit(seed: int) -> dict[str, torch.Tensor]:
        return train_mlp(features, labels, hidden=[8, 8], epochs=5, lr=0.01, batch_size=16, bias=False,
                         generator=torch.Generator().manual_seed(seed)).state_dict()

    first, again, other = fit(7), fit(7), fit(8)
    assert all(torch.equal(first[key], again[key]) for key in first)
    assert not all(torch.equal(first[key], other[key]) for key in first)
    assert all(value.ndim == 2 for value in first.values())  # bias=False: weights only
    assert torch.equal(torch.get_rng_state(), global_state)


@pytest.mark.parametrize(("kwargs", "match"), [({"epochs": 0}, "epochs"), ({"lr": 0.0}, "lr"),
                                               ({"batch_size": 0}, "batch_size")])
def test_invalid_training_settings_are_config_errors(kwargs: dict, match: str) -> None:
    features, labels = _separable(20, seed=3)
    settings = {"hidden": [4], "epochs": 1, "lr": 0.01, "batch_size": 8, **kwargs}
    with pytest.raises(ConfigError, match=match):
        train_mlp(features, labels, generator=torch.Generator().manual_seed(0), **settings)


def test_relevance_regressor_fits_absolute_relevance_and_reproduces_its_mean() -> None:
    g = np.random.default_rng(0)
    x = g.uniform(0.0, 1.0, size=(300, 2))
    signed = np.column_stack([-2.0 * x[:, 0], 3.0 * x[:, 1] + 0.5])
    regressor = fit_relevance_regressor(x, signed, alpha=1e-9)
    np.testing.assert_allclose(predict_relevance(regressor, x), np.abs(signed).mean(axis=0), rtol=1e-6)
    same = fit_relevance_regressor(x, np.abs(signed), alpha=1e-9)
    np.testing.assert_allclose(regressor.coef_, same.coef_)


def test_predicted_relevance_is_clipped_at_zero_before_averaging() -> None:
    g = np.random.default_rng(1)
    x = g.uniform(0.0, 1.0, size=(100, 2))
    regressor = fit_relevance_regressor(x, np.column_stack([2.0 * x[:, 0], 3.0 * x[:, 1]]), alpha=1e-9)
    outside = np.array([[-1.0, 0.5], [-2.0, 0.5]])  # extrapolates to negative relevance in dimension 0
    assert (regressor.predict(outside)[:, 0] < 0).all()
    np.testing.assert_allclose(predict_relevance(regressor, outside), [0.0, 1.5], atol=1e-6)


def test_regressor_on_lrp_relevance_ranks_dimensions_like_lrp() -> None:
    features, labels = _separable(400, seed=4)
    model = train_mlp(features, labels, hidden=[16], epochs=15, lr=0.05, batch_size=64,
                      generator=torch.Generator().manual_seed(1))
    rows = lrp_epsilon(model, features).numpy()
    regressor = fit_relevance_regressor(features.numpy(), rows, alpha=1.0)
    predicted, measured = predict_relevance(regressor, features.numpy()), dimension_relevance(model, features)
    assert np.argmin(predicted) == np.argmin(measured) == 3  # the label ignores dimension 3
    assert np.argmax(measured) == 1  # ... and weighs dimension 1 most
    assert np.corrcoef(predicted, measured)[0, 1] > 0.9
