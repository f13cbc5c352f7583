#!/usr/bin/env bash
# Installs what Flint's tests and examples need on a fresh Debian/Ubuntu machine with no GPU:
# Mesa's lavapipe (a software Vulkan device) and the Vulkan loader. Safe to re-run.
set -euo pipefail

have_lavapipe() {
  ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1
}

if have_lavapipe; then
  echo "setup: lavapipe (mesa-vulkan-drivers) is installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: lavapipe is missing and this is not a Debian-like system." >&2
  echo "setup: install Mesa's Vulkan drivers (lavapipe) with your package manager, then re-run." >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "setup: need root (or sudo) to run: apt-get install mesa-vulkan-drivers libvulkan1" >&2
    exit 1
  fi
fi

echo "setup: installing mesa-vulkan-drivers (software Vulkan for the GPU tests)"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null

if ! have_lavapipe; then
  echo "setup: mesa-vulkan-drivers installed but no lavapipe ICD under /usr/share/vulkan/icd.d" >&2
  exit 1
fi
echo "setup: done"
