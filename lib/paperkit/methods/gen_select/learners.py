"""Online model-selection learners of Hu, Leung & Farnia (ICML 2025): PAK-UCB (Algorithm 1, per-arm
kernel ridge with UCB), RFF-UCB (Algorithm 2, random Fourier features), and the baselines of Section 6
(LinUCB and KernelUCB with weights shared over [context, arm one-hot], a hybrid shared + per-arm
linear model, Greedy, Random, the one-arm Oracle in hindsight; Naive-KRR is PAK-UCB with η = 0).

One interface: ``select(x) -> arm``, ``update(x, arm, score)``, ``add_arm()`` (a model that joins
mid-stream starts with empty statistics). An arm that has never been played is played before any
other, in random order, so the first G rounds are a round-robin in random order. Ties are broken
at random. Each learner owns its ``numpy.random.Generator``.

Deliberately *not* copied from the official code: its first kernel-inverse entry 1/k + α (here
1/(k + α)), counting an arm's first reward twice in RFF-UCB, and the unnormalised 2π-scaled cos/sin
features (here the cos/sin map is scaled so that φᵀφ' estimates the RBF kernel).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from paperkit.core.errors import UsageError
from paperkit.methods.gen_select.kernels import FourierFeatures, Kernel, rank_one_update

LEARNERS = ("pak-ucb", "rff-ucb", "lin-ucb", "kernel-ucb", "hybrid-ucb", "naive-krr", "greedy", "random", "oracle")
UCB_LEARNERS = ("pak-ucb", "rff-ucb", "lin-ucb", "kernel-ucb", "hybrid-ucb")


def eta_formula(learner: str, n_arms: int, horizon: int, delta: float) -> float:
    """The official code's exploration weight: sqrt(2·log(2GT/δ)) for the kernel learners (PAK-UCB,
    KernelUCB), sqrt(2·log(2G/δ)) for the fixed-dimension ones (RFF-UCB, LinUCB, hybrid); 0 otherwise."""
    if learner in ("pak-ucb", "kernel-ucb"):
        return math.sqrt(2.0 * math.log(2.0 * n_arms * horizon / delta))
    if learner in ("rff-ucb", "lin-ucb", "hybrid-ucb"):
        return math.sqrt(2.0 * math.log(2.0 * n_arms / delta))
    return 0.0


def argmax_random(values: np.ndarray, rng: np.random.Generator) -> int:
    """Index of the largest value; ties (within 1e-12 relative) broken uniformly at random."""
    best = np.max(values)
    ties = np.flatnonzero(values >= best - 1e-12 * max(1.0, abs(best)))
    return int(ties[0] if len(ties) == 1 else rng.choice(ties))


@dataclass(frozen=True)
class LearnerSettings:
    """The learners' hyper-parameters: one source of their defaults for gen-select and gen-select-online."""

    kernel: str = "rbf"
    bandwidth: float = 2.0
    gamma: float = 1.0
    poly_degree: int = 3
    alpha: float = 1.0
    eta: str | float = "auto"
    delta: float = 0.05
    rff_dim: int = 200
    rff_variant: str = "cos"


class Learner(ABC):
    """Base class: arm bookkeeping and the random round-robin over unplayed arms."""

    name = "learner"

    def __init__(self, n_arms: int, dim: int, rng: np.random.Generator) -> None:
        if n_arms < 1:
            raise UsageError("a learner needs at least one arm")
        self.n_arms, self.dim, self.rng = int(n_arms), int(dim), rng
        self.plays = [0] * self.n_arms

    def add_arm(self) -> int:
        """A new arm with empty statistics; returns its index."""
        self.plays.append(0)
        self.n_arms += 1
        self._extend()
        return self.n_arms - 1

    def _extend(self) -> None:  # noqa: B027 - a hook: learners with per-arm state grow it here
        return None

    def select(self, x: np.ndarray) -> int:
        unplayed = [g for g in range(self.n_arms) if self.plays[g] == 0]
        if unplayed:
            return int(unplayed[0] if len(unplayed) == 1 else self.rng.choice(unplayed))
        return argmax_random(self.scores(np.asarray(x, dtype=np.float64)), self.rng)

    @abstractmethod
    def scores(self, x: np.ndarray) -> np.ndarray:
        """The per-arm index that select maximises."""

    def update(self, x: np.ndarray, arm: int, score: float) -> None:
        if not 0 <= arm < self.n_arms:
            raise UsageError(f"arm {arm} does not exist (the learner has {self.n_arms} arms)")
        self.plays[arm] += 1
        self._learn(np.asarray(x, dtype=np.float64), int(arm), float(score))

    def _learn(self, x: np.ndarray, arm: int, score: float) -> None:  # noqa: B027 - a hook for stateful learners
        return None


