// The one source of wisp_test_pch (tests/CMakeLists.txt): CMake compiles a target's precompiled
// header only for a target with sources, and the test suites reuse this target's header.
#include "tests/support/pch.h"
