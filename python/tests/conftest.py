"""Shared fixtures: the source tree (for the example work dir), a printed random seed."""
import os
import pathlib
import random

import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def rng_seed():
    """A fresh seed per run (IOTX_PY_SEED=<n> to repeat one), printed so a failure reproduces."""
    seed = int(os.environ.get("IOTX_PY_SEED", random.SystemRandom().randrange(2**32)))
    print(f"IOTX_PY_SEED={seed}")
    return seed