# ----------------------------------------------------------------------------- kernel ridge state
class KernelRidge:
    """Kernel ridge regression on a growing data set with (K + αI)⁻¹ kept up to date.

    Each new point extends the inverse by one block (Schur-complement) step in O(n²):
    with A = (K + αI)⁻¹, b = k(X, x), u = A·b and s = k(x, x) + α − bᵀu,
    the new inverse is [[A + uuᵀ/s, −u/s], [−uᵀ/s, 1/s]]; the first entry is 1/(k(x, x) + α).
    ``update="resolve"`` instead inverts (K + αI) from scratch after every point (the O(n³) reference).
    μ(x) = k(X, x)ᵀ(K + αI)⁻¹v and σ(x) = α^(−1/2)·sqrt(k(x, x) − k(X, x)ᵀ(K + αI)⁻¹k(X, x)).
    """

    def __init__(self, kernel: Kernel, alpha: float, dim: int, *, update: str = "schur", capacity: int = 64):
        if not alpha > 0:
            raise UsageError(f"alpha = {alpha}; expected alpha > 0")
        if update not in ("schur", "resolve"):
            raise UsageError(f"unknown inverse update '{update}'")
        self.kernel, self.alpha, self.mode = kernel, float(alpha), update
        self.n = 0
        self._X = np.zeros((capacity, dim))
        self._sq = np.zeros(capacity)
        self._inv = np.zeros((capacity, capacity))
        self._v = np.zeros(capacity)
        self._w = np.zeros(capacity)  # (K + αI)⁻¹v
        self._last: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def X(self) -> np.ndarray:
        return self._X[: self.n]

    @property
    def v(self) -> np.ndarray:
        return self._v[: self.n]

    @property
    def inverse(self) -> np.ndarray:
        return self._inv[: self.n, : self.n]

    def _grow(self, dim: int | None = None) -> None:
        cap = max(2 * self._X.shape[0], 1)
        dim = self._X.shape[1] if dim is None else dim
        X = np.zeros((cap, dim))
        X[: self.n, : self._X.shape[1]] = self.X
        inv = np.zeros((cap, cap))
        inv[: self.n, : self.n] = self.inverse
        self._X, self._inv = X, inv
        for name in ("_sq", "_v", "_w"):
            old = getattr(self, name)
            new = np.zeros(cap)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)

    def widen(self, dim: int) -> None:
        """Pad stored inputs with zero columns (new coordinates that past points did not have)."""
        X = np.zeros((self._X.shape[0], dim))
        X[:, : self._X.shape[1]] = self._X
        self._X = X

    def kvec(self, Z: np.ndarray) -> np.ndarray:
        """k(X, z) for each row z of Z: n×m."""
        n = self.n
        dots = self.X @ Z.T
        if self.kernel.name == "rbf":
            sq = self._sq[:n, None] - 2.0 * dots + np.einsum("ij,ij->i", Z, Z)[None, :]
            return self.kernel.from_products(None, sq)
        return self.kernel.from_products(dots, None)

    def kdiag(self, Z: np.ndarray) -> np.ndarray:
        if self.kernel.name == "rbf":
            return np.ones(len(Z))
        return self.kernel.from_products(np.einsum("ij,ij->i", Z, Z), None)

    def predict(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(μ, σ) at each row of Z."""
        Z = np.atleast_2d(Z)
        prior = self.kdiag(Z)
        if self.n == 0:
            return np.zeros(len(Z)), np.sqrt(prior / self.alpha)
        B = self.kvec(Z)
        U = self.inverse @ B
        if len(Z) == 1:  # kept for append(): the pick's update needs the same k and (K + αI)⁻¹k
            self._last = (Z[0].copy(), B[:, 0], U[:, 0])
        mu = B.T @ self._w[: self.n]
        var = prior - np.einsum("ij,ij->j", B, U)
        return mu, np.sqrt(np.maximum(var, 0.0) / self.alpha)

    def append(self, z: np.ndarray, y: float) -> None:
        n = self.n
        if n == self._X.shape[0]:
            self._grow()
        self._X[n] = z
        self._sq[n] = z @ z
        self._v[n] = y
        c = float(self.kdiag(z[None, :])[0]) + self.alpha
        if self.mode == "resolve":
            self._last = None
            self.n = n + 1
            K = self.kernel.matrix(self.X) + self.alpha * np.eye(self.n)
            self._inv[: self.n, : self.n] = np.linalg.inv(K)
            self._w[: self.n] = self.inverse @ self.v
            return
        if n == 0:
            self._inv[0, 0] = 1.0 / c
            self._w[0] = y / c
            self.n = 1
            return
        last = self._last
        if last is not None and len(last[1]) == n and np.array_equal(last[0], z):
            b, u = last[1], last[2]
        else:
            B = self.kvec(z[None, :])  # the same products as predict(), so a replay is bit-identical
            b, u = B[:, 0], (self.inverse @ B)[:, 0]
        self._last = None
        s = c - b @ u
        rank_one_update(self._inv, u, 1.0 / s)
        self._inv[n, :n] = -u / s
        self._inv[:n, n] = -u / s
        self._inv[n, n] = 1.0 / s
        r = (y - b @ self._w[:n]) / s
        self._w[:n] -= u * r
        self._w[n] = r
        self.n = n + 1


class Ridge:
    """Linear ridge regression with A⁻¹ kept by Sherman–Morrison updates: A = αI + Σ φφᵀ,
    w = A⁻¹Σ s·φ; the width of φ may grow (new coordinates start at A⁻¹ = I/α)."""

    def __init__(self, dim: int, alpha: float) -> None:
        if not alpha > 0:
            raise UsageError(f"alpha = {alpha}; expected alpha > 0")
        self.alpha = float(alpha)
        self.inv = np.eye(dim) / self.alpha
        self.b = np.zeros(dim)
        self.w = np.zeros(dim)

    def widen(self, dim: int) -> None:
        old = len(self.b)
        inv = np.eye(dim) / self.alpha
        inv[:old, :old] = self.inv
        self.inv = inv
        self.b = np.concatenate([self.b, np.zeros(dim - old)])
        self.w = self.inv @ self.b

    def predict(self, Phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        Phi = np.atleast_2d(Phi)
        var = np.einsum("ij,ij->i", Phi @ self.inv, Phi)
        return Phi @ self.w, np.sqrt(np.maximum(var, 0.0))

    def append(self, phi: np.ndarray, y: float) -> None:
        u = self.inv @ phi
        denom = 1.0 + phi @ u
        self.w = self.w + u * ((y - phi @ self.w) / denom)  # Sherman–Morrison applied to A⁻¹b
        rank_one_update(self.inv, u, -1.0 / denom)
        self.b += y * phi


# --------------------------------------------------------------------------------------- learners
class PAKUCB(Learner):
    """PAK-UCB: one kernel ridge model per arm over the shared context; UCB_g = μ_g + η·σ_g."""

    name = "pak-ucb"

    def __init__(self, n_arms: int, dim: int, rng: np.random.Generator, *, kernel: Kernel, alpha: float = 1.0,
                 eta: float = 1.0, update: str = "schur") -> None:
        super().__init__(n_arms, dim, rng)
        self.kernel, self.alpha, self.eta, self.update_mode = kernel, alpha, float(eta), update
        self.models = [KernelRidge(kernel, alpha, dim, update=update) for _ in range(self.n_arms)]

    def _extend(self) -> None:
        self.models.append(KernelRidge(self.kernel, self.alpha, self.dim, update=self.update_mode))

    def scores(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(self.n_arms)
        for g, m in enumerate(self.models):
            mu, sd = m.predict(x[None, :])
            out[g] = mu[0] + self.eta * sd[0]
        return out

    def _learn(self, x: np.ndarray, arm: int, score: float) -> None:
        self.models[arm].append(x, score)


class RFFUCB(Learner):
    """RFF-UCB: per-arm ridge regression on D random Fourier features of the RBF kernel.

    Arm g keeps A_g⁻¹ (A_g = αI + Σ φφᵀ over its rounds, Sherman–Morrison updates) and w_g = A_g⁻¹Σ s·φ;
    UCB_g = φᵀw_g + η·sqrt(φᵀA_g⁻¹φ). All arms are scored with one stacked product (G×D×D).
    """

    name = "rff-ucb"

    def __init__(self, n_arms: int, dim: int, rng: np.random.Generator, *, bandwidth: float, n_features: int = 200,
                 alpha: float = 1.0, eta: float = 1.0, variant: str = "cos") -> None:
        super().__init__(n_arms, dim, rng)
        if not alpha > 0:
            raise UsageError(f"alpha = {alpha}; expected alpha > 0")
        self.features = FourierFeatures(dim, n_features, bandwidth, rng, variant)
        self.alpha, self.eta = float(alpha), float(eta)
        D = self.features.n_out
        self.inv = np.repeat((np.eye(D) / self.alpha)[None], self.n_arms, axis=0)
        self.b = np.zeros((self.n_arms, D))
        self.w = np.zeros((self.n_arms, D))
        self._last: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def _extend(self) -> None:
        D = self.features.n_out
        self.inv = np.concatenate([self.inv, (np.eye(D) / self.alpha)[None]])
        self.b = np.vstack([self.b, np.zeros(D)])
        self.w = np.vstack([self.w, np.zeros(D)])
        self._last = None

    def scores(self, x: np.ndarray) -> np.ndarray:
        phi = self.features(x)
        V = self.inv @ phi                       # G×D: A_g⁻¹φ
        self._last = (x.copy(), phi, V)
        return self.w @ phi + self.eta * np.sqrt(np.maximum(V @ phi, 0.0))

    def _learn(self, x: np.ndarray, arm: int, score: float) -> None:
        last = self._last
        if last is not None and np.array_equal(last[0], x):
            phi, u = last[1], last[2][arm]
        else:
            phi = self.features(x)
            u = (self.inv @ phi)[arm]  # as in scores(), so a replay is bit-identical
        self._last = None
        denom = 1.0 + phi @ u
        self.w[arm] += u * ((score - phi @ self.w[arm]) / denom)
        rank_one_update(self.inv[arm], u, -1.0 / denom)
        self.b[arm] += score * phi


class _SharedLinear(Learner):
    """A single ridge model over arm-dependent features φ_g(x); UCB = φᵀw + η·sqrt(φᵀA⁻¹φ)."""

    def __init__(self, n_arms: int, dim: int, rng: np.random.Generator, *, alpha: float = 1.0, eta: float = 1.0):
        super().__init__(n_arms, dim, rng)
        self.eta = float(eta)
        self.model = Ridge(self.width(self.n_arms), alpha)

    @abstractmethod
    def width(self, n_arms: int) -> int:
        """Length of φ_g(x) with ``n_arms`` arms."""

    @abstractmethod
    def features(self, x: np.ndarray, arm: int) -> np.ndarray:
        """φ_g(x): the arm-dependent features of context ``x``."""

    def _extend(self) -> None:
        self._reorder_for_new_arm()
        self.model.widen(self.width(self.n_arms))

    def _reorder_for_new_arm(self) -> None:
        pass

    def scores(self, x: np.ndarray) -> np.ndarray:
        Phi = np.stack([self.features(x, g) for g in range(self.n_arms)])
        mu, sd = self.model.predict(Phi)
        return mu + self.eta * sd

    def _learn(self, x: np.ndarray, arm: int, score: float) -> None:
        self.model.append(self.features(x, arm), score)


class LinUCB(_SharedLinear):
    """LinUCB with one weight vector over [context, arm one-hot] (weights shared across arms)."""

    name = "lin-ucb"

    def width(self, n_arms: int) -> int:
        return self.dim + n_arms

    def features(self, x: np.ndarray, arm: int) -> np.ndarray:
        phi = np.zeros(self.dim + self.n_arms)
        phi[: self.dim] = x
        phi[self.dim + arm] = 1.0
        return phi


class HybridUCB(_SharedLinear):
    """Hybrid shared + per-arm linear model: φ_g(x) = [x (shared weights), then per arm a block
    [x, 1] that is non-zero only for arm g] — LinUCB-hybrid's model solved as one ridge regression."""

    name = "hybrid-ucb"

    def width(self, n_arms: int) -> int:
        return self.dim + n_arms * (self.dim + 1)

    def features(self, x: np.ndarray, arm: int) -> np.ndarray:
        phi = np.zeros(self.width(self.n_arms))
        phi[: self.dim] = x
        start = self.dim + arm * (self.dim + 1)
        phi[start: start + self.dim] = x
        phi[start + self.dim] = 1.0
        return phi


class KernelUCB(Learner):
    """KernelUCB with one kernel ridge model over z = [context, arm one-hot] (shared across arms)."""

    name = "kernel-ucb"

    def __init__(self, n_arms: int, dim: int, rng: np.random.Generator, *, kernel: Kernel, alpha: float = 1.0,
                 eta: float = 1.0) -> None:
        super().__init__(n_arms, dim, rng)
        self.eta = float(eta)
        self.model = KernelRidge(kernel, alpha, dim + n_arms)

    def _extend(self) -> None:
        self.model.widen(self.dim + self.n_arms)  # past points have 0 in the new arm's coordinate

    def _z(self, x: np.ndarray) -> np.ndarray:
        Z = np.zeros((self.n_arms, self.dim + self.n_arms))
        Z[:, : self.dim] = x
        Z[np.arange(self.n_arms), self.dim + np.arange(self.n_arms)] = 1.0
        return Z

    def scores(self, x: np.ndarray) -> np.ndarray:
        mu, sd = self.model.predict(self._z(x))
        return mu + self.eta * sd

    def _learn(self, x: np.ndarray, arm: int, score: float) -> None:
        self.model.append(self._z(x)[arm], score)


class Greedy(Learner):
    """Per-arm empirical mean score, no context, no exploration bonus."""

    name = "greedy"

    def __init__(self, n_arms: int, dim: int, rng: np.random.Generator) -> None:
        super().__init__(n_arms, dim, rng)
        self.sums = [0.0] * self.n_arms

    def _extend(self) -> None:
        self.sums.append(0.0)

    def scores(self, x: np.ndarray) -> np.ndarray:
        return np.array(self.sums) / np.array(self.plays)

    def _learn(self, x: np.ndarray, arm: int, score: float) -> None:
        self.sums[arm] += score


class RandomChoice(Learner):
    """A uniformly random available model each round."""

    name = "random"

    def select(self, x: np.ndarray) -> int:
        return int(self.rng.integers(self.n_arms))

    def scores(self, x: np.ndarray) -> np.ndarray:
        return np.zeros(self.n_arms)  # every model is equally good to it


class Oracle(Learner):
    """The one-arm oracle in hindsight: always the model with the best mean score over the instance."""

    name = "oracle"

    def __init__(self, n_arms: int, dim: int, rng: np.random.Generator, *, best_arm: int) -> None:
        super().__init__(n_arms, dim, rng)
        self.best_arm = int(best_arm)

    def select(self, x: np.ndarray) -> int:
        return self.best_arm

    def scores(self, x: np.ndarray) -> np.ndarray:
        return (np.arange(self.n_arms) == self.best_arm).astype(np.float64)


def make_learner(name: str, n_arms: int, dim: int, rng: np.random.Generator, *, kernel: Kernel, alpha: float,
                 eta: float, rff_dim: int = 200, rff_variant: str = "cos", best_arm: int = 0,
                 update: str = "schur") -> Learner:
    """The learner ``name`` (one of :data:`LEARNERS`) with the given hyper-parameters."""
    builders: dict[str, Callable[[], Learner]] = {
        "pak-ucb": lambda: PAKUCB(n_arms, dim, rng, kernel=kernel, alpha=alpha, eta=eta, update=update),
        "naive-krr": lambda: PAKUCB(n_arms, dim, rng, kernel=kernel, alpha=alpha, eta=0.0, update=update),
        "rff-ucb": lambda: RFFUCB(n_arms, dim, rng, bandwidth=kernel.bandwidth, n_features=rff_dim, alpha=alpha,
                                  eta=eta, variant=rff_variant),
        "lin-ucb": lambda: LinUCB(n_arms, dim, rng, alpha=alpha, eta=eta),
        "hybrid-ucb": lambda: HybridUCB(n_arms, dim, rng, alpha=alpha, eta=eta),
        "kernel-ucb": lambda: KernelUCB(n_arms, dim, rng, kernel=kernel, alpha=alpha, eta=eta),
        "greedy": lambda: Greedy(n_arms, dim, rng),
        "random": lambda: RandomChoice(n_arms, dim, rng),
        "oracle": lambda: Oracle(n_arms, dim, rng, best_arm=best_arm),
    }
    if name not in builders:
        raise UsageError(f"unknown learner '{name}'; expected one of {', '.join(LEARNERS)}")
    learner = builders[name]()
    learner.name = name
    return learner
