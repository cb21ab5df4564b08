"""Round trip of a trivial cell from jupyter_client, and the CPU an idle
kernel uses. Prints the figures; it asserts nothing (the targets are read
off its output: p50 at most 2 ms, no CPU when idle).

    JUPYTER_PATH=... /usr/bin/python3 tests/jupyter/bench_roundtrip.py [N]
"""

import os
import statistics
import sys
import time

from jupyter_client.manager import start_new_kernel

kernel = os.environ.get("TRACEBOOK_KERNEL", "tracebook")
n = int(sys.argv[1]) if len(sys.argv) > 1 else 500

km, kc = start_new_kernel(kernel_name=kernel, startup_timeout=60)
try:
    for _ in range(20):  # warm up
        kc.execute_interactive("SELECT 1", timeout=30, output_hook=lambda m: None)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        kc.execute_interactive("SELECT 1", timeout=30, output_hook=lambda m: None)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    print("%s: %d round trips of 'SELECT 1': p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, mean %.2f ms"
          % (kernel, n, statistics.median(times), times[int(n * 0.9)], times[int(n * 0.99)], statistics.mean(times)))

    pid = km.provisioner.process.pid if km.provisioner else km.kernel.pid
    def cpu_ticks():
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    before = cpu_ticks()
    time.sleep(10)
    used = (cpu_ticks() - before) / os.sysconf("SC_CLK_TCK")
    print("%s: idle for 10 s used %.3f s of CPU" % (kernel, used))
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
