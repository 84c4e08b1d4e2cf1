"""A pytest plugin for this repository's own runs of the chapter's public tests
(:func:`support.helpers.public_tests_run`): each public test's time limit becomes
``$PUBLIC_TESTS_TIMEOUT_S`` seconds instead of the 20 s exercises/tests/conftest.py
gives a student. A mutant whose loop never ends fails its public test either way;
with the shorter limit the suite stops waiting for it sooner.

Loaded with ``-p tests.support.public_timeout``: the child runs from the repository
root, where ``tests`` is a namespace package."""
import os

import pytest


@pytest.hookimpl(trylast=True)  # after the conftest has marked its tests
def pytest_collection_modifyitems(items):
    seconds = float(os.environ["PUBLIC_TESTS_TIMEOUT_S"])
    for item in items:
        if item.get_closest_marker("timeout") is not None:
            # pytest-timeout reads the closest mark: put this one first
            item.add_marker(pytest.mark.timeout(seconds), append=False)
