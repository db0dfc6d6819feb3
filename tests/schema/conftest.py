"""Set-up for the JSON Schema tests: the JSON-Schema-Test-Suite is fetched on first use.

See ``_schema_suite.py``: the suite comes from the ``jsonschema`` sdist on PyPI (checked
by SHA-256) and is cached in the pytest cache, never vendored into the repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _schema_suite import load_tests, suite_root


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "suite_test" in metafunc.fixturenames:
        tests = load_tests(suite_root(metafunc.config))
        metafunc.parametrize(
            "suite_test",
            tests,
            ids=[f"{t.draft}/{t.file}:{t.case_index}:{t.test}" for t in tests],
        )


@pytest.fixture(scope="session")
def suite_dir(pytestconfig: pytest.Config) -> Path:
    return suite_root(pytestconfig)
