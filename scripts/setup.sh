#!/usr/bin/env bash
# Installs what dlperf needs from Debian 12 packages (idempotent).
# Build: gcc, make, pkg-config, OpenBLAS, cJSON, liblzma, XGBoost, libmicrohttpd,
# SQLite. Tests: clang (fuzzer, sanitizers), and Debian's CPU PyTorch,
# torchvision and onnx, used only as test oracles.
set -euo pipefail
PKGS="build-essential pkg-config clang libclang-rt-14-dev libopenblas-dev
libcjson-dev libzstd-dev zlib1g-dev liblzma-dev libxgboost-dev libmicrohttpd-dev libsqlite3-dev zstd
python3-torch python3-torchvision python3-onnx python3-numpy"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing$missing"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
echo "setup: dependencies present"
