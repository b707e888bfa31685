#include "formats/strict_json.h"

#include <algorithm>
#include <set>
#include <vector>

#include "formats/message_text.h"
#include "wisp/error.h"

namespace wisp {
namespace {

using json = nlohmann::json;

// One open container while parsing; arrays have no keys but still count toward depth.
struct OpenContainer {
  bool is_object = false;
  std::string name;  // key under which this container sits in its parent ("" at top level / in arrays)
  std::set<std::string, std::less<>> keys;
  std::string last_key;
};

// nlohmann's messages start with "[json.exception.parse_error.101] "; the tag helps nobody.
// They also quote the bytes last read, which may be anything, hence the escaping.
std::string strip_nlohmann_tag(const char* what) {
  std::string msg = what;
  if (!msg.empty() && msg.front() == '[') {
    auto close = msg.find("] ");
    if (close != std::string::npos) msg.erase(0, close + 2);
  }
  return escape_for_message(msg);
}

}  // namespace

const char* json_type_name(const json& value) {
  if (value.is_number_integer() || value.is_number_float()) return "number";
  return value.type_name();
}

json parse_strict_json(std::string_view text, const std::string& file, const StrictJsonOptions& options) {
  std::vector<OpenContainer> stack;

  // Called by nlohmann as it reads; throwing here aborts the parse and unwinds cleanly.
  json::parser_callback_t check = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        if (static_cast<int>(stack.size()) >= options.max_depth) {
          throw Error(file + ": JSON nested deeper than " + std::to_string(options.max_depth) + " levels");
        }
        OpenContainer c;
        c.is_object = event == json::parse_event_t::object_start;
        if (!stack.empty() && stack.back().is_object) c.name = stack.back().last_key;
        stack.push_back(std::move(c));
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case json::parse_event_t::key: {
        if (stack.empty() || !parsed.is_string()) break;
        OpenContainer& top = stack.back();
        const std::string& key = parsed.get_ref<const std::string&>();
        if (!top.keys.insert(key).second) {
          std::string where = stack.size() == 1 ? "at top level" : "inside " + in_quotes(top.name);
          throw Error(file + ": duplicate JSON key " + in_quotes(key) + " " + where);
        }
        top.last_key = key;
        break;
      }
      case json::parse_event_t::value: break;
    }
    return true;
  };

  try {
    return json::parse(text.begin(), text.end(), check, /*allow_exceptions=*/true);
  } catch (const json::parse_error& e) {
    // e.byte counts from 1 at the first byte of `text`; report the absolute file offset.
    std::uint64_t at = options.base_offset + (e.byte > 0 ? e.byte - 1 : 0);
    throw Error(file + ": invalid JSON at byte offset " + std::to_string(at) + ": " + strip_nlohmann_tag(e.what()));
  } catch (const json::exception& e) {
    throw Error(file + ": invalid JSON: " + strip_nlohmann_tag(e.what()));
  }
}

}  // namespace wisp
