# SPDX-License-Identifier: MIT
"""run_suite.py - torch 1.13's own distributed suite (distributed_test.py, shipped in
python3-torch) over BACKEND, driven as torch's test/distributed/test_distributed_spawn.py
drives it; run.sh sets the environment. The suite stays where Debian installed it:
nothing of it is copied here.

Environment: BACKEND (gloo|obc), WORLD_SIZE, TEMP_DIR, INIT_METHOD (+MASTER_ADDR/PORT for env://).
Args: -k REGEX (selection on the test method name), --log FILE (one JSON line per test).
"""
import argparse
import json
import os
import re
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "stubs"))                    # expecttest stand-in
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))       # this checkout's obc

BACKEND = os.environ["BACKEND"]
if BACKEND == "obc":
    import obc.torch  # noqa: F401  registers the "obc" backend

# The plugin hooks must be in place before distributed_test.py is imported: its
# decorators test BACKEND against these sets at class-definition time.
from torch.testing._internal.common_distributed import DistTestCases
if BACKEND == "obc":
    for feat in ("plugin", "ddp", "subgroup"):
        DistTestCases.backend_feature[feat].add("obc")

from torch.testing._internal import distributed as _d  # noqa
from torch.testing._internal.distributed import distributed_test as dt
from torch.testing._internal.distributed.distributed_test import TestDistBackend, DistributedTest

# Python 3.11 cannot import torch 1.13's torch.distributed._shard (a dataclass with a
# mutable default), which TestDistBackend._run pulls into DDP through
# _set_ddp_with_replicated_tensor(True); keep DDP on plain tensors, as a 3.10 run without
# ReplicatedTensor would be.
import torch.nn.parallel._replicated_tensor_ddp_utils as _rt
_rt._set_ddp_with_replicated_tensor(False)
_rt._set_ddp_with_replicated_tensor = lambda value: None

# 4 ranks on 2 busy cores: give the file barrier more than its 10 s.
_orig_sync = dt.Barrier.sync.__func__
def _sync(cls, wait_for=None, timeout=120):
    return _orig_sync(cls, wait_for, timeout)
dt.Barrier.sync = classmethod(_sync)


class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        self._spawn_processes()


class JsonResult(unittest.TextTestResult):
    """unittest's text result, plus one JSON line per test in logf."""
    logf = None

    def startTest(self, test):
        self._t0 = time.time()
        super().startTest(test)

    def _log(self, test, outcome, detail=""):
        rec = {"test": test.id().split(".")[-1], "outcome": outcome,
               "secs": round(time.time() - self._t0, 1), "detail": detail[-6000:]}
        self.logf.write(json.dumps(rec) + "\n")
        self.logf.flush()

    def addSuccess(self, test):
        super().addSuccess(test)
        self._log(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._log(test, "failed", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._log(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._log(test, "skipped", str(reason))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._log(test, "xfail")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._log(test, "xpass")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default=".")
    ap.add_argument("--log", required=True)
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    sys.argv = sys.argv[:1]
    pat = re.compile(a.k, re.I)
    names = sorted(n for n in dir(TestDistBackendWithSpawn) if n.startswith("test") and pat.search(n))
    if a.list:
        print(len(names))
        print("\n".join(names))
        sys.exit(0)
    suite = unittest.TestSuite(TestDistBackendWithSpawn(n) for n in names)
    JsonResult.logf = open(a.log, "w")
    t0 = time.time()
    r = unittest.TextTestRunner(verbosity=2, resultclass=JsonResult).run(suite)
    print(f"WALL {time.time()-t0:.0f}s  ran={r.testsRun} failures={len(r.failures)} "
          f"errors={len(r.errors)} skipped={len(r.skipped)}")
