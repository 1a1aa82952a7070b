#!/usr/bin/env python3
"""The built-in copy of tools/device-colocation.sh: ResNet-50 from torchvision
with random weights (weights=None, nothing is downloaded), fp16, channels_last,
batch 1 at 224x224, under torch.inference_mode(); one request is one forward
pass and torch.cuda.synchronize().

The script's protocol: set up, warm up for VRAMSIM_COLOC_WARMUP seconds (at
least one request), create VRAMSIM_COLOC_READY_FILE, wait until
VRAMSIM_COLOC_START_FILE exists, run closed-loop requests for
VRAMSIM_COLOC_SECONDS, and print "requests=N seconds=S" as the last line.
"""
import os
import sys
import time

import torch
import torchvision


def main():
    seconds = float(os.environ.get("VRAMSIM_COLOC_SECONDS", "5"))
    warmup = float(os.environ.get("VRAMSIM_COLOC_WARMUP", "2"))
    ready_file = os.environ.get("VRAMSIM_COLOC_READY_FILE")
    start_file = os.environ.get("VRAMSIM_COLOC_START_FILE")
    if not ready_file or not start_file:
        print("colocation_resnet50.py: run by tools/device-colocation.sh "
              "(VRAMSIM_COLOC_READY_FILE and VRAMSIM_COLOC_START_FILE are not set)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("colocation_resnet50.py: torch.cuda.is_available() is False", file=sys.stderr)
        return 3
    dev = torch.device("cuda")
    model = torchvision.models.resnet50(weights=None).eval()
    model = model.to(dev).half().to(memory_format=torch.channels_last)
    x = torch.randn(1, 3, 224, 224, device=dev, dtype=torch.float16).contiguous(memory_format=torch.channels_last)

    with torch.inference_mode():
        def request():
            model(x)
            torch.cuda.synchronize(dev)

        request()
        end = time.perf_counter() + warmup
        while time.perf_counter() < end:
            request()
        with open(ready_file, "w"):
            pass
        while not os.path.exists(start_file):
            time.sleep(0.002)

        n = 0
        t0 = time.perf_counter()
        deadline = t0 + seconds
        now = t0
        while now < deadline:
            request()
            n += 1
            now = time.perf_counter()
    print(f"device={torch.cuda.get_device_name(dev)} index={os.environ.get('VRAMSIM_COLOC_INDEX', '0')} "
          f"memory_reserved_mib={torch.cuda.memory_reserved(dev) / (1 << 20):.0f}")
    print(f"requests={n} seconds={now - t0:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
