"""The tiny digits prior of tests/ldsmc_helpers.py as session fixtures."""

import pytest

from tests.ldsmc_helpers import tiny_model_dir


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    return tiny_model_dir(tmp_path_factory)


@pytest.fixture(scope="session")
def tiny_prior(tiny_model):
    from paperkit.methods.ldsmc.train import load_prior

    return load_prior(tiny_model)
