# SPDX-License-Identifier: MIT
"""The fixed run: sync the model, average gradients; the loss matches one
process on the whole batch.
    build/bin/obcrun -n 4 /usr/bin/python3 examples/python/train_fixed.py
(or torchrun --nproc_per_node=4 examples/python/train_fixed.py)"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import obc  # noqa: E402
import story  # noqa: E402

STEPS = 50

obc.init()
losses, before, after = story.fixed_run(STEPS)
reference = story.single_process_losses(STEPS)
worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
if obc.get_rank() == 0:
    n = obc.get_world_size()
    print(f"{n} ranks, each on {story.GLOBAL_BATCH // n} of {story.GLOBAL_BATCH} samples a step")
    print(f"before sync_module, tensors differing from rank 0: {sorted(before) or 'none'}")
    print(f"after training, tensors differing from rank 0:     {sorted(after) or 'none'}")
    print("step  obc loss (all ranks)  one process, whole batch")
    for step in (0, 1, 10, 25, STEPS - 1):
        print(f"{step:4d}  {losses[step]:.8f}            {reference[step]:.8f}")
    print(f"largest relative difference over {STEPS} steps: {worst:.2e}")
    print("MATCH" if worst <= 1e-5 and not after else "DIFFERENT")
sys.exit(0 if worst <= 1e-5 and not after else 1)
