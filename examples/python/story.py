# SPDX-License-Identifier: MIT
"""The user's story, on synthetic data (nothing is downloaded): data-parallel
training on N ranks, each on 1/N of every global batch.

  broken_run: ranks initialise their models differently and never sync;
              each trains its own model, and the loss curves drift apart.
  fixed_run:  obc.sync_module copies rank 0's model everywhere, then
              obc.GradientAverager averages gradients while backward runs;
              the loss equals one process training on the whole batch.

train_broken.py and train_fixed.py run these and print what they show;
python/tests/test_training.py checks them.
"""
import torch

import obc

FEATURES, HIDDEN, GLOBAL_BATCH = 20, 64, 64
LR = 0.2


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.Tanh(),
                               torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.Tanh(),
                               torch.nn.Linear(HIDDEN, 1))


def global_batch(step):
    """The step's whole batch, the same on every rank: a fixed random
    teacher function of the inputs, plus noise."""
    g = torch.Generator().manual_seed(10_000 + step)
    x = torch.randn(GLOBAL_BATCH, FEATURES, generator=g)
    teacher = torch.Generator().manual_seed(7)
    w = torch.randn(FEATURES, 1, generator=teacher) / FEATURES**0.5
    y = torch.sin(x @ w) + 0.1 * torch.randn(GLOBAL_BATCH, 1, generator=g)
    return x, y


def shard(step, rank, nranks):
    x, y = global_batch(step)
    per = GLOBAL_BATCH // nranks
    return x[rank * per:(rank + 1) * per], y[rank * per:(rank + 1) * per]


def single_process_losses(steps):
    """The reference: one process, the whole batch every step."""
    model = make_model(seed=0)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(steps):
        x, y = global_batch(step)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _global_loss(local_loss):
    """The whole batch's loss: the mean of equal shards' mean losses."""
    t = torch.tensor([local_loss], dtype=torch.float64)
    obc.all_reduce(t, op=obc.ReduceOp.AVG)
    return t.item()


def train_on_shards(model, steps, averager=None):
    """Each rank's loop: its shard of every global batch; with an averager,
    gradients are averaged during backward and waited for before the step.
    Returns this rank's loss per step."""
    rank, nranks = obc.get_rank(), obc.get_world_size()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(steps):
        x, y = shard(step, rank, nranks)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()  # an averager's buckets are averaged while this runs
        if averager is not None:
            averager.wait()
        opt.step()
        losses.append(loss.item())
    return losses


def fixed_run(steps, bucket_mb=25):
    """Returns (global losses per step, check_consistency before sync, after training)."""
    model = make_model(seed=obc.get_rank())  # rank 0 has the reference's initial weights
    before = obc.check_consistency(model)
    obc.sync_module(model, src=0)
    averager = obc.GradientAverager(model, bucket_mb=bucket_mb)
    losses = [_global_loss(v) for v in train_on_shards(model, steps, averager)]
    averager.remove()
    return losses, before, obc.check_consistency(model)


def broken_run(steps):
    """Returns (this rank's losses, every rank's final loss, check_consistency after training)."""
    model = make_model(seed=obc.get_rank())
    losses = train_on_shards(model, steps)
    return losses, obc.all_gather_object(losses[-1]), obc.check_consistency(model)
