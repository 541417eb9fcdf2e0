"""The README's Python examples run as written, against the test etcd."""

import os
import re

import pytest

from conftest import run_script

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
BLOCKS = re.findall(r"```python\n(.*?)```", open(README, encoding="utf-8").read(), re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(etcd, index):
    r = run_script(BLOCKS[index], env_extra={"ETCDLOCK_ENDPOINTS": etcd.endpoints})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stderr == ""
    assert etcd.keys("readme/") == []  # the examples clean up after themselves
