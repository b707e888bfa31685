// Quantities with units, as people type them on a command line and as wisp prints them:
// sizes ("80GiB", "160 GB"), bandwidths ("3.35TB/s"), compute rates ("100TFLOP/s") and plain
// counts ("13e9", "70B"). KiB/MiB/GiB/TiB are 1024-based, KB/MB/GB/TB 1000-based; a bare "G" or
// "M" is rejected as ambiguous so that a budget is never silently off by 7%.
// Every parse error is a wisp::Error that quotes the text at fault.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wisp::plan {

// How sizes are printed: Binary (KiB, MiB, GiB: what memory and GPUs report) by default,
// Decimal (kB, MB, GB: what bandwidth specs and some worked examples use) when asked.
enum class UnitSystem { kBinary, kDecimal };

// "80GiB" -> 85899345920. A bare number is bytes; fractions of a byte round to nearest. Zero is
// allowed (e.g. no overhead); negative values, values past 2^64 and unknown units are errors.
std::uint64_t parse_size(std::string_view text);
// "3.35TB/s" -> 3.35e12 bytes per second. The size units of parse_size followed by "/s".
double parse_bandwidth(std::string_view text);
// "100TFLOP/s", "100 TFLOPS", "1e14" -> floating-point operations per second.
double parse_flops(std::string_view text);
// "13e9", "13B", "135M", "7.5k" -> a count (K thousand, M million, B billion, T trillion).
double parse_count(std::string_view text);

// Numbers for people: `significant` digits, fixed notation, trailing zeros trimmed
// (3.125, 12.5, 23.9, 229). Values at or above 10^significant print as whole numbers.
std::string format_number(double value, int significant = 4);
// 819200 -> "819,200": exact byte counts stay readable.
std::string format_thousands(std::uint64_t value);
// "3.125 GiB" / "2.621 GB": the largest unit the value reaches, the unit always stated.
std::string format_bytes(double bytes, UnitSystem units = UnitSystem::kBinary);
// "3.35 TB/s" / "3.047 TiB/s".
std::string format_bandwidth(double bytes_per_second, UnitSystem units = UnitSystem::kDecimal);
// "100 TFLOP/s".
std::string format_flops(double flops_per_second);
// "13 billion", "135 million".
std::string format_count(double count);
// "1.23 s", "45.6 ms", "12 us".
std::string format_seconds(double seconds);

}  // namespace wisp::plan
