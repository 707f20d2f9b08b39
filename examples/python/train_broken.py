# SPDX-License-Identifier: MIT
"""The broken run: ranks initialise differently and never sync. obc's
check_consistency names the tensors that differ, and the ranks' loss curves
diverge, which nothing else reports.
    build/bin/obcrun -n 4 /usr/bin/python3 examples/python/train_broken.py"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import obc  # noqa: E402
import story  # noqa: E402

STEPS = 50

obc.init()
losses, finals, differ = story.broken_run(STEPS)
if obc.get_rank() == 0:
    print(f"{obc.get_world_size()} ranks trained without sync_module or gradient averaging")
    print("final loss per rank: " + ", ".join(f"rank {r} {v:.5f}" for r, v in enumerate(finals)))
    if differ:
        print("check_consistency found ranks holding different weights:")
        for name, ranks in differ.items():
            print(f"  {name}: ranks {ranks} differ from rank 0")
    else:
        print("check_consistency: every rank holds the same weights")
    print("DETECTED" if differ else "NOT DETECTED (one rank: nothing to diverge from)")
sys.exit(0 if differ or obc.get_world_size() == 1 else 1)
