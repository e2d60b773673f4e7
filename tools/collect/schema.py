"""Column lists of the dataset's label files (data/FORMAT.md), shared by the
GPU worker (measure.py writes raw batch files) and ingest.py (writes data/).
They differ only in kernels: the worker records the module path and ATen op
of each kernel, ingest maps those to ONNX node names."""

COMMON = ["protocol", "batch_id", "hash", "device", "rep", "status"]
KERNEL_CONFIG = ["mode", "sms", "precision", "batch", "seq", "height", "width",
                 "kernel_idx", "kernel", "duration_us", "grid", "block"]
LABEL_COLS = {
    "inference": COMMON + ["runtime", "precision", "batch", "seq", "height",
                           "width", "latency_ms", "latency_p10_ms",
                           "latency_p90_ms", "memory_mib", "mem_reserved_mib",
                           "nvml_used_mib", "energy_j", "power_w", "host_us"],
    "training": COMMON + ["precision", "batch", "height", "width", "optimizer",
                          "step_ms", "step_p10_ms", "step_p90_ms", "memory_mib",
                          "mem_reserved_mib", "energy_j", "power_w", "host_us"],
    "llm": COMMON + ["runtime", "precision", "batch", "seq", "latency_ms",
                     "throughput_samples_s", "memory_mib",
                     "energy_per_sample_j", "power_w"],
}
# peak memory re-measured for rows of earlier batches (ingest.py writes it
# over their memory_mib): `table` is inference, llm or training
MEMORY_COLS = COMMON + ["table", "runtime", "precision", "batch", "seq",
                        "height", "width", "memory_mib", "mem_reserved_mib",
                        "nvml_used_mib", "mem_base_mib"]
RAW_KERNEL_COLS = COMMON + KERNEL_CONFIG + ["module", "aten"]
KERNEL_COLS = COMMON + KERNEL_CONFIG + ["nodes"]
FAIL_COLS = ["protocol", "batch_id", "hash", "model", "variant", "device",
             "stage", "reason"]

# batches whose memory_mib included allocations left by earlier items of the
# same worker (data/README.md); their rows get re-measured values from
# `memory` rows of later batches, or a blank memory_mib
DEFECTIVE_MEMORY_BATCHES = ("20261126T034609", "20261126T035602",
                            "20261126T040436", "20261126T041300",
                            "20261126T043935")

# batches whose training-step time cap read the first step, which under
# autocast loads the half-precision kernels: their mixed-precision
# too_slow failures are no evidence (t33a: 49, alexnet's bf16 step at
# batch 8 among them, 17 ms in fp32; 48 of them were measured in rep 1);
# the planner does not count them
FIRST_STEP_CAP_BATCHES = ("20261130T081839",)


# error texts after which a CUDA context is broken for the rest of the
# process: every later item of the same worker fails at load. Batch h4a:
# one failed CUDA-graph capture left the RNG in capture mode and 474 items
# failed with "Offset increment outside graph capture encountered
# unexpectedly". The worker exits (the runner restarts it) and ingest does
# not mark such load failures done, so a later batch measures them.
BROKEN_CONTEXT = ("illegal", "CUDA error", "outside graph capture",
                  "during CUDA graph capture", "operation not permitted when stream is capturing")


def context_broken(err):
    """True when the error text err says the CUDA context is unusable."""
    return any(m in str(err) for m in BROKEN_CONTEXT)
