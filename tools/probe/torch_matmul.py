#!/usr/bin/env python3
"""The probe's fp16 products through PyTorch (torch.matmul on CUDA), measured
the way vramsim-probe measures them, for tools/device-probe.sh.

For each N: A and B are N x N fp16 with values k/1024, k in [-1024, 1024] (the
probe's value set), C = torch.matmul(A, B, out=C); untimed matmuls for at least
--warmup-ms, then --samples samples of at least --sample-ms (and at least 10
matmuls) between two CUDA events; the median is reported. Peak memory is
torch.cuda.max_memory_allocated() over the run, reset once A and B exist: the
tensors PyTorch's caching allocator handed out (A, B, C and cuBLAS workspace
it allocates through the allocator), not the CUDA context. Writes one line of
JSON per N to OUT_DIR/torch-N.json.
"""
import argparse
import json
import math
import statistics
import sys

import torch

MIB = 1 << 20


def measure(n, args, dev):
    gen = torch.Generator(device=dev).manual_seed(n)
    a = torch.randint(-1024, 1025, (n, n), generator=gen, device=dev, dtype=torch.int32).to(torch.float16) / 1024
    b = torch.randint(-1024, 1025, (n, n), generator=gen, device=dev, dtype=torch.int32).to(torch.float16) / 1024
    torch.cuda.synchronize(dev)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(dev)
    c = torch.empty((n, n), device=dev, dtype=torch.float16)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)

    def timed(count):
        start.record()
        for _ in range(count):
            torch.matmul(a, b, out=c)
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop)

    # Untimed batches of about 50 ms, at least one, the last calibrating.
    warm_ms, batch, ms_per = 0.0, 1, 0.0
    while True:
        ms = timed(batch)
        warm_ms += ms
        ms_per = ms / batch
        batch = max(1, math.ceil(50.0 / ms_per)) if ms_per > 0 else 1
        if warm_ms >= args.warmup_ms:
            break
    per_sample = max(10, math.ceil(args.sample_ms / ms_per)) if ms_per > 0 else 10
    tflops = []
    for _ in range(args.samples):
        ms = timed(per_sample)
        tflops.append(2.0 * n ** 3 * per_sample / (ms / 1e3) / 1e12)

    # 16 rows of the timed output against an fp32 product on the device.
    ref = a[:16].float() @ b.float()
    got = c[:16].float()
    rms = ref.pow(2).mean().sqrt()
    worst = ((got - ref).abs() / (ref.abs() + rms)).max().item()
    return {
        "gpu": torch.cuda.get_device_name(dev),
        "n": n,
        "matmul_tflops": round(statistics.median(tflops), 1),
        "tflops_min": round(min(tflops), 1),
        "tflops_max": round(max(tflops), 1),
        "iterations": per_sample,
        "samples": args.samples,
        "max_memory_allocated_mb": math.ceil(torch.cuda.max_memory_allocated(dev) / MIB),
        "max_memory_reserved_mb": math.ceil(torch.cuda.max_memory_reserved(dev) / MIB),
        "check_scaled_error": worst,
        "check_ok": worst <= 1.0 / 256.0,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "allow_fp16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="4096 8192 16384")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--sample-ms", type=float, default=200.0)
    ap.add_argument("--warmup-ms", type=float, default=2000.0)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_matmul.py: torch.cuda.is_available() is False", file=sys.stderr)
        return 3
    dev = torch.device("cuda:0")
    status = 0
    for n in (int(s) for s in args.sizes.split()):
        try:
            result = measure(n, args, dev)
        except torch.cuda.OutOfMemoryError as e:
            result = {"n": n, "error": "out of memory: " + str(e).splitlines()[0]}
            status = 6
        torch.cuda.empty_cache()
        with open(f"{args.out_dir}/torch-{n}.json", "w") as out:
            out.write(json.dumps(result, separators=(",", ":")) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
