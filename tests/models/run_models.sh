#!/bin/sh
# One case of tests/models under CTest:
#   run_models.sh PYTHON MAKER_PYTHON SCRIPT CASE ACCUM_RUN WORK
# PYTHON trains eagerly (its torch matches the build's LibTorch); MAKER_PYTHON
# (with transformers) makes the traced Transformers models. Skips (exit 77)
# when PYTHON has no torch.
python=$1 maker=$2 script=$3 case=$4 engine=$5 work=$6
if ! "$python" -c "import torch" 2>/dev/null; then
    echo "SKIP: $python cannot import torch (Debian's python3-torch for the 1.13 build;"
    echo "      the environment of scripts/setup-libtorch2.sh for a 2.x build)"
    exit 77
fi
export ACCUM_MAKER_PYTHON="$maker" OMP_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 \
       TRANSFORMERS_NO_ADVISORY_WARNINGS=1 PYTHONDONTWRITEBYTECODE=1 PYTHONWARNINGS=ignore
exec "$python" "$script" "$case" "$engine" "$work"
# SPDX-License-Identifier: GPL-3.0-or-later
