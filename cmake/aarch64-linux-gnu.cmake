# CMake toolchain for cross-building to 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu.
# Used by tests/arm/ (the NEON kernel tests, run under qemu-aarch64 by scripts/test):
#   cmake -S tests/arm -B build-arm -G Ninja --toolchain cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Libraries and headers come from the cross sysroot only (the host's /usr/include is x86-64's);
# programs (ninja, qemu) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Runs the test binaries (and gtest's test discovery) through user-mode QEMU; -L points it at
# the cross sysroot's dynamic loader and libraries, so no binfmt registration is needed.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
