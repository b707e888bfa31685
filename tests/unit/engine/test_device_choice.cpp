// EngineOptions::device on a machine without a CUDA device (every CI machine): "cpu" and "auto"
// run on the CPU and say so, "cuda" is a clear error (built without CUDA, or no device), and a
// name that is no device is refused naming the accepted ones.
#include <gtest/gtest.h>

#include <string>

#include "../model/tiny_model.h"
#include "wisp/engine.h"
#include "wisp/error.h"
#include "wisp/model.h"

namespace wisp {
namespace {

std::shared_ptr<const Model> tiny() {
  static const std::shared_ptr<const Model> m = Model::load(test::write_tiny_model({}, "device_choice.gguf"));
  return m;
}

std::string error_of(const std::string& device) {
  try {
    Engine::create(tiny(), {.n_threads = 1, .kv_tokens = 64, .device = device});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceChoice, CpuAndAutoRunOnTheCpu) {
  EXPECT_EQ(Engine::create(tiny(), {.n_threads = 1, .kv_tokens = 64, .device = "cpu"})->device(), "cpu");
  const std::string automatic = Engine::create(tiny(), {.n_threads = 1, .kv_tokens = 64})->device();
  if (automatic != "cpu") GTEST_SKIP() << "this machine has a CUDA device: " << automatic;
  EXPECT_EQ(automatic, "cpu");
}

TEST(DeviceChoice, CudaWithoutADeviceIsAClearError) {
  if (Engine::create(tiny(), {.n_threads = 1, .kv_tokens = 64})->device() != "cpu") {
    GTEST_SKIP() << "this machine has a CUDA device";
  }
  for (const char* name : {"cuda", "cuda:0", "cuda:3"}) {
    const std::string e = error_of(name);
    EXPECT_NE(e.find(std::string("device '") + name + "'"), std::string::npos) << e;
    const bool says_why =
        e.find("built without CUDA") != std::string::npos || e.find("CUDA device") != std::string::npos;
    EXPECT_TRUE(says_why) << e;
  }
}

TEST(DeviceChoice, UnknownNamesAreRefused) {
  for (const char* name : {"gpu", "cuda:", "cuda:x", "cuda:-1", "cudaa", "CPU"}) {
    const std::string e = error_of(name);
    EXPECT_NE(e.find(std::string("device '") + name + "'"), std::string::npos) << name << ": " << e;
    EXPECT_NE(e.find("expected cpu, cuda, cuda:N or auto"), std::string::npos) << name << ": " << e;
  }
}

}  // namespace
}  // namespace wisp
