# A Debian package of what `cmake --install` installs: `cpack -G DEB` in the
# build tree (it reuses the build; nothing is rebuilt). The dependencies come
# from dpkg-shlibdeps (Debian's dpkg-dev) reading the programs' libraries.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME accum-studio)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The Accumulate Studio authors")
set(CPACK_PACKAGE_CONTACT "${ACCUM_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "desktop studio for gradient accumulation")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # accum-studio_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${ACCUM_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The default experiment's data, and a BLAS 25 times faster than the reference one.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dataset-fashion-mnist, libopenblas0-pthread")
# The extended description; CPack puts the summary above it and indents it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "A large batch gives a steadier gradient, but device memory limits the batch.
Gradient accumulation splits one large batch into micro-batches, adds up
their gradients and updates the model once per window.

Accumulate Studio shows this while it happens: set the micro-batch size and
the number of accumulation steps, pick a plain PyTorch loop, an
Accelerate-style Accelerator or a Transformers-style Trainer, and watch the
loss, memory and speed of a real LibTorch training run, with the loop's code
lit line by line. An equivalence lab runs the styles and batch shapes side by
side, with one-click demos of the classic pitfalls.

The package also contains accum-run, the same engine headless.")
include(CPack)
# SPDX-License-Identifier: GPL-3.0-or-later
