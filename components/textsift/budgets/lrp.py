"""Relevance of each embedding dimension: an MLP classifier, LRP-ε, a relevance regressor (METHODS.md §3 step 3).

:func:`lrp_epsilon` propagates the score of the predicted (or given) class of a ReLU MLP back to the input
with the ε-rule, one linear layer at a time:

    z_k = Σ_j a_j w_jk + b_k,      R_j = Σ_k  a_j w_jk / (z_k + ε·sign(z_k)) · R_k,      sign(0) := +1

and passes relevance through each ReLU unchanged (a_j = 0 for an inactive unit, so it receives none).
Summing R_j over j gives Σ_k R_k · (z_k − b_k) / (z_k + ε·sign(z_k)): the bias b_k and the stabilizer ε
absorb their share of each unit's relevance. Relevance is therefore conserved (Σ_d R_d = class score)
exactly only for a bias-free network in the limit ε → 0. This matches captum's ``EpsilonRule``.

Relevance r_d = mean_i |R_id| is only known for labelled data; at publish time a Ridge regressor that
predicts |R_i| from the embedding x_i stands in for it (:func:`fit_relevance_regressor`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from sklearn.linear_model import Ridge
from torch import nn

from textsift.errors import ConfigError


class MLPClassifier(nn.Module):
    """Linear → ReLU → … → Linear classifier on sentence embeddings (METHODS.md §3 step 3).

    Only ``nn.Linear`` and ``nn.ReLU`` modules (no functional activations), so LRP implementations that walk
    the modules (ours, captum's) see every layer. Weights and biases are drawn from ``generator`` with
    ``nn.Linear``'s default bounds U(±1/sqrt(fan_in)); the global torch RNG is not used.

    Args:
        dim: Input (embedding) dimension.
        hidden: Widths of the hidden layers; empty for a linear model.
        n_classes: Number of output class scores (logits).
        generator: Source of the initial weights.
        bias: Whether the linear layers have biases (False gives exact LRP conservation as ε → 0).
    """

    def __init__(self, dim: int, hidden: Sequence[int], n_classes: int, generator: torch.Generator,
                 bias: bool = True) -> None:
        super().__init__()
        widths = [int(dim), *(int(h) for h in hidden), int(n_classes)]
        if min(widths) < 1:
            raise ConfigError(f"MLP layer widths must be >= 1, got dim/hidden/n_classes = {widths}")
        modules: list[nn.Module] = []
        for i, (fan_in, fan_out) in enumerate(zip(widths[:-1], widths[1:], strict=True)):
            modules.append(nn.utils.skip_init(nn.Linear, fan_in, fan_out, bias=bias))
            if i < len(widths) - 2:
                modules.append(nn.ReLU())
        self.layers = nn.Sequential(*modules)
        self.reset_parameters(generator)

    def reset_parameters(self, generator: torch.Generator) -> None:
        """Draw every weight and bias from U(±1/sqrt(fan_in)) using ``generator``."""
        with torch.no_grad():
            for layer in self.layers:
                if isinstance(layer, nn.Linear):
                    bound = 1.0 / float(np.sqrt(layer.in_features))
                    layer.weight.uniform_(-bound, bound, generator=generator)
                    if layer.bias is not None:
                        layer.bias.uniform_(-bound, bound, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Class scores (logits), shape [n, n_classes]."""
        return self.layers(x)


def _check_training(epochs: int, lr: float, batch_size: int | None) -> None:
    if epochs < 1:
        raise ConfigError(f"epochs must be >= 1, got {epochs}")
    if not (np.isfinite(lr) and lr > 0):
        raise ConfigError(f"lr must be a positive finite number, got {lr}")
    if batch_size is not None and batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1 or None, got {batch_size}")


def train_mlp(x: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray, hidden: Sequence[int], epochs: int,
              lr: float, batch_size: int | None, generator: torch.Generator, bias: bool = True,
              n_classes: int | None = None) -> MLPClassifier:
    """Train the downstream MLP with Adam and cross-entropy (METHODS.md §3 step 3).

    Deterministic given the generator's state (same hardware and thread settings): it draws the initial
    weights and, for mini-batches, each epoch's row permutation.

    Args:
        x: Embeddings, shape [n, dim]; cast to float32. Not mutated.
        y: Integer class labels in [0, n_classes), shape [n].
        hidden: Hidden layer widths.
        epochs: Passes over the data (>= 1).
        lr: Adam learning rate (> 0).
        batch_size: Rows per step; ``None`` or >= n means full-batch gradient descent.
        generator: torch.Generator for initialization and shuffling; advanced by the call.
        bias: Whether the linear layers have biases.
        n_classes: Number of classes; defaults to max(y) + 1.

    Returns:
        The trained model, in eval mode.

    Raises:
        ConfigError: ``epochs``, ``lr`` or ``batch_size`` is out of range (ValueError: x, y shapes disagree).
    """
    _check_training(epochs, lr, batch_size)
    features = torch.as_tensor(x, dtype=torch.float32)
    labels = torch.as_tensor(y, dtype=torch.long)
    if features.ndim != 2 or labels.shape != (features.shape[0],) or features.shape[0] == 0:
        raise ValueError(f"x must be [n, dim], y [n], n > 0; got {tuple(features.shape)}, {tuple(labels.shape)}")
    n, classes = features.shape[0], int(labels.max()) + 1 if n_classes is None else int(n_classes)
    model = MLPClassifier(features.shape[1], hidden, classes, generator, bias=bias).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    step = n if batch_size is None else min(int(batch_size), n)
    for _ in range(epochs):
        order = torch.randperm(n, generator=generator) if step < n else torch.arange(n)
        for start in range(0, n, step):
            rows = order[start:start + step]
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(features[rows]), labels[rows]).backward()
            optimizer.step()
    return model.eval()


