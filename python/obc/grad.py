# SPDX-License-Identifier: MIT
"""GradientAverager: data-parallel training's gradient averaging, with the
communication overlapped with the backward pass (the idea of torch DDP's
reducer, in a few dozen lines).

Parameters are split into buckets of at most bucket_mb MiB, in reverse
order (the order backward produces gradients) and by dtype. A hook on each
parameter's gradient accumulator copies its new gradient into its bucket;
when a bucket is full it is allreduce-averaged asynchronously while
backward goes on. Buckets are launched strictly in index order, so every
rank issues the same collectives in the same order even if hooks fire in a
different order. wait() (before optimizer.step()) finishes the rest and
writes the averages back into each parameter's .grad.
"""
from contextlib import contextmanager

from .comm import ReduceOp
from .model import agree_on_spec


class _Bucket:
    def __init__(self, flat, members):
        self.flat = flat  # one 1-D tensor holding the bucket's gradients
        self.members = members  # [(param, offset, numel)]
        self.ready = 0
        self.work = None


class GradientAverager:
    """Average the gradients of model's parameters over comm's ranks.

        avg = obc.GradientAverager(model)
        loss.backward()          # buckets are averaged while this runs
        avg.wait()               # every .grad now holds the average
        optimizer.step()

    Inside `with avg.no_sync():` backward only accumulates locally (for
    gradient accumulation); the next synced backward averages the sum."""

    def __init__(self, comm, model, bucket_mb=25):
        import torch
        if bucket_mb <= 0:
            raise ValueError(f"GradientAverager: bucket_mb must be positive, got {bucket_mb}")
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        for name, p in named:
            if p.device.type != "cpu":
                raise ValueError(f"GradientAverager: '{name}' is on device '{p.device}'; obc "
                                 f"moves CPU memory only")
        agree_on_spec(comm, named, 0, "GradientAverager")
        self._comm = comm
        self._sync = True
        self._buckets, self._where = self._make_buckets(torch, named, int(bucket_mb * 2**20))
        self._next = 0  # the next bucket to launch
        self._hooks = []
        for _, p in named:
            self._hooks.append(self._hook(p))

    @staticmethod
    def _make_buckets(torch, named, limit):
        buckets, where = [], {}
        run, size = [], 0

        def close():
            if run:
                total = sum(p.numel() for p in run)
                flat = torch.zeros(total, dtype=run[0].dtype)
                members, off = [], 0
                for p in run:
                    members.append((p, off, p.numel()))
                    where[p] = (len(buckets), off, p.numel())
                    off += p.numel()
                buckets.append(_Bucket(flat, members))

        for _, p in reversed(named):
            nbytes = p.numel() * p.element_size()
            if run and (size + nbytes > limit or p.dtype != run[0].dtype):
                close()
                run, size = [], 0
            run.append(p)
            size += nbytes
        close()
        return buckets, where

    def _hook(self, p):
        def on_grad(*_):
            self._grad_ready(p)

        if hasattr(p, "register_post_accumulate_grad_hook"):  # torch >= 2.1
            return p.register_post_accumulate_grad_hook(lambda _: self._grad_ready(p))
        # Older torch: hook the parameter's AccumulateGrad node, which runs
        # after .grad was updated. The node must be kept alive.
        acc = p.expand_as(p).grad_fn.next_functions[0][0]
        handle = acc.register_hook(on_grad)
        return (acc, handle)

    def _grad_ready(self, p):
        if not self._sync:
            return
        b, off, n = self._where[p]
        bucket = self._buckets[b]
        if bucket.work is not None:
            return  # a second backward before wait(): the first one's sum is in flight
        bucket.flat[off:off + n].copy_(p.grad.detach().view(-1))
        bucket.ready += 1
        while self._next < len(self._buckets) and \
                self._buckets[self._next].ready == len(self._buckets[self._next].members):
            self._launch(self._buckets[self._next])
            self._next += 1

    def _launch(self, bucket):
        bucket.work = self._comm.all_reduce(bucket.flat, op=ReduceOp.AVG, async_op=True)

    def wait(self):
        """Finish averaging and write the averages into every .grad. A
        parameter that got no gradient on this rank counts as zero."""
        for bucket in self._buckets[self._next:]:
            if bucket.ready < len(bucket.members):
                for p, off, n in bucket.members:
                    if p.grad is None:
                        bucket.flat[off:off + n].zero_()
                    else:
                        bucket.flat[off:off + n].copy_(p.grad.detach().view(-1))
            self._launch(bucket)
        self._next = len(self._buckets)
        try:
            for bucket in self._buckets:
                bucket.work.wait()
        finally:
            for bucket in self._buckets:
                bucket.work, bucket.ready = None, 0
            self._next = 0
        for bucket in self._buckets:
            for p, off, n in bucket.members:
                avg = bucket.flat[off:off + n].view_as(p)
                if p.grad is None:
                    p.grad = avg.clone()
                else:
                    p.grad.detach().copy_(avg)

    @contextmanager
    def no_sync(self):
        """Backward passes inside only accumulate .grad locally."""
        self._sync = False
        try:
            yield
        finally:
            self._sync = True

    def remove(self):
        """Remove the hooks; the model trains locally again."""
        for h in self._hooks:
            (h[1] if isinstance(h, tuple) else h).remove()
        self._hooks = []
