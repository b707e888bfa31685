// The headers every test suite precompiles once (tests/CMakeLists.txt, WISP_TEST_PCH): GoogleTest
// and the standard headers the tests use. Parsing these cost each of the ~85 test files ~2 s of
// CPU, about half of a small one's compile.
// Only headers that never change with wisp's code belong here: a wisp header would rebuild the
// header and every test file whenever it is edited. nlohmann/json stays out too: precompiled, it
// made a small test file's compile ~60% slower (7 s -> 11.5 s, alternated, under the same load;
// its templates are instantiated in each file), more than the dozen files using it would gain.
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
