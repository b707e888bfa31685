// JSON parsing for the files wisp reads from checkpoints (safetensors headers, config.json,
// model.safetensors.index.json). Stricter than plain nlohmann::json::parse in two ways that matter
// for untrusted input: a duplicate key in any object is an error (nlohmann would silently keep the
// last one, so two readers could disagree on which tensor a name means), and nesting is bounded.
// Every failure is a wisp::Error naming the file and, for syntax errors, the byte offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace wisp {

struct StrictJsonOptions {
  std::uint64_t base_offset = 0;  // where `text` starts in the file, so offsets are file offsets
  int max_depth = 64;             // objects and arrays nested deeper than this are rejected
};

// Parses `text`; `file` names the source in error messages. Invalid UTF-8 in strings is rejected.
nlohmann::json parse_strict_json(std::string_view text, const std::string& file, const StrictJsonOptions& options = {});

// The JSON type name as a reader would say it ("object", "string", "number", ...).
const char* json_type_name(const nlohmann::json& value);

}  // namespace wisp
