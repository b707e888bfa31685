// GPT-2's bytes_to_unicode alphabet: byte-level BPE vocabularies spell every byte as a printable
// code point (printable Latin-1 bytes as themselves, the rest as U+0100.. in byte order), so that
// tokens never contain whitespace or control characters. "Ġ" (U+0120) is the space byte.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wisp {

class ByteLevelAlphabet {
 public:
  ByteLevelAlphabet();

  // The code point that spells byte `b`.
  char32_t code_point(std::uint8_t b) const { return byte_to_cp_[b]; }
  // Its UTF-8 spelling, as it appears inside vocabulary strings.
  const std::string& spelling(std::uint8_t b) const { return byte_to_utf8_[b]; }
  // The byte a code point spells, or nullopt for code points outside the alphabet.
  std::optional<std::uint8_t> byte_of(char32_t cp) const;

  // Raw bytes -> alphabet spelling (what BPE merges operate on).
  void encode(std::string_view bytes, std::string& out) const;
  // Alphabet spelling -> raw bytes. Code points outside the alphabet are copied through as UTF-8
  // (a malformed vocabulary entry decodes to itself rather than disappearing).
  std::string decode(std::string_view spelled) const;

 private:
  std::array<char32_t, 256> byte_to_cp_{};
  std::array<std::string, 256> byte_to_utf8_{};
  std::array<std::int16_t, 324> cp_to_byte_{};  // all alphabet code points are < 0x144
};

}  // namespace wisp
