# SPDX-License-Identifier: MIT
"""The user's story end to end (examples/python/story.py) and the gradient
averager's parts."""
import os
import sys

import pytest
from conftest import torch

import obc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python"))
import story  # noqa: E402

STEPS = 50


@pytest.mark.parametrize("bucket_mb", [25, 0.004], ids=["one-bucket", "many-buckets"])
def test_fixed_run_matches_single_process(comm, bucket_mb):
    losses, before, after = story.fixed_run(STEPS, bucket_mb=bucket_mb)
    reference = story.single_process_losses(STEPS)
    for step, (got, want) in enumerate(zip(losses, reference)):
        assert abs(got - want) <= 1e-5 * abs(want), f"step {step}: {got} vs {want}"
    assert after == {}
    if comm.size > 1:
        assert set(before) == {n for n, _ in story.make_model(0).named_parameters()}
    assert losses[-1] < 0.75 * losses[0]  # it learns


def test_broken_run_is_detected(comm):
    losses, finals, differ = story.broken_run(STEPS)
    if comm.size == 1:
        assert differ == {}
        return
    assert set(differ) == {n for n, _ in story.make_model(0).named_parameters()}
    assert all(ranks == list(range(1, comm.size)) for ranks in differ.values())
    assert len(set(finals)) == comm.size  # every rank's curve went its own way


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
def test_averager_averages_every_parameter(comm, dtype):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Linear(7, 2)).to(dtype)
    avg = obc.GradientAverager(model, bucket_mb=0.0001)  # one tensor per bucket
    model(torch.full((3, 5), float(comm.rank + 1), dtype=dtype)).sum().backward()
    avg.wait()
    want = []
    for r in range(comm.size):  # every rank's gradient, recomputed locally in float64
        q = [t.detach().to(torch.float64).requires_grad_() for t in model.parameters()]
        h = torch.nn.functional.linear(torch.full((3, 5), float(r + 1), dtype=torch.float64),
                                       q[0], q[1])
        torch.nn.functional.linear(h, q[2], q[3]).sum().backward()
        want.append([t.grad for t in q])
    tol = {torch.float32: 1e-5, torch.float64: 1e-12, torch.bfloat16: 3e-2}[dtype]
    for i, p in enumerate(model.parameters()):
        mean = sum(g[i] for g in want) / comm.size
        torch.testing.assert_close(p.grad.to(torch.float64), mean, rtol=tol, atol=tol)
    avg.remove()


def test_averager_wait_averages_grads_set_by_hand_float16(comm):
    """float16 has no CPU backward in torch 1.x; gradients set directly (no
    hook fires) are still averaged by wait()."""
    model = torch.nn.Linear(3, 2).to(torch.float16)
    avg = obc.GradientAverager(model)
    for p in model.parameters():
        p.grad = torch.full_like(p, float(comm.rank + 1))
    avg.wait()
    want = sum(range(1, comm.size + 1)) / comm.size
    for p in model.parameters():
        assert (p.grad.float() == want).all()
    avg.remove()


def test_averager_no_sync_accumulates_then_averages(comm):
    torch.manual_seed(1)
    model = torch.nn.Linear(4, 1, bias=False)
    avg = obc.GradientAverager(model)
    with avg.no_sync():
        model(torch.ones(1, 4) * (comm.rank + 1)).sum().backward()
    assert torch.equal(model.weight.grad, torch.full((1, 4), float(comm.rank + 1)))
    model(torch.ones(1, 4)).sum().backward()
    avg.wait()
    want = sum(r + 2 for r in range(comm.size)) / comm.size
    torch.testing.assert_close(model.weight.grad, torch.full((1, 4), want))
    avg.remove()


def test_averager_unused_parameter_counts_as_zero(comm):
    model = torch.nn.ModuleDict({"used": torch.nn.Linear(2, 1), "unused": torch.nn.Linear(2, 1)})
    avg = obc.GradientAverager(model)
    model["used"](torch.ones(1, 2)).sum().backward()
    avg.wait()
    assert torch.equal(model["unused"].weight.grad, torch.zeros(1, 2))
    assert torch.equal(model["used"].weight.grad, torch.ones(1, 2))
    avg.remove()


def test_averager_names_a_differing_model(comm):
    if comm.size < 2:
        pytest.skip("needs two ranks")
    model = torch.nn.Linear(3, 2 if comm.rank == 0 else 4)
    with pytest.raises(obc.Mismatch, match="rank 1 has 'weight' shape"):
        obc.GradientAverager(model)
