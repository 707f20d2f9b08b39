# SPDX-License-Identifier: MIT
"""Whole models: sync_module (src's parameters and buffers to every rank)
and check_consistency (which tensors differ, on which ranks).

Both first agree on what the tensors are: names, shapes and dtypes, in the
same order on every rank. A disagreement is named (which rank, which
tensor, what differs) on every rank before any data moves.
"""
import hashlib
import sys
import time

import numpy as np

from . import _buffers as B
from . import _native as N
from .comm import group, hash_buffer
from .errors import Mismatch
from .objects import all_gather_object


def named_tensors(model_or_tensors):
    """[(name, tensor)] of a torch module (parameters, then buffers), a
    mapping name -> tensor (a state_dict), a list of tensors/arrays (named
    by index) or one tensor/array (named "tensor")."""
    obj = model_or_tensors
    if hasattr(obj, "named_parameters") and hasattr(obj, "named_buffers"):
        return list(obj.named_parameters()) + list(obj.named_buffers())
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items()]
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    return [("tensor", obj)]


def _spec(named):
    return [(name, tuple(t.shape), str(t.dtype)) for name, t in named]


def _describe(rank, theirs, src, ours):
    """Human text for how rank's spec differs from src's."""
    lines = []
    mine, base = dict((n, (s, d)) for n, s, d in theirs), dict((n, (s, d)) for n, s, d in ours)
    for name, (shape, dtype) in base.items():
        if name not in mine:
            lines.append(f"rank {rank} has no '{name}' (rank {src}: shape {shape}, {dtype})")
        elif mine[name] != (shape, dtype):
            s, d = mine[name]
            lines.append(f"rank {rank} has '{name}' shape {s}, {d} where rank {src} has "
                         f"shape {shape}, {dtype}")
    for name in mine:
        if name not in base:
            lines.append(f"rank {rank} has '{name}' which rank {src} does not")
    if not lines and [n for n, _, _ in theirs] != [n for n, _, _ in ours]:
        lines.append(f"rank {rank} lists the tensors in a different order from rank {src}")
    return lines


def agree_on_spec(comm, named, src, what):
    """Raise Mismatch on every rank unless every rank has the same names,
    shapes and dtypes in the same order. One small allgather when they
    agree; the specs themselves are exchanged only to name a difference."""
    spec = _spec(named)
    digest = np.frombuffer(hashlib.blake2b(repr(spec).encode(), digest_size=16).digest(),
                           dtype=np.uint8)
    everyone = np.empty(16 * comm.size, dtype=np.uint8)
    comm.all_gather(everyone, digest)
    rows = everyone.reshape(comm.size, 16)
    if (rows == rows[src]).all():
        return
    specs = all_gather_object(comm, spec)
    lines = []
    for r in range(comm.size):
        if r != src and specs[r] != specs[src]:
            lines += _describe(r, specs[r], src, specs[src])
    raise Mismatch(f"{what}: ranks disagree on the tensors: " + "; ".join(lines))


def _on_cpu(name, t, what):
    if B.is_tensor(t) and t.device.type != "cpu":
        raise ValueError(f"{what}: '{name}' is on device '{t.device}'; obc moves CPU memory "
                         f"only")
    return t


class _Progress:
    """A one-line progress bar on stderr, redrawn at most 10 times a second."""

    def __init__(self, total, label):
        self.total, self.done, self.label = total, 0, label
        self.start = self.last = time.monotonic()

    def advance(self, nbytes):
        self.done += nbytes
        now = time.monotonic()
        if now - self.last >= 0.1 or self.done >= self.total:
            self.last = now
            rate = self.done / max(now - self.start, 1e-9) / 1e9
            pct = 100.0 * self.done / self.total if self.total else 100.0
            sys.stderr.write(f"\r{self.label}: {self.done / 2**20:.0f}/"
                             f"{self.total / 2**20:.0f} MiB ({pct:.0f}%) {rate:.2f} GB/s")
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def buckets(named, bucket_bytes):
    """Consecutive runs of tensors of at most bucket_bytes each (a tensor
    larger than that is a bucket of its own). Same order on every rank."""
    run, size = [], 0
    for name, t in named:
        nbytes = B.as_buffer(t, name, writable=False, any_dtype=True).nbytes
        if run and size + nbytes > bucket_bytes:
            yield run, size
            run, size = [], 0
        run.append((name, t))
        size += nbytes
    if run:
        yield run, size


