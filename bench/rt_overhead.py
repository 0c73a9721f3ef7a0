#!/usr/bin/env python3
"""Per-call overhead of the OpenACL runtime through the Python `acl` module.

    python3 bench/rt_overhead.py [--json] [--batches N] [--scale F] [--quick]

The same benchmarks as bench/rt_overhead.c, called the way a pyACL program calls
them (positional ints, `(value..., ret)` tuples): each runs a warm-up batch, then
N batches of a fixed number of calls; a batch's time divided by its calls is one
sample; median, p90 and minimum of the samples are reported in ns per call. The
loop's own cost (an empty `for` over the same range, ~10-30 ns per iteration) is
included, as a user would see it.

Uses the `acl` module of $OPENACL_BUILD_DIR/python when that variable is set,
else an installed `acl`, else the one in <repo>/build/python.
"""
import argparse
import json
import os
import pathlib
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_CALLBACK_BLOCK = 1

BENCHES = [
    # name, description, calls per batch at scale 1, target ns (None: no target)
    ("memcpy_h2d_64", "acl.rt.memcpy 64 B host->device (sync)", 2000, 1500),
    ("memcpy_async_enqueue", "acl.rt.memcpy_async 64 B, enqueue only", 1000, None),
    ("event_record_sync", "record_event + synchronize_event", 500, None),
    ("callback_roundtrip", "launch_callback(BLOCK) + synchronize_stream", 200, None),
    ("sync_empty_stream", "synchronize_stream, empty stream", 2000, None),
]


def import_acl():
    """$OPENACL_BUILD_DIR set: that build tree's module. Otherwise an installed
    module if there is one, else the one in <repo>/build/python."""
    explicit = os.environ.get("OPENACL_BUILD_DIR")
    if not explicit:
        try:
            import acl
            return acl
        except ImportError:
            pass
    build = pathlib.Path(explicit or "build")
    if not build.is_absolute():
        build = ROOT / build
    sys.path.insert(0, str(build / "python"))
    import acl
    return acl


def check(what, ret, acl):
    if ret != ACL_SUCCESS:
        raise SystemExit(f"rt_overhead.py: {what} failed with {ret}: {acl.get_recent_err_msg()}")


class Reporter:
    """A Python thread subscribed to `stream`, looping in acl.rt.process_report."""

    def __init__(self, acl, context, stream):
        self.acl, self.context, self.stream = acl, context, stream
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.ready.wait()
        if self.error:
            raise SystemExit(self.error)

    def _run(self):
        acl = self.acl
        ret = acl.rt.set_context(self.context)
        if ret == ACL_SUCCESS:
            ret = acl.rt.subscribe_report(threading.get_ident(), self.stream)
        if ret != ACL_SUCCESS:
            self.error = f"rt_overhead.py: callback thread setup failed with {ret}"
            self.ready.set()
            return
        self.ready.set()
        while not self.stop.is_set():
            acl.rt.process_report(20)
        acl.rt.unsubscribe_report(threading.get_ident(), self.stream)

    def close(self):
        self.stop.set()
        self.thread.join()


def make_batches(acl, dev, host, stream, event):
    rt = acl.rt
    memcpy, memcpy_async = rt.memcpy, rt.memcpy_async
    record_event, synchronize_event = rt.record_event, rt.synchronize_event
    launch_callback, synchronize_stream = rt.launch_callback, rt.synchronize_stream
    H2D = ACL_MEMCPY_HOST_TO_DEVICE
    calls = [0]

    def on_callback(data):
        data[0] += 1

    def memcpy_batch(n):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            if memcpy(dev, 64, host, 64, H2D):
                check("acl.rt.memcpy", memcpy(dev, 64, host, 64, H2D), acl)
        return time.perf_counter_ns() - t0

    def async_batch(n):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            if memcpy_async(dev, 64, host, 64, H2D, stream):
                check("acl.rt.memcpy_async", memcpy_async(dev, 64, host, 64, H2D, stream), acl)
        t1 = time.perf_counter_ns()
        check("acl.rt.synchronize_stream", synchronize_stream(stream), acl)  # untimed
        return t1 - t0

    def event_batch(n):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            if record_event(event, stream) or synchronize_event(event):
                raise SystemExit("rt_overhead.py: record_event/synchronize_event failed: "
                                 f"{acl.get_recent_err_msg()}")
        return time.perf_counter_ns() - t0

    def callback_batch(n):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            if launch_callback(on_callback, calls, ACL_CALLBACK_BLOCK, stream) \
                    or synchronize_stream(stream):
                raise SystemExit("rt_overhead.py: launch_callback/synchronize_stream failed: "
                                 f"{acl.get_recent_err_msg()}")
        return time.perf_counter_ns() - t0

    def sync_batch(n):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            if synchronize_stream(stream):
                check("acl.rt.synchronize_stream", synchronize_stream(stream), acl)
        return time.perf_counter_ns() - t0

    return {
        "memcpy_h2d_64": memcpy_batch,
        "memcpy_async_enqueue": async_batch,
        "event_record_sync": event_batch,
        "callback_roundtrip": callback_batch,
        "sync_empty_stream": sync_batch,
    }


