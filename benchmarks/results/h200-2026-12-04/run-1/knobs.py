"""Run `masks` with CuPy's module knobs set from MASKS_CUPY_KNOBS ("NAME=value,..."), so that
each build of an A/B runs in its own process."""

import os
import sys

from masks.__main__ import main
from masks.backends import cupy as cupy_backend

for item in filter(None, os.environ.get("MASKS_CUPY_KNOBS", "").split(",")):
    name, value = item.split("=")
    assert hasattr(cupy_backend, name), name
    setattr(cupy_backend, name, int(value))
    print(f"knob {name} = {value}", file=sys.stderr)
sys.argv = ["masks", *sys.argv[1:]]
sys.exit(main())
