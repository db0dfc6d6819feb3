"""Settings for the whole test run."""

from __future__ import annotations

import os

from hypothesis import settings

# CI (CI=true) runs the property tests derandomized: a fixed sequence of examples, so a
# submission's verdict does not depend on which random cases one run happened to draw.
# Local runs stay random and keep finding new cases (and remember them in .hypothesis/).
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
