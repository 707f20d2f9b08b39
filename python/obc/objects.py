# SPDX-License-Identifier: MIT
"""Picklable objects over the byte collectives.

broadcast_object pickles with protocol 5, so the large contiguous buffers
inside the object (NumPy arrays, PickleBuffer-aware types) stay out of the
pickle: the root sends them from the object's own memory, and each
receiver receives them straight into the buffers its copy of the object
will own. What is sent: the sizes first, then the pickle and each buffer,
streamed in chunks. A rank's extra memory is thus the in-band pickle once;
torch's broadcast_object_list copies the whole pickle into a tensor and
holds it twice.
"""
import pickle

import numpy as np

CHUNK_BYTES = 64 << 20  # one broadcast call per 64 MiB


def _stream(comm, view, src):
    for start in range(0, len(view), CHUNK_BYTES):
        comm.broadcast(view[start:start + CHUNK_BYTES], src)


def broadcast_object(comm, obj, src=0):
    """src's obj on every rank (src gets its own object back, not a copy)."""
    root = comm.rank == src
    head = np.zeros(2, dtype=np.int64)  # pickle bytes, number of out-of-band buffers
    if root:
        buffers = []
        data = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
        buffers = [b.raw() for b in buffers]
        head[:] = (len(data), len(buffers))
    comm.broadcast(head, src)
    sizes = np.zeros(int(head[1]), dtype=np.int64)
    if root:
        sizes[:] = [len(b) for b in buffers]
    if len(sizes):
        comm.broadcast(sizes, src)
    if not root:
        data = bytearray(int(head[0]))
        buffers = [bytearray(int(n)) for n in sizes]
    for view in [memoryview(data)] + [memoryview(b) for b in buffers]:
        with view:
            _stream(comm, view.cast("B"), src)
    return obj if root else pickle.loads(data, buffers=buffers)


def all_gather_object(comm, obj):
    """A list of every rank's obj, in rank order."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sizes = np.zeros(comm.size, dtype=np.int64)
    comm.all_gather(sizes, np.array([len(data)], dtype=np.int64))
    width = int(sizes.max())
    mine = np.zeros(width, dtype=np.uint8)
    mine[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    everyone = np.empty(width * comm.size, dtype=np.uint8)
    comm.all_gather(everyone, mine)
    return [pickle.loads(everyone[r * width:r * width + int(sizes[r])].tobytes())
            for r in range(comm.size)]
