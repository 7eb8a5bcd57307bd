"""Fixtures for the Redis backend's replay tests: one standalone redis-server and one
three-master Redis Cluster per test module, each on free 127.0.0.1 ports (redis_support.py),
and a throwaway redis-server for the tests that kill or flush theirs."""
import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redis_support import RedisCluster, RedisServer  # noqa: E402


def pytest_sessionstart(session):
    for tool in ("redis-server", "redis-cli"):
        assert shutil.which(tool), f"{tool} not found (Debian package redis-server)"


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def own_redis_server(tmp_path):
    """A redis-server of the test's own, which it may kill, restart or flush."""
    with RedisServer(tmp_path) as server:
        yield server


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory):
    with RedisCluster(tmp_path_factory.mktemp("redis-cluster")) as cluster:
        yield cluster
