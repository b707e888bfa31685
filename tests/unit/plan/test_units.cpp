// Units as typed and as printed: 1024-based KiB/MiB/GiB, 1000-based kB/MB/GB, and clear errors.
#include <gtest/gtest.h>

#include "plan/units.h"
#include "wisp/error.h"

namespace wisp::plan {
namespace {

constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;
constexpr std::uint64_t kMiB = 1024ull * 1024;

TEST(ParseSize, BinaryAndDecimalUnits) {
  EXPECT_EQ(parse_size("80GiB"), 80 * kGiB);
  EXPECT_EQ(parse_size("80 GiB"), 80 * kGiB);
  EXPECT_EQ(parse_size("1.5MiB"), 1572864u);
  EXPECT_EQ(parse_size("0.75 mib"), 786432u);
  EXPECT_EQ(parse_size("160GB"), 160000000000u);
  EXPECT_EQ(parse_size("3.125GiB"), 3355443200u);
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("2kB"), 2000u);
  EXPECT_EQ(parse_size("1TiB"), 1024 * kGiB);
  EXPECT_EQ(parse_size("819200"), 819200u);
  EXPECT_EQ(parse_size("819200 bytes"), 819200u);
  EXPECT_EQ(parse_size("26e9B"), 26000000000u);
  EXPECT_EQ(parse_size("0"), 0u);  // "no overhead" is a real answer
}

TEST(ParseSize, RejectsUnknownAmbiguousNegativeAndGarbage) {
  EXPECT_THROW(parse_size("80GiBs"), Error);
  EXPECT_THROW(parse_size("80 furlongs"), Error);
  EXPECT_THROW(parse_size("-4GiB"), Error);
  EXPECT_THROW(parse_size(""), Error);
  EXPECT_THROW(parse_size("GiB"), Error);
  EXPECT_THROW(parse_size("inf"), Error);
  EXPECT_THROW(parse_size("1e30GB"), Error);  // past 2^64 bytes
  try {
    parse_size("80G");
    FAIL() << "a bare G must be rejected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ambiguous"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GiB"), std::string::npos) << e.what();
  }
  try {
    parse_size("80 parsecs");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown unit 'parsecs'"), std::string::npos) << e.what();
  }
  try {
    parse_size("-4GiB");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("negative"), std::string::npos) << e.what();
  }
}

TEST(ParseBandwidth, RatesAreSizesPerSecond) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("3.35TB/s"), 3.35e12);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1000 GB/s"), 1e12);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1008GB/s"), 1.008e12);
  EXPECT_DOUBLE_EQ(parse_bandwidth("50GiB/s"), 50.0 * kGiB);
  EXPECT_DOUBLE_EQ(parse_bandwidth("100GBps"), 1e11);
  EXPECT_DOUBLE_EQ(parse_bandwidth("5e9"), 5e9);
  EXPECT_THROW(parse_bandwidth("3.35TB"), Error);  // a size, not a rate
  EXPECT_THROW(parse_bandwidth("3.35TX/s"), Error);
  EXPECT_THROW(parse_bandwidth("-1GB/s"), Error);
}

TEST(ParseFlops, PrefixedRates) {
  EXPECT_DOUBLE_EQ(parse_flops("100TFLOP/s"), 1e14);
  EXPECT_DOUBLE_EQ(parse_flops("100 TFLOPS"), 1e14);
  EXPECT_DOUBLE_EQ(parse_flops("989.5TFLOP/s"), 9.895e14);
  EXPECT_DOUBLE_EQ(parse_flops("2GFLOP/s"), 2e9);
  EXPECT_DOUBLE_EQ(parse_flops("1e14"), 1e14);
  EXPECT_THROW(parse_flops("100 TB/s"), Error);
}

TEST(ParseCount, PlainAndSuffixed) {
  EXPECT_DOUBLE_EQ(parse_count("13e9"), 13e9);
  EXPECT_DOUBLE_EQ(parse_count("13B"), 13e9);
  EXPECT_DOUBLE_EQ(parse_count("70b"), 70e9);
  EXPECT_DOUBLE_EQ(parse_count("135M"), 135e6);
  EXPECT_DOUBLE_EQ(parse_count("1.5k"), 1500.0);
  EXPECT_DOUBLE_EQ(parse_count("1T"), 1e12);
  EXPECT_THROW(parse_count("13 bananas"), Error);
  EXPECT_THROW(parse_count("-13e9"), Error);
  EXPECT_THROW(parse_count("thirteen"), Error);
}

TEST(Format, NumbersKeepSignificantDigitsWithoutNoise) {
  EXPECT_EQ(format_number(3.125), "3.125");
  EXPECT_EQ(format_number(12.5), "12.5");
  EXPECT_EQ(format_number(16.0), "16");
  EXPECT_EQ(format_number(0.75), "0.75");
  EXPECT_EQ(format_number(3.35e12 / 140e9, 3), "23.9");
  EXPECT_EQ(format_number(3.35e12 / 70e9, 3), "47.9");
  EXPECT_EQ(format_number(8 * 1000.0 / 35, 3), "229");
  EXPECT_EQ(format_number(1948.0 / 12), "162.3");
  EXPECT_EQ(format_number(0), "0");
}

TEST(Format, BytesStateTheirUnit) {
  EXPECT_EQ(format_bytes(1572864), "1.5 MiB");
  EXPECT_EQ(format_bytes(786432), "768 KiB");
  EXPECT_EQ(format_bytes(3355443200.0), "3.125 GiB");
  EXPECT_EQ(format_bytes(13107200), "12.5 MiB");
  EXPECT_EQ(format_bytes(2.5 * kGiB), "2.5 GiB");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(2621440000.0, UnitSystem::kDecimal), "2.621 GB");
  EXPECT_EQ(format_bytes(140e9, UnitSystem::kDecimal), "140 GB");
  EXPECT_EQ(format_bytes(3355443200.0, UnitSystem::kDecimal), "3.355 GB");
  EXPECT_EQ(format_bandwidth(3.35e12), "3.35 TB/s");
  EXPECT_EQ(format_flops(1e14), "100 TFLOP/s");
  EXPECT_EQ(format_count(13e9), "13 billion");
  EXPECT_EQ(format_count(42), "42");
  EXPECT_EQ(format_thousands(819200), "819,200");
  EXPECT_EQ(format_thousands(13107200), "13,107,200");
  EXPECT_EQ(format_thousands(999), "999");
  EXPECT_EQ(format_seconds(0.035), "35 ms");
  EXPECT_EQ(format_seconds(1.06496), "1.06 s");
  EXPECT_EQ(kMiB * 1024, kGiB);
}

}  // namespace
}  // namespace wisp::plan
