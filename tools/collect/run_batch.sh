#!/usr/bin/env bash
# One collector batch on the GPU machine (through the device tool):
#   tools/collect/run_batch.sh NAME [SECONDS] [run_batch.py options...]
# measures, exports and packs into $OUT/<batch_id>.tar.zst; then, here:
#   /usr/bin/python3 tools/collect/ingest.py /work/.device/.../<batch_id>.tar.zst*
set -u
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 CUDA_DEVICE_ORDER=PCI_BUS_ID
OUT=${OUT:-/tmp/collect_out}
mkdir -p "$OUT"
# exec: the device tool's timeout signals this process itself, and waits for
# it to pack (run_batch.stop_early_on_term)
exec python3 tools/collect/run_batch.py "$1" --seconds "${2:-500}" --out "$OUT" "${@:3}"
