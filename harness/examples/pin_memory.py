#!/usr/bin/env python3
"""A typical PyTorch program's pinned memory, for `pinscope observe` (docs/observe.md).

    pinscope observe -- python3 harness/examples/pin_memory.py
    pinscope report results/<stem>.timeline.csv -o pin_memory.html

What it does, in order: pins a 1 GiB tensor (`torch.empty(..., pin_memory=True)`, which PyTorch's
host allocator gets from `cudaHostAlloc`); allocates 256 MiB on the GPU; runs 8 batches of 8 MiB
through a DataLoader with `pin_memory=True` and 2 workers, copying each to the GPU; drops the
1 GiB tensor (PyTorch's host allocator keeps the block cached, so it stays pinned until exit).
Prints what it did and exits 0; exits 3 when there is no CUDA device.
"""
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

GIB = 1 << 30
MIB = 1 << 20
SAMPLE_FLOATS = 512 * 1024  # 2 MiB of float32: 4 per batch make an 8 MiB batch
BATCH = 4
BATCHES = 8


class Samples(Dataset):
    def __len__(self):
        return BATCH * BATCHES

    def __getitem__(self, i):
        return torch.full((SAMPLE_FLOATS,), float(i))


def main():
    if not torch.cuda.is_available():
        print("pin_memory.py: no CUDA device, so nothing is pinned", file=sys.stderr)
        return 3
    pinned = torch.empty(GIB, dtype=torch.uint8, pin_memory=True)
    print(f"pinned a 1 GiB tensor (is_pinned: {pinned.is_pinned()})", flush=True)
    time.sleep(0.5)  # a few samples of the observers with it held

    on_device = torch.empty(256 * MIB, dtype=torch.uint8, device="cuda")
    print(f"allocated {on_device.numel() // MIB} MiB on {torch.cuda.get_device_name()}", flush=True)

    loader = DataLoader(Samples(), batch_size=BATCH, num_workers=2, pin_memory=True)
    total = 0
    for batch in loader:
        batch.to("cuda", non_blocking=True)
        total += 1
    torch.cuda.synchronize()
    size = batch.numel() * batch.element_size() // MIB
    print(f"{total} batches of {size} MiB through a DataLoader with pin_memory=True and 2 workers",
          flush=True)

    del pinned
    time.sleep(0.5)
    print("dropped the 1 GiB tensor (PyTorch's host allocator keeps it cached and pinned)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
