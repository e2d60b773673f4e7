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
                           "nvml_used_mib", "energy_j", "power_w"],
    "training": COMMON + ["precision", "batch", "height", "width", "optimizer",
                          "step_ms", "step_p10_ms", "step_p90_ms", "memory_mib",
                          "mem_reserved_mib", "energy_j", "power_w"],
    "llm": COMMON + ["runtime", "precision", "batch", "seq", "latency_ms",
                     "throughput_samples_s", "memory_mib",
                     "energy_per_sample_j", "power_w"],
}
RAW_KERNEL_COLS = COMMON + KERNEL_CONFIG + ["module", "aten"]
KERNEL_COLS = COMMON + KERNEL_CONFIG + ["nodes"]
FAIL_COLS = ["protocol", "batch_id", "hash", "model", "variant", "device",
             "stage", "reason"]
