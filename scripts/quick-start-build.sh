#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Configures the quick start's build folder (LibTorch 1.13 from Debian) with the
# one set of arguments that both the run command (scripts/setup.sh) and the test
# command (scripts/run-tests.sh, part 2) use: the same compiler flags, so that
# neither rebuilds what the other built. Builds nothing; the callers build the
# targets they need. Extra arguments go to the configure step.
#  - ACCUM_WARNINGS_AS_ERRORS: a warning in the project's code fails the build
#    (Debian 12's compiler, the only one the quick start supports, gives none).
#  - CMAKE_SKIP_INSTALL_ALL_DEPENDENCY: the package (scripts/check-install.sh)
#    installs what is built without first building every other target.
# Usage: scripts/quick-start-build.sh BUILD_DIR [CMAKE_ARGS...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$1"; shift
ACCUM_CONFIGURE_ONLY=1 "$ROOT/scripts/cmake-build.sh" "$BUILD_DIR" \
  -DACCUM_WARNINGS_AS_ERRORS=ON -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON "$@"