def percentile(sorted_samples, p):
    """Nearest-rank percentile."""
    n = len(sorted_samples)
    rank = min(n, max(1, -(-p * n // 100)))
    return sorted_samples[int(rank) - 1]


def median(sorted_samples):
    n = len(sorted_samples)
    mid = n // 2
    return sorted_samples[mid] if n % 2 else 0.5 * (sorted_samples[mid - 1] + sorted_samples[mid])


def fmt(ns):
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} us"
    return f"{ns / 1e6:.2f} ms"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--batches", type=int, default=31, help="timed batches per benchmark")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the calls per batch")
    ap.add_argument("--quick", action="store_true", help="--batches 7 --scale 0.2")
    args = ap.parse_args(argv)
    if args.quick:
        args.batches, args.scale = 7, 0.2
    if args.batches < 1 or args.scale <= 0:
        ap.error("--batches and --scale must be positive")

    acl = import_acl()
    check("acl.init", acl.init(), acl)
    check("acl.rt.set_device", acl.rt.set_device(0), acl)
    context, ret = acl.rt.get_context()
    check("acl.rt.get_context", ret, acl)
    stream, ret = acl.rt.create_stream()
    check("acl.rt.create_stream", ret, acl)
    event, ret = acl.rt.create_event()
    check("acl.rt.create_event", ret, acl)
    dev, ret = acl.rt.malloc(64, ACL_MEM_MALLOC_HUGE_FIRST)
    check("acl.rt.malloc", ret, acl)
    host, ret = acl.rt.malloc_host(64)
    check("acl.rt.malloc_host", ret, acl)

    reporter = Reporter(acl, context, stream)
    batches = make_batches(acl, dev, host, stream, event)
    results = []
    try:
        for name, description, calls, target in BENCHES:
            n = max(1, int(calls * args.scale))
            run = batches[name]
            run(n)  # warm-up
            samples = sorted(run(n) / n for _ in range(args.batches))
            results.append({
                "name": name,
                "description": description,
                "calls_per_batch": n,
                "median_ns": round(median(samples), 1),
                "p90_ns": round(percentile(samples, 90), 1),
                "min_ns": round(samples[0], 1),
                "target_ns": target,
                "meets_target": None if target is None else median(samples) <= target,
            })
    finally:
        reporter.close()
        acl.rt.free_host(host)
        acl.rt.free(dev)
        acl.rt.destroy_event(event)
        acl.rt.destroy_stream(stream)
        acl.rt.reset_device(0)
        acl.finalize()

    if args.json:
        print(json.dumps({
            "suite": "rt_overhead",
            "language": "python",
            "python": sys.version.split()[0],
            "acl_module": getattr(acl, "__file__", None),
            "batches": args.batches,
            "unit": "ns per call",
            "results": results,
        }, indent=2))
        return 0
    print(f"OpenACL runtime per-call overhead (Python {sys.version.split()[0]}), "
          f"{args.batches} batches per benchmark")
    print(f"{'benchmark':22} {'what':46} {'calls':>7} {'median':>10} {'p90':>10} {'min':>10}  target")
    for r in results:
        target = "-"
        if r["target_ns"] is not None:
            target = f"<= {fmt(r['target_ns'])} {'(met)' if r['meets_target'] else '(MISSED)'}"
        print(f"{r['name']:22} {r['description']:46} {r['calls_per_batch']:7d} "
              f"{fmt(r['median_ns']):>10} {fmt(r['p90_ns']):>10} {fmt(r['min_ns']):>10}  {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
