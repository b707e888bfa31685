// Helpers shared by the safetensors and HF-checkpoint tests: build safetensors images in memory,
// capture error messages, and make throwaway folders.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

#include "wisp/error.h"

// A namespace of its own: other test files define helpers in wisp::test, and two different inline
// definitions under one name would silently break the one-definition rule.
namespace wisp::st_test {

// An image of a safetensors file: 8-byte LE length, `header`, then `data_len` bytes of data.
// `declared_len` overrides the length field, to fake truncation and absurd sizes.
inline std::vector<std::uint8_t> safetensors_image(std::string_view header, std::size_t data_len,
                                                   std::uint64_t declared_len = UINT64_MAX) {
  std::uint64_t n = declared_len == UINT64_MAX ? header.size() : declared_len;
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  for (std::size_t i = 0; i < data_len; ++i) out.push_back(static_cast<std::uint8_t>(i * 7 + 1));
  return out;
}

// The wisp::Error message `fn` throws; fails the test if it throws nothing or something else.
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const wisp::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-wisp exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected a wisp::Error, nothing was thrown";
  return {};
}

inline void expect_mentions(const std::string& msg, std::initializer_list<std::string_view> parts) {
  for (auto part : parts) {
    EXPECT_NE(msg.find(part), std::string::npos) << "message lacks \"" << part << "\":\n  " << msg;
  }
}

// A fresh folder under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "wisp_st_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  void write(const std::string& name, std::string_view text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
  }
  void write(const std::string& name, const std::vector<std::uint8_t>& bytes) const {
    std::ofstream(path_ / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }

 private:
  std::filesystem::path path_;
};

}  // namespace wisp::st_test
