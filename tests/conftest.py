"""Shared fixtures: the device under test and the backend x variant parameter list.

Every registered backend appears in the parameter list; those that cannot run here are skipped
with their reason, so the pytest summary (-ra) says why each one did not run.
"""

from __future__ import annotations

import pytest
import torch

from masks import registry

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def backend_params() -> list:
    params = []
    for name, spec in registry.BACKENDS.items():
        failure = registry.probe_failure(spec, DEVICE)
        if failure is not None:
            params.append(pytest.param(name, id=name, marks=pytest.mark.skip(reason=str(failure))))
            continue
        params += [pytest.param(f"{name}:{v}", id=f"{name}:{v}") for v in registry.variants(name)]
    return params


@pytest.fixture(scope="session")
def device() -> torch.device:
    return DEVICE
