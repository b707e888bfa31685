// The headers every test suite precompiles once (tests/CMakeLists.txt, WISP_TEST_PCH): GoogleTest
// and the standard headers the tests use. Parsing these took about half of a small test file's
// compile time, in each of the ~90 test files.
// Only headers that never change with wisp's code belong here: a wisp header would rebuild the
// header and every test file whenever it is edited. nlohmann/json stays out too: precompiled, it
// still added ~4 s to every file (its templates are instantiated in each one), more than it saves in
// the dozen files that use it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