def _layers(model: nn.Module) -> list[nn.Module]:
    sequence = model.layers if isinstance(model, MLPClassifier) else model
    layers = list(sequence.children()) if isinstance(sequence, nn.Sequential) else []
    if not layers or not all(isinstance(layer, nn.Linear | nn.ReLU) for layer in layers):
        raise TypeError("lrp_epsilon needs an MLPClassifier or an nn.Sequential of nn.Linear and nn.ReLU")
    return layers


def _epsilon_linear(a: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, relevance: torch.Tensor,
                    epsilon: float) -> torch.Tensor:
    """ε-rule through one linear layer, batched: a [n, in], weight [out, in], relevance [n, out] -> [n, in]."""
    z = a @ weight.T
    if bias is not None:
        z = z + bias
    sign = torch.where(z >= 0, 1.0, -1.0).to(z.dtype)
    denominator = z + epsilon * sign
    ratio = torch.where(denominator == 0, torch.zeros_like(relevance), relevance / denominator)
    return a * (ratio @ weight)


def _output_relevance(scores: torch.Tensor, target: torch.Tensor | None) -> torch.Tensor:
    """Relevance of the output layer: the chosen class's score, 0 for every other class."""
    classes = scores.argmax(dim=1) if target is None else torch.as_tensor(target, dtype=torch.long)
    if classes.shape != (scores.shape[0],) or bool(((classes < 0) | (classes >= scores.shape[1])).any()):
        raise ValueError(f"target must hold one class index in [0, {scores.shape[1]}) per row")
    relevance, rows = torch.zeros_like(scores), torch.arange(scores.shape[0])
    relevance[rows, classes] = scores[rows, classes]
    return relevance


