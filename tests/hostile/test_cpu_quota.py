"""The cores a call may use: the cgroup's CPU quota caps them, and it is read once per interval
(every call that may use threads asks), again once the interval has passed, and anew in a
forked child."""

import os

from mlsom import _validation


def test_the_cgroup_quota_is_read_once_per_interval(monkeypatch):
    reads = []
    monkeypatch.setattr(_validation, "read_cgroup_cpu_limit", lambda: reads.append(1) or 1)
    monkeypatch.setattr(_validation, "_cpu_quota_cache", {})
    for _ in range(5):
        assert _validation.available_cpus() == 1  # (the quota caps the affinity)
    assert len(reads) == 1
    when, quota = _validation._cpu_quota_cache[os.getpid()]
    _validation._cpu_quota_cache[os.getpid()] = (when - _validation.CPU_QUOTA_TTL - 1, quota)
    _validation.available_cpus()
    assert len(reads) == 2


def test_a_forked_child_reads_its_own_quota(monkeypatch):
    monkeypatch.setattr(_validation, "_cpu_quota_cache", {os.getpid() + 1: (0.0, 1)})
    reads = []
    monkeypatch.setattr(_validation, "read_cgroup_cpu_limit", lambda: reads.append(1))
    _validation.available_cpus()  # (another process's entry is not this one's)
    assert reads == [1]
