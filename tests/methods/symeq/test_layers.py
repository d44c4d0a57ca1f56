# ruff: noqa: E741  (k and l are the paper's input and output tensor orders)
"""Layers: equivariance in fp64, symmetric outputs, orbit = diagram under the change of basis, Maron's
Bell-number layers, reuse at other n."""

import warnings

import numpy as np
import pytest
import torch

from paperkit.methods.symeq.layers import (
    EquivariantNet,
    MaronLinear,
    SymEquivariantLinear,
    diagram_to_orbit_weights,
    integer_partitions,
    parameter_count,
)
from paperkit.methods.symeq.symtensor import act, asymmetry, symmetrize
from paperkit.methods.symeq.train import permute_batch


def sym_input(n, k, channels=3, batch=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return symmetrize(torch.randn(batch, channels, *(n,) * k, generator=g, dtype=torch.float64), k)


def check_equivariant(f, x, k, l, n, atol=1e-5):
    rng = np.random.default_rng(0)
    y = f(x)
    for _ in range(3):
        perm = rng.permutation(n)
        assert (f(act(perm, x, k)) - act(perm, y, l)).norm() < atol
    return y


@pytest.mark.parametrize("basis, execution", [("diagram", "einsum"), ("diagram", "gather"), ("orbit", "gather")])
@pytest.mark.parametrize("k, l", [(1, 1), (2, 2), (3, 1), (2, 0), (3, 0), (1, 3), (3, 3)])
def test_layer_equivariant_and_symmetric(basis, execution, k, l):
    torch.manual_seed(0)
    n = 6
    layer = SymEquivariantLinear(k, l, 3, 2, basis, execution=execution).double()
    with torch.no_grad():
        layer.bias.weight.normal_()
    y = check_equivariant(layer, sym_input(n, k), k, l, n)
    assert y.shape == (4, 2) + (n,) * l
    assert asymmetry(y.detach().numpy(), l) < 1e-12


@pytest.mark.parametrize("k, l, n", [(2, 2, 6), (3, 1, 4), (1, 2, 3), (3, 2, 5), (3, 0, 7)])
def test_orbit_and_diagram_same_function_under_change_of_basis(k, l, n):
    torch.manual_seed(1)
    d = SymEquivariantLinear(k, l, 3, 2, "diagram", execution="einsum").double()
    o = SymEquivariantLinear(k, l, 3, 2, "orbit").double()
    with torch.no_grad():
        o.weight.copy_(diagram_to_orbit_weights(d, n))
        d.bias.weight.normal_()
        o.bias.weight.copy_(d.bias.weight)
    x = sym_input(n, k)
    assert (d(x) - o(x)).abs().max() < 1e-10
    d.execution = "gather"  # the diagram weights run through the change of basis and the int32 gathers
    assert (d(x) - o(x)).abs().max() < 1e-10


def test_diagram_gather_matches_einsum_below_k_plus_l():
    torch.manual_seed(2)
    d = SymEquivariantLinear(2, 2, 2, 2, "diagram", execution="einsum").double()
    x = sym_input(2, 2, channels=2)  # n = 2 < k + l: the diagram maps are dependent, the orbit basis has 5 elements
    y = d(x)
    d.execution = "gather"
    assert (d(x) - y).abs().max() < 1e-12


def test_maron_basis_sizes_are_bell_numbers_and_layers_equivariant():
    for (k, l), bell in {(2, 2): 15, (1, 1): 2, (2, 1): 5, (3, 1): 15, (2, 0): 2}.items():
        assert MaronLinear(k, l, 1, 1).weight.shape[0] == bell
    torch.manual_seed(0)
    n = 4
    layer = MaronLinear(2, 2, 3, 2).double()
    with torch.no_grad():
        layer.bias.weight.normal_()
    x = torch.randn(4, 3, n, n, dtype=torch.float64)  # not symmetric: Maron's layers do not need it
    check_equivariant(layer, x, 2, 2, n)
    assert parameter_count(MaronLinear(2, 2, 1, 1)) == 15 + 2 > parameter_count(SymEquivariantLinear(2, 2, 1, 1)) == 9 + 2


def test_invariant_biases_one_per_integer_partition():
    assert [len(integer_partitions(l)) for l in range(5)] == [1, 1, 2, 3, 5]
    layer = SymEquivariantLinear(2, 2, 1, 1)
    with torch.no_grad():
        layer.weight.zero_()
        layer.bias.weight.copy_(torch.tensor([[2.0, 5.0]]))
    y = layer(torch.zeros(1, 1, 3, 3))[0, 0]
    assert torch.equal(y, torch.tensor([[2.0, 5, 5], [5, 2, 5], [5, 5, 2]]))


def test_networks_run_at_any_n_and_orbit_drops_missing_labels_with_warning():
    torch.manual_seed(0)
    for kind in ("diagram", "orbit", "maron"):
        net = EquivariantNet(2, 1, 4, 2, kind).double()
        for n in (3, 7):
            check_equivariant(lambda x, net=net: net(x[:, 0]), sym_input(n, 2, channels=1), 2, 1, n)
    net = EquivariantNet(2, 0, 4, 1, "diagram").double()
    assert net(sym_input(5, 2, channels=1)[:, 0]).shape == (4,)
    layer = SymEquivariantLinear(2, 2, 1, 1, "orbit")
    with pytest.warns(UserWarning, match="1 of 9 labels"):
        layer(torch.randn(1, 1, 3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layer(torch.randn(1, 1, 3, 3))  # warned once per n


def test_permute_batch_applies_one_permutation_per_sample():
    x = torch.randn(3, 4, 4)
    perms = [np.random.default_rng(i).permutation(4) for i in range(3)]
    inv = torch.as_tensor(np.stack([np.argsort(p) for p in perms]))
    got = permute_batch(x, 2, inv)
    for b, p in enumerate(perms):
        assert torch.equal(got[b], act(p, x[b], 2))