def _to_shared(comm, named, what):
    """Move every tensor's data into one obc.empty block (t.data = a view of
    it, each at a 64-byte boundary), so later collectives on the parameters
    use shared buffers: a reader maps the root's one block once and copies
    every bucket straight out of it."""
    for name, t in named:
        if not B.is_tensor(t):
            raise ValueError(f"{what}: shared=True places torch tensors only; '{name}' is "
                             f"{type(t).__name__}")
    placed, total = [], 0
    for name, t in named:
        if t.numel() > 0:
            placed.append((t, total))
            total += (t.numel() * t.element_size() + 63) // 64 * 64
    if total == 0:
        return
    import torch
    slab = comm.empty((total,), torch.uint8)
    for t, off in placed:
        nbytes = t.numel() * t.element_size()
        dest = slab[off:off + nbytes].view(t.dtype).view(t.shape)
        dest.copy_(t.detach())
        t.data = dest


def _converts(t, wire):
    """Whether t (float32) travels as wire rather than as itself."""
    return wire is not None and B.as_buffer(t, "sync_module", writable=False,
                                            any_dtype=True).dtype == N.FLOAT32


def sync_module(comm, model, src=0, bucket_mb=25, progress=False, wire_dtype=None,
                shared=False):
    """Copy src's parameters and buffers to every rank, in place.

    Tensors go in buckets of at most bucket_mb MiB; each bucket is one
    obc group of in-place broadcasts, which obc fuses into few transfers
    without packing them into a bigger buffer, so no memory is added.
    Names, shapes and dtypes are checked across ranks first.

    wire_dtype (torch.bfloat16, "bfloat16", torch.float16, ...): float32
    tensors travel in it, one obc_broadcast_as each (outside the groups;
    every rank, src included, ends with src's values rounded to it); other
    dtypes travel as they are. shared=True moves every tensor's data into
    obc.empty memory first (the module's tensors stay shared afterwards)."""
    what = "sync_module"
    if bucket_mb <= 0:
        raise ValueError(f"{what}: bucket_mb must be positive, got {bucket_mb}")
    named = [(n, _on_cpu(n, t, what)) for n, t in named_tensors(model)]
    for name, t in named:
        if B.is_tensor(t) and not t.is_contiguous():
            raise ValueError(f"{what}: '{name}' is not contiguous; obc syncs tensors in place")
    agree_on_spec(comm, named, src, what)
    wire = None if wire_dtype is None else B.obc_dtype(wire_dtype, what)
    if wire == N.FLOAT32:
        wire = None
    if shared:
        _to_shared(comm, named, what)
    total = sum(B.as_buffer(t, n, writable=False, any_dtype=True).nbytes for n, t in named)
    bar = _Progress(total, what) if progress and comm.rank == src else None
    plain = [(n, t) for n, t in named if not _converts(t, wire)]
    for name, t in named:
        if _converts(t, wire):
            comm.broadcast(t.detach() if B.is_tensor(t) else t, src, wire_dtype=wire_dtype)
            if bar is not None:
                bar.advance(B.as_buffer(t, name, writable=False).nbytes)
    for run, size in buckets(plain, int(bucket_mb * 2**20)):
        with group():
            for name, t in run:
                comm.broadcast(t.detach() if B.is_tensor(t) else t, src)
        if bar is not None:
            bar.advance(size)


def check_consistency(comm, model_or_tensors, src=0):
    """{name: [ranks]} of the tensors whose bytes differ from src's, and on
    which ranks; {} when every rank holds the same. Each rank hashes its
    tensors (obc_hash64) and the hashes are allgathered once. Tensors whose
    names, shapes or dtypes differ are reported the same way."""
    named = named_tensors(model_or_tensors)
    counts = np.empty(comm.size, dtype=np.int64)
    comm.all_gather(counts, np.array([len(named)], dtype=np.int64))
    if (counts != counts[src]).any():
        bad = [r for r in range(comm.size) if counts[r] != counts[src]]
        return {"<number of tensors>": bad}
    hashes = np.empty(len(named), dtype=np.uint64)
    for i, (name, t) in enumerate(named):
        t = _on_cpu(name, t, "check_consistency")
        if B.is_tensor(t):
            t = t.detach().contiguous()
        elif not (t.flags.c_contiguous or t.flags.f_contiguous):
            t = np.ascontiguousarray(t)
        shape = hashlib.blake2b(repr((name, tuple(t.shape), str(t.dtype))).encode(),
                                digest_size=8).digest()
        hashes[i] = hash_buffer(t) ^ int.from_bytes(shape, "little")
    everyone = np.empty(len(named) * comm.size, dtype=np.uint64)
    comm.all_gather(everyone, hashes)
    rows = everyone.reshape(comm.size, len(named))
    differ = {}
    for i, (name, _) in enumerate(named):
        ranks = [r for r in range(comm.size) if rows[r, i] != rows[src, i]]
        if ranks:
            differ[name] = ranks
    return differ
