#!/usr/bin/env python3
"""A device memory pool carved from one large acl.rt.malloc.

Blocks follow the runtime's own rules: a request is rounded up to a multiple
of 32 bytes plus 32 bytes of padding (what aclrtMalloc takes for it), and every
block starts on a 64-byte boundary. The sample checks those rules against
acl.rt.get_mem_info, allocates and frees blocks, writes a distinct byte into
each block and reads every block back to prove no two blocks overlap.

    PYTHONPATH=build/python python3 samples/python/memory_pool.py
"""
import random
import sys

import numpy as np

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_HBM_MEM = 1

DEVICE_ID = 0
POOL_BYTES = 4 << 20
ALIGNMENT = 64


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def cann_block_size(size):
    """Bytes aclrtMalloc takes for `size`: round up to 32, plus 32 of padding."""
    return (size + 31) // 32 * 32 + 32


def align_up(value, alignment):
    return (value + alignment - 1) // alignment * alignment


class DevicePool:
    """First-fit pool over one device allocation, with coalescing free list."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.base, ret = acl.rt.malloc(capacity, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc (pool)", ret)
        if self.base % ALIGNMENT:
            raise SampleError(f"pool base 0x{self.base:x} is not {ALIGNMENT}-byte aligned")
        self.free_list = [(0, capacity)]      # (offset, size), sorted by offset
        self.live = {}                        # ptr -> (offset, reserved, requested)

    def alloc(self, size):
        if size <= 0:
            raise SampleError("size must be positive")
        reserved = align_up(cann_block_size(size), ALIGNMENT)
        for i, (off, avail) in enumerate(self.free_list):
            if avail >= reserved:
                if avail == reserved:
                    del self.free_list[i]
                else:
                    self.free_list[i] = (off + reserved, avail - reserved)
                ptr = self.base + off
                self.live[ptr] = (off, reserved, size)
                return ptr
        return 0                              # pool exhausted

    def free(self, ptr):
        if ptr not in self.live:
            raise SampleError(f"0x{ptr:x} is not a live block of this pool")
        off, reserved, _ = self.live.pop(ptr)
        self.free_list.append((off, reserved))
        self.free_list.sort()
        merged = []
        for o, s in self.free_list:
            if merged and merged[-1][0] + merged[-1][1] == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + s)
            else:
                merged.append((o, s))
        self.free_list = merged

    def used(self):
        return sum(r for _, r, _ in self.live.values())

    def release(self):
        check_ret("acl.rt.free (pool)", acl.rt.free(self.base))
        self.base = 0


def check_no_overlap(pool):
    spans = sorted((off, off + reserved) for off, reserved, _ in pool.live.values())
    for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
        if b0 < a1:
            raise SampleError(f"blocks [{a0},{a1}) and [{b0},{b1}) overlap")
    for ptr in pool.live:
        if ptr % ALIGNMENT:
            raise SampleError(f"block 0x{ptr:x} is not {ALIGNMENT}-byte aligned")
    if spans and spans[-1][1] > pool.capacity:
        raise SampleError("a block runs past the end of the pool")


def fill_and_verify(pool, tags):
    """Writes tag[ptr] into every live block, then reads every block back."""
    for ptr, (_, _, size) in pool.live.items():
        check_ret("acl.rt.memset", acl.rt.memset(ptr, size, tags[ptr], size))
    for ptr, (_, _, size) in pool.live.items():
        out = np.zeros(size, np.uint8)
        check_ret("acl.rt.memcpy D2H", acl.rt.memcpy(out.ctypes.data, size, ptr, size,
                                                     ACL_MEMCPY_DEVICE_TO_HOST))
        if not (out == tags[ptr]).all():
            raise SampleError(f"block 0x{ptr:x} was overwritten by a neighbour")


def mem_free():
    free, _, ret = acl.rt.get_mem_info(ACL_HBM_MEM)
    check_ret("acl.rt.get_mem_info", ret)
    return free


def run():
    # 1. the runtime's own accounting matches cann_block_size()
    for size in (1, 32, 33, 100, 1000, 4097):
        before = mem_free()
        ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc", ret)
        taken = before - mem_free()
        check_ret("acl.rt.free", acl.rt.free(ptr))
        if taken != cann_block_size(size) or ptr % ALIGNMENT:
            raise SampleError(f"malloc({size}) took {taken} bytes at 0x{ptr:x}, "
                              f"expected {cann_block_size(size)} and {ALIGNMENT}-byte alignment")
    print("  runtime accounting: malloc(n) takes round_up(n, 32) + 32 bytes, 64-byte aligned")

    # 2. the pool
    before = mem_free()
    pool = DevicePool(POOL_BYTES)
    print(f"  pool of {POOL_BYTES} bytes at 0x{pool.base:x} took {before - mem_free()} bytes of the device")
    rng = random.Random(2024)
    tags = {}
    try:
        for i in range(200):
            ptr = pool.alloc(rng.choice([1, 17, 32, 64, 100, 255, 1000, 4096, 10000]))
            if not ptr:
                raise SampleError("pool exhausted too early")
            tags[ptr] = (i % 250) + 1
        check_no_overlap(pool)
        fill_and_verify(pool, tags)
        print(f"  allocated {len(pool.live)} blocks, {pool.used()} bytes reserved, no overlap")

        victims = rng.sample(sorted(pool.live), len(pool.live) // 2)
        for ptr in victims:
            pool.free(ptr)
            del tags[ptr]
        print(f"  freed {len(victims)} blocks, free list has {len(pool.free_list)} hole(s)")

        reused = 0
        for i in range(150):
            ptr = pool.alloc(rng.choice([8, 48, 200, 777, 3000]))
            if not ptr:
                break
            reused += 1
            tags[ptr] = 251 - (i % 250)
        check_no_overlap(pool)
        fill_and_verify(pool, tags)
        print(f"  allocated {reused} more blocks into the holes, {len(pool.live)} live, "
              f"{pool.used()} of {POOL_BYTES} bytes reserved, every block verified")

        for ptr in list(pool.live):
            pool.free(ptr)
        if pool.free_list != [(0, POOL_BYTES)]:
            raise SampleError(f"free list did not coalesce: {pool.free_list}")
        print("  all blocks freed, free list coalesced back to one span")
    finally:
        pool.release()
    if mem_free() != before:
        raise SampleError("device memory not returned after releasing the pool")


def main():
    if acl.init() != ACL_SUCCESS:
        print(f"memory_pool: FAILED: acl.init: {acl.get_recent_err_msg()}", file=sys.stderr)
        return 1
    failure = None
    try:
        check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
        run()
    except SampleError as exc:
        failure = str(exc)
    finally:
        acl.rt.reset_device(DEVICE_ID)
        acl.finalize()
    if failure:
        print(f"memory_pool: FAILED: {failure}", file=sys.stderr)
        return 1
    print("memory_pool: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
