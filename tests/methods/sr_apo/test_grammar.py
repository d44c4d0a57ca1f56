"""Enumeration of the paper's grammar: structure and expression counts, folding, string forms."""

import re

import numpy as np
import pytest

from paperkit.core.errors import UsageError
from paperkit.methods.sr_apo.grammar import (
    _sorted_distinct,
    assign_fold_reference,
    decode_kexpression,
    enumerate_expressions,
    parse_official,
    raw_count,
    structure_string,
    structures,
    to_infix,
    to_official,
)


def test_structure_counts():
    assert len(structures(3)) == 151
    assert len(structures(4)) == 976


def test_kexpression_decoding_is_breadth_first_and_orders_symmetric_children():
    # Sub, Add in the head: Sub(Add(R, R), R) — breadth first: Sub's children are Add and R.
    assert structure_string(decode_kexpression(("Sub", "Add", "R", "R", "R", "R", "R"))) == "Sub(Add(R,R),R)"
    # Add's children are sorted by symbol: 'Mul' < 'R'.
    assert structure_string(decode_kexpression(("Add", "R", "Mul", "R", "R", "R", "R"))) == "Add(Mul(R,R),R)"
    # Sub is not symmetric: order kept.
    assert structure_string(decode_kexpression(("Sub", "R", "Mul", "R", "R", "R", "R"))) == "Sub(R,Mul(R,R))"


def test_expression_counts_match_the_paper():
    e = enumerate_expressions(3, 2)
    assert len(e) == 7803
    assert e.counts_by_length() == {1: 3, 3: 40, 5: 1040, 7: 6720}
    assert len(enumerate_expressions(4, 1)) == 15122


@pytest.mark.parametrize("head,F", [(2, 3), (3, 2)])
def test_enumeration_equals_the_string_reference(head, F):
    """The jitted assign/fold/encode equals folding official strings with the paper's regex."""
    ref = set()
    for p in structures(head):
        ref.update(assign_fold_reference(p, F))
    got = [to_official(row) for row in enumerate_expressions(head, F).tokens]
    assert len(got) == len(set(got))
    assert set(got) == ref


def test_rows_are_sorted_folded_and_counted():
    e = enumerate_expressions(3, 2)
    assert np.all(np.diff(e.length.astype(int)) >= 0)
    fold = re.compile(r"\w{3}\(x\[\d+\],x\[\d+\]\)")
    for row, L, k in zip(e.tokens[::37], e.length[::37], e.n_const[::37], strict=True):
        s = to_official(row)
        assert not fold.search(s)  # no operator with two constant children survives
        assert s.count("[") + s.count("(") == L  # the official length rule
        assert s.count("x[") == k
        assert [f"x[{i}]" for i in range(k)] == re.findall(r"x\[\d+\]", s)  # numbered left to right


def test_official_round_trip_and_infix():
    e = enumerate_expressions(2, 2)
    for row in e.tokens:
        s = to_official(row)
        assert to_official(parse_official(s)) == s
    assert to_infix(parse_official("Sub(Mul(xdata[0],x[0]),Pow(x[1],xdata[1]))"), ["a", "b"]) == "(a * c0) - (|c1|^b)"
    with pytest.raises(ValueError):
        parse_official("Mul(x[1],xdata[0])")  # constants must be numbered from 0


def test_sorted_distinct_equals_numpy_unique():
    codes = np.random.default_rng(1).integers(-50, 50, 2_000).astype(np.int64)
    np.testing.assert_array_equal(_sorted_distinct(codes.copy()), np.unique(codes))
    assert _sorted_distinct(np.empty(0, dtype=np.int64)).size == 0


def test_shards_partition_the_expressions():
    e = enumerate_expressions(2, 2)
    parts = [e.shard(k, 3) for k in (1, 2, 3)]
    assert sorted(np.concatenate(parts).tolist()) == list(range(len(e)))


def test_limits_and_bad_heads():
    assert raw_count(3, 2) >= 7803
    # says how many it would be (upper bound) and names the option; a bad option, so UsageError (exit 2)
    with pytest.raises(UsageError, match="177,708.*raise --max-expressions"):
        enumerate_expressions(4, 2, limit=1000)
    with pytest.raises(UsageError):
        enumerate_expressions(0, 2)
    with pytest.raises(UsageError):
        structures(9)
