// Making untrusted text (tensor names, JSON keys, parser excerpts) safe to put in an error message.
// A name from a hostile file may hold a NUL (which would cut what() short), terminal control
// codes or bytes that are not UTF-8; those become visible \xNN escapes, everything else is kept.
#pragma once

#include <string>
#include <string_view>

namespace wisp {

// `text` with control characters, DEL and bytes outside well-formed UTF-8 written as \xNN
// (and a backslash as \\, so the escaping is unambiguous).
std::string escape_for_message(std::string_view text);

// escape_for_message(text) in single quotes (not "quoted": std::quoted would win by ADL): 'model.norm.weight'.
inline std::string in_quotes(std::string_view text) {
  std::string out = "'";  // appended piecewise: "'" + s + "'" trips a GCC 12 -Wrestrict false positive
  out += escape_for_message(text);
  out += '\'';
  return out;
}

}  // namespace wisp
