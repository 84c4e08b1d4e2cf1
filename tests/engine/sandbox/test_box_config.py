"""A box's configuration (autograder/sandbox/confine/box_config.py): typed and
frozen, built once, varied with dataclasses.replace, and read back from the
plain data the zygote receives exactly as it was written -- or refused."""
import dataclasses
import json

import pytest

from autograder.sandbox.confine.box_config import BoxConfig, BoxLimits, SealRequest, for_module

LIMITS = BoxLimits(memory_bytes=3 * 2**30, cpu_seconds=300, max_processes=64, max_file_bytes=16 * 2**20,
                   scratch_bytes=64 * 2**20, max_open_files=64)


def _config(**changes):
    spec = {"submission": "/area/box/submission", "scratch": "/area/box/scratch", "log": "/area/m.log",
            "uid": 1934567890, "gid": 1934567890, "hide": ["/repo/autograder"], "forbidden": ["/repo"]}
    return dataclasses.replace(for_module(spec, "student_module", LIMITS), **changes)


def test_it_crosses_to_the_zygote_and_back_unchanged():
    config = _config(cpus=(1,), probe=True, disable=frozenset({"landlock", "seccomp"}),
                     sealed=SealRequest("kernels", (4096, 8192)), emptied=("/usr/lib/a.py",))
    assert BoxConfig.from_wire(json.loads(json.dumps(config.to_wire()))) == config
    assert config.limits == LIMITS and config.hide == ("/repo/autograder",)


def test_it_is_never_changed_in_place_only_varied():
    config = _config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.scratch = "/elsewhere"
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.limits.memory_bytes = 2**40
    pinned = dataclasses.replace(config, cpus=(0,))
    assert pinned.cpus == (0,) and config.cpus is None and pinned.submission == config.submission


def test_switched_off_layers_come_from_the_environment_and_only_known_ones(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_SANDBOX_DISABLE", "landlock, seccomp,everything")
    assert _config().disable == frozenset({"landlock", "seccomp"})
    assert _config().disabled("landlock") and not _config().disabled("cgroups")
    with pytest.raises(ValueError, match="no layer to disable"):
        _config(disable=frozenset({"everything"}))


@pytest.mark.parametrize("change", [
    lambda data: data.update(uid=True),
    lambda data: data.update(uid="0"),
    lambda data: data.update(submission=None),
    lambda data: data.update(surprise=1),
    lambda data: data["limits"].update(memory_bytes=1.5),
    lambda data: data["limits"].pop("cpu_seconds"),
    lambda data: data.update(sealed={"what": "x", "addresses": ["0x10"]}),
    lambda data: data.update(cpus=7),
], ids=["bool-uid", "text-uid", "no-submission", "unknown-key", "float-limit", "missing-limit",
        "text-address", "cpus-not-a-list"])
def test_plain_data_that_is_not_a_config_is_refused(change):
    data = json.loads(json.dumps(_config().to_wire()))
    change(data)
    with pytest.raises(ValueError, match="box config"):
        BoxConfig.from_wire(data)


def test_cpus_that_are_not_cpus_are_dropped_on_the_way_in():
    data = _config().to_wire()
    data["cpus"] = [0, "1", True, 2.0, 3]
    assert BoxConfig.from_wire(data).cpus == (0, 3)
