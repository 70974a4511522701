#!/bin/sh
# One case of the peers suite under CTest: run_peer.sh VENV ACCUM_RUN SCRIPT CASE WORK.
# Skips (exit 77) where the torch 2.11 virtual environment has not been made.
venv=$1 engine=$2 script=$3 case=$4 work=$5
if [ ! -x "$venv/bin/python" ]; then
    echo "SKIP: no torch 2.11 virtual environment at $venv (the real torch, Accelerate and Transformers);"
    echo "      run scripts/setup-libtorch2.sh to make it"
    exit 77
fi
if ! "$venv/bin/python" -c "import torch, accelerate, transformers" 2>/dev/null; then
    echo "SKIP: $venv/bin/python cannot import torch, accelerate and transformers; run scripts/setup-libtorch2.sh"
    exit 77
fi
rm -rf "$work"
export ACCUM_RUN="$engine" OMP_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 \
       TRANSFORMERS_NO_ADVISORY_WARNINGS=1 PYTHONDONTWRITEBYTECODE=1 PYTHONWARNINGS=ignore
exec "$venv/bin/python" "$script" "$case" --work "$work"
# SPDX-License-Identifier: GPL-3.0-or-later
