"""The ADMM solver of TMvML (Section 3.3, reconstructed): min over W of

    (1/n) Σᵥ ‖XᵥWᵥ − Y‖²_F + γ Σᵥ ‖Wᵥ‖²_F + λ·Penalty(rotate(W))

split as rotate(W) = G with multiplier Λ and penalty μ:

a. Wᵥ ← ((2/n)XᵥᵀXᵥ + (2γ + μ)I)⁻¹((2/n)XᵥᵀY + μGᵥ − Λᵥ)            (closed form, per view)
b. G  ← prox_{(λ/μ)·Penalty}(rotate(W) + Λ/μ)                        (t-SVD shrinkage)
c. Λ  ← Λ + μ(rotate(W) − G);  μ ← min(ρμ, μ_max)
d. stop when max|rotate(W) − G| < tol, or after max_iter iterations.

Start (reconstructed, option ``init``): ``ridge`` (default) sets W = G to the penalty-free per-view
ridge solution and Λ = 0; ``zeros`` starts from W = G = Λ = 0. With μ growing geometrically the
splitting stops once rotate(W) = G, not necessarily at a stationary point of the non-convex objective,
so the start and μ₀ matter. The first G-step thresholds at λ/μ₀ (1000λ with the defaults) and keeps
only the largest Fourier singular values of the start (measured with the defaults: 6 of 18 on
digits-mvml, 1 of 24 on the synthetic set); after that the start acts through the W-step's pull μG.
On digits-mvml the ridge start still ends at a different point from the zeros start (training AP 0.987
vs 0.977); on the synthetic set both reach the same point. A larger μ₀ keeps the ridge start but is
worse on the objective: near the ridge solution σ ≫ δ, the Laplace penalty is flat there, and ADMM
stops next to ridge (λ = 1, μ₀ = 0.1: objective 3.77 vs 2.25 at μ₀ = 1e-3 on digits-mvml, 4.64 vs 2.62
on synthetic). The small μ₀ works as a continuation from strong to weak thresholding, so it stays.

The data enter only through per-view Gram eigenpairs, XᵥᵀY and ‖Y‖² (:class:`Problem`), so an
iteration costs O(V m² q + V m q²) whatever the number of samples. :func:`admm_numba` runs the numba
kernel in chunks (for progress bars and checkpoints); :func:`admm_reference` is the plain NumPy
version the tests compare it with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from paperkit.methods.mvml import tensor
from paperkit.methods.mvml.kernels import PENALTY_CODES, PROX_CODES, TRACE_COLUMNS


@dataclass
class Problem:
    """Sufficient statistics of the data term: Gram eigenpairs per view, XᵥᵀY, ‖Y‖² and n."""

    U: np.ndarray  # (V, m, m) eigenvectors of XᵥᵀXᵥ
    s: np.ndarray  # (V, m) eigenvalues (clipped at 0)
    XtY: np.ndarray  # (V, m, q)
    yty: float
    n: int

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.XtY.shape

    @classmethod
    def from_views(cls, views: list[np.ndarray], Y: np.ndarray) -> Problem:
        """From mapped views (each n × m, same m) and targets Y (n × q)."""
        Y = np.asarray(Y, dtype=np.float64)
        Us, ss, xty = [], [], []
        for X in views:
            X = np.asarray(X, dtype=np.float64)
            vals, vecs = np.linalg.eigh(X.T @ X)
            Us.append(vecs)
            ss.append(np.maximum(vals, 0.0))
            xty.append(X.T @ Y)
        return cls(np.ascontiguousarray(np.stack(Us)), np.ascontiguousarray(np.stack(ss)),
                   np.ascontiguousarray(np.stack(xty)), float(np.sum(Y * Y)), int(Y.shape[0]))


@dataclass
class Settings:
    penalty: str = "ltr"
    lam: float = 1.0
    delta: float = 10.0
    gamma: float = 1e-5
    prox: str = "exact"
    reweight_passes: int = 2
    mu0: float = 1e-3
    rho: float = 1.2
    mu_max: float = 1e8
    max_iter: int = 200
    tol: float = 1e-6
    init: str = "ridge"


@dataclass
class State:
    """Everything needed to continue a run: the iterates, μ, the iteration count and the trace so far."""

    W: np.ndarray
    G: np.ndarray
    Lam: np.ndarray
    mu: float
    iteration: int = 0
    converged: bool = False
    trace: np.ndarray = field(default_factory=lambda: np.zeros((0, len(TRACE_COLUMNS))))

    @classmethod
    def initial(cls, shape: tuple[int, int, int], settings: Settings) -> State:
        z = np.zeros(shape)
        return cls(z.copy(), z.copy(), z.copy(), float(settings.mu0),
                   trace=np.zeros((settings.max_iter, len(TRACE_COLUMNS))))

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"W": self.W, "G": self.G, "Lam": self.Lam, "mu": np.array(self.mu),
                "iteration": np.array(self.iteration), "converged": np.array(self.converged), "trace": self.trace}

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray]) -> State:
        return cls(a["W"].copy(), a["G"].copy(), a["Lam"].copy(), float(a["mu"]), int(a["iteration"]),
                   bool(a["converged"]), a["trace"].copy())

    def trace_table(self) -> dict[str, np.ndarray]:
        rows = self.trace[: self.iteration]
        out = {"iteration": np.arange(1, self.iteration + 1)}
        out.update({name: rows[:, j] for j, name in enumerate(TRACE_COLUMNS)})
        return out


def ridge_closed_form(problem: Problem, gamma: float) -> np.ndarray:
    """Per-view ridge: Wᵥ = ((2/n)XᵥᵀXᵥ + 2γI)⁺(2/n)XᵥᵀY (the penalty='none' solution)."""
    sc = 2.0 / problem.n
    d = sc * problem.s + 2.0 * gamma
    inv = np.where(d > 1e-12 * max(float(d.max()), 1e-300), 1.0 / np.where(d > 0, d, 1.0), 0.0)
    z = np.matmul(np.transpose(problem.U, (0, 2, 1)), sc * problem.XtY) * inv[:, :, None]
    return np.matmul(problem.U, z)


def objective(problem: Problem, W: np.ndarray, settings: Settings) -> dict[str, float]:
    """The objective and its parts at W (penalty by SVD of the Fourier slices)."""
    zw = np.matmul(np.transpose(problem.U, (0, 2, 1)), W)
    quad = float(np.sum(problem.s[:, :, None] * zw**2))
    loss = (quad - 2.0 * float(np.sum(W * problem.XtY)) + problem.shape[0] * problem.yty) / problem.n
    pen = tensor.penalty_value(tensor.rotate(W), settings.penalty, settings.delta)
    ridge = float(np.sum(W * W))
    return {"objective": loss + settings.gamma * ridge + settings.lam * pen, "loss": loss, "penalty": pen}


def admm_numba(problem: Problem, settings: Settings, state: State | None = None, *, chunk: int = 10,
               callback: Callable[[State], None] | None = None) -> State:
    """Run (or continue) ADMM with the numba kernel, ``chunk`` iterations per call; ``callback`` after each."""
    from paperkit.methods.mvml import kernels

    shape = problem.shape
    state = state or State.initial(shape, settings)
    if state.trace.shape[0] < settings.max_iter:
        state.trace = np.vstack([state.trace, np.zeros((settings.max_iter - state.trace.shape[0], len(TRACE_COLUMNS)))])
    cf, sf, ci, si = kernels.dft_tables(shape[2])
    mult = kernels.slice_multiplicity(shape[2])
    Ut = np.ascontiguousarray(np.transpose(problem.U, (0, 2, 1)))
    while not state.converged and state.iteration < settings.max_iter:
        stop = min(state.iteration + chunk, settings.max_iter)
        it, mu, conv = kernels.admm_iterations(
            problem.U, Ut, problem.s, problem.XtY, problem.yty, float(problem.n), state.W, state.G, state.Lam,
            state.mu, settings.gamma, settings.lam, settings.delta, PENALTY_CODES[settings.penalty],
            PROX_CODES[settings.prox], int(settings.reweight_passes), settings.rho, settings.mu_max, settings.tol,
            state.iteration, stop, cf, sf, ci, si, mult, state.trace)
        state.iteration, state.mu, state.converged = int(it), float(mu), bool(conv)
        if callback is not None:
            callback(state)
    return state


def admm_reference(problem: Problem, settings: Settings, state: State | None = None,
                   callback: Callable[[State], None] | None = None) -> State:
    """The same iterations in plain NumPy (np.fft + batched SVD + explicit rotation)."""
    V, m, q = problem.shape
    state = state or State.initial(problem.shape, settings)
    if state.trace.shape[0] < settings.max_iter:
        state.trace = np.vstack([state.trace, np.zeros((settings.max_iter - state.trace.shape[0], len(TRACE_COLUMNS)))])
    sc = 2.0 / problem.n
    Ut = np.transpose(problem.U, (0, 2, 1))
    W, G, Lam, mu = state.W, state.G, state.Lam, state.mu
    while not state.converged and state.iteration < settings.max_iter:
        W_old = W.copy()
        rhs = sc * problem.XtY + mu * G - Lam
        z = np.matmul(Ut, rhs) / (sc * problem.s + 2 * settings.gamma + mu)[:, :, None]
        W[...] = np.matmul(problem.U, z)
        T = tensor.rotate(W) + tensor.rotate(Lam) / mu
        G_rot, kept = tensor.prox(T, settings.lam / mu, settings.penalty, settings.delta, settings.prox,
                                  settings.reweight_passes)
        G[...] = tensor.unrotate(G_rot)
        diff = W - G
        Lam += mu * diff
        primal = float(np.max(np.abs(diff)))
        parts = objective(problem, G, settings)
        state.trace[state.iteration] = [parts["objective"], parts["loss"], parts["penalty"], primal,
                                        float(np.max(np.abs(W - W_old))), mu]
        mu = min(settings.rho * mu, settings.mu_max)
        state.iteration += 1
        state.mu = mu
        if primal < settings.tol:
            state.converged = True
        if callback is not None:
            callback(state)
    return state


def solve(problem: Problem, settings: Settings, *, solver: str = "numba", state: State | None = None,
          callback: Callable[[State], None] | None = None, blas_threads: int | None = 1) -> State:
    """Fit W. penalty='none' is the closed-form per-view ridge (no iterations).

    BLAS is limited to ``blas_threads`` threads while solving (None: leave it alone): every product in
    an iteration is small (m × m by m × q), and a multi-threaded BLAS on a busy machine made them
    up to 100× slower in our measurements.
    """
    if blas_threads is None:
        return _solve(problem, settings, solver, state, callback)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=int(blas_threads), user_api="blas"):
        return _solve(problem, settings, solver, state, callback)


def _solve(problem: Problem, settings: Settings, solver: str, state: State | None,
           callback: Callable[[State], None] | None) -> State:
    if settings.penalty == "none":
        W = ridge_closed_form(problem, settings.gamma)
        st = State(W, W.copy(), np.zeros_like(W), settings.mu0, 0, True, np.zeros((0, len(TRACE_COLUMNS))))
        return st
    if state is None and settings.init == "ridge":
        state = State.initial(problem.shape, settings)
        state.W[...] = ridge_closed_form(problem, settings.gamma)
        state.G[...] = state.W
    if solver == "numba":
        return admm_numba(problem, settings, state, callback=callback)
    if solver == "numpy":
        return admm_reference(problem, settings, state, callback=callback)
    raise ValueError(f"unknown solver {solver!r}")