def lrp_epsilon(model: nn.Module, x: torch.Tensor, epsilon: float = 1e-6, target: torch.Tensor | None = None
                ) -> torch.Tensor:
    """LRP-ε relevance of every input dimension for every row (METHODS.md §3 step 3).

    The output relevance is the score (logit) of the predicted class — or of ``target`` — with every
    other class at 0; it is propagated back layer by layer with :func:`_epsilon_linear` and passed
    through ReLUs. The computation runs in float64 without autograd, then is cast back to x's dtype.

    Args:
        model: An :class:`MLPClassifier` or an ``nn.Sequential`` of ``nn.Linear`` / ``nn.ReLU``. Not changed.
        x: Inputs, shape [n, dim]. Not mutated.
        epsilon: Stabilizer ε >= 0 added to each denominator with the sign of z_k (sign(0) = +1);
            a 0/0 at ε = 0 gives 0 relevance.
        target: Class index per row, shape [n]; ``None`` uses each row's predicted (argmax) class.

    Returns:
        Relevance R, shape [n, dim]. Σ_d R_id equals the class score exactly only for a bias-free
        model as ε → 0 (biases absorb relevance; see the module docstring).

    Raises:
        ConfigError: ``epsilon`` is negative or not finite (TypeError: a layer other than Linear/ReLU;
            ValueError: a bad shape of ``x`` or ``target``, or a class index out of range).
    """
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise ConfigError(f"lrp epsilon must be a finite number >= 0, got {epsilon}")
    inputs = torch.as_tensor(x)
    if inputs.ndim != 2:
        raise ValueError(f"x must be [n, dim], got {tuple(inputs.shape)}")
    params = [(layer.weight.detach().double(), None if layer.bias is None else layer.bias.detach().double())
              if isinstance(layer, nn.Linear) else None for layer in _layers(model)]
    activations = [inputs.detach().double()]
    for param in params:  # forward pass in float64; None stands for a ReLU
        a = activations[-1]
        activations.append(a.clamp(min=0) if param is None else a @ param[0].T + (0 if param[1] is None else param[1]))
    relevance = _output_relevance(activations[-1], target)
    for param, a in zip(reversed(params), reversed(activations[:-1]), strict=True):
        if param is not None:  # a ReLU passes relevance through unchanged
            relevance = _epsilon_linear(a, param[0], param[1], relevance, epsilon)
    out_dtype = inputs.dtype if inputs.is_floating_point() else torch.float32
    return relevance.to(out_dtype)


def dimension_relevance(model: nn.Module, x: torch.Tensor | np.ndarray, epsilon: float = 1e-6) -> np.ndarray:
    """Relevance per dimension r_d = mean_i |R_id| over the rows of x (METHODS.md §3 step 3).

    Args:
        model: The trained classifier.
        x: Embeddings, shape [n, dim], n > 0 (typically the training set).
        epsilon: LRP stabilizer, see :func:`lrp_epsilon`.

    Returns:
        r_d, shape [dim], float64, >= 0.
    """
    relevance = lrp_epsilon(model, torch.as_tensor(x), epsilon=epsilon)
    if relevance.shape[0] == 0:
        raise ValueError("x must have at least one row")
    return relevance.double().abs().mean(dim=0).numpy()


def fit_relevance_regressor(x: np.ndarray, relevance_rows: np.ndarray, alpha: float = 1.0) -> Ridge:
    """Fit a multi-output Ridge regressor that predicts |R_i| from embedding x_i (METHODS.md §3 step 3).

    Args:
        x: Embeddings, shape [n, dim]. Not mutated.
        relevance_rows: LRP relevance per row, shape [n, dim] (absolute values are taken here).
        alpha: Ridge L2 penalty (>= 0).

    Returns:
        A fitted ``sklearn.linear_model.Ridge``.
    """
    if not (np.isfinite(alpha) and alpha >= 0):
        raise ConfigError(f"relevance regressor alpha must be a finite number >= 0, got {alpha}")
    features = np.asarray(x, dtype=np.float64)
    targets = np.abs(np.asarray(relevance_rows, dtype=np.float64))
    if features.ndim != 2 or targets.shape != features.shape or features.shape[0] == 0:
        raise ValueError(f"x and relevance_rows must be [n, dim], n > 0; got {features.shape}, {targets.shape}")
    return Ridge(alpha=alpha).fit(features, targets)


def predict_relevance(regressor: Ridge, x: np.ndarray) -> np.ndarray:
    """Relevance per dimension at publish time: mean over rows of the clipped (>= 0) predictions (§3 step 3).

    Args:
        regressor: From :func:`fit_relevance_regressor`.
        x: Embeddings to be published, shape [n, dim], n > 0.

    Returns:
        r_d, shape [dim], float64, >= 0.
    """
    features = np.asarray(x, dtype=np.float64)
    if features.ndim != 2 or features.shape[0] == 0:
        raise ValueError(f"x must be [n, dim] with n > 0, got {features.shape}")
    predicted = np.asarray(regressor.predict(features), dtype=np.float64).reshape(features.shape[0], -1)
    return np.clip(predicted, 0.0, None).mean(axis=0)
