"""Every registered claim resolves to built commands with options they accept (parsed, not run)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from paperkit.reproduce import registry
from paperkit_cli.main import load_command

CLAIMS = registry.load()


def test_registry_loads_and_ids_are_unique():
    assert CLAIMS
    assert len({c.id for c in CLAIMS}) == len(CLAIMS)
    for c in CLAIMS:
        assert c.claim and c.where and c.paper_value and callable(c.measure)
        assert hasattr(c.criterion, "verdict") and c.seeds


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
@pytest.mark.parametrize("mode", ["quick", "full"])
def test_claim_argv_parses_against_the_real_command(claim, mode, tmp_path):
    assert registry.available(claim) is None, f"{claim.id}: {registry.available(claim)}"
    steps, seeds = claim.plan(mode)
    for step in steps:
        argv = registry.expand(step, dir=tmp_path, seed=seeds[0])
        if argv[0].endswith(".py"):
            assert Path(argv[0]).is_file(), argv[0]
            continue
        cmd = load_command(argv[0])
        # make_context parses and converts every option (choices, ranges, lists) without running it;
        # config files are read, so a bad key in an example config fails here too.
        ctx = cmd.make_context(argv[0], list(argv[1:]), resilient_parsing=False)
        assert isinstance(ctx, click.Context)
        for a in argv:
            if "/examples/" in a:
                assert Path(a).is_file(), f"{claim.id}: {a} is not a file in examples/"


def test_unbuilt_command_makes_a_claim_not_run():
    c = CLAIMS[0]
    assert registry.available(c, is_command=lambda name: False).startswith("tool not built")
