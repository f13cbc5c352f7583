#!/usr/bin/env bash
# Device call: flint through Vulkan on the GPU machine (which has the NVIDIA ICD but neither
# the Vulkan loader nor glvnd, without which the ICD hands the loader no `vkCreateInstance`).
# Prepare here, once:
#   mkdir -p carry/gl /tmp/amd64/partial; o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#   apt-get $o update
#   (cd carry/gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
#   cargo build --release -p flint-benches --features cuda,vulkan --bin attention_bench --bin cmma_probe
#   cp target/release/{attention_bench,cmma_probe} carry/
# then run `bash scripts/device/vulkan.sh` with `carry` carried. Prints the cooperative-matrix
# probe (CUDA and Vulkan) and the f16 forward through Vulkan, checked against Burn's attention.
set -u
cd "$(dirname "$0")/../.."
for f in carry/gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export FLINT_CACHE_DIR=$(mktemp -d)
timeout 90 carry/cmma_probe 4096 10
timeout 150 carry/attention_bench --wgpu --check --dtype f16 --dims 64,128 \
  --seqs 1024,4096 --iters 5
