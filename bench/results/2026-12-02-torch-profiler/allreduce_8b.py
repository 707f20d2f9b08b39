import sys, time, statistics, torch, torch.distributed as dist
backend = sys.argv[1]
if backend == "obc":
    import obc.torch  # noqa
dist.init_process_group(backend)
t = torch.ones(2)
n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
for _ in range(500): dist.all_reduce(t)
reps = []
for r in range(5):
    dist.barrier(); t0 = time.perf_counter()
    for _ in range(n): dist.all_reduce(t)
    reps.append((time.perf_counter() - t0) / n * 1e6)
if dist.get_rank() == 0: print(f"{statistics.median(reps):.2f}")
