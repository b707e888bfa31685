// Python str semantics over UTF-8 bytes. Jinja templates index, slice, measure and strip strings in
// code points with Python's rules (str.strip() knows Unicode whitespace, len('é') is 1), while wisp
// keeps every string as UTF-8. Bytes that are not valid UTF-8 survive a round trip unchanged: each
// one decodes to a lone surrogate U+DC80..U+DCFF and encodes back to itself (Python's
// "surrogateescape"), so a template never corrupts what the user typed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wisp::jinja::text {

std::u32string decode(std::string_view utf8);
std::string encode(std::u32string_view code_points);
void append_utf8(std::string& out, char32_t c);

// Number of code points (Python len()).
std::size_t length(std::string_view utf8);
bool is_ascii(std::string_view s);

// Python str.isspace() for one code point.
bool is_space(char32_t c);

// str.strip / lstrip / rstrip: without `chars`, Unicode whitespace; with it, any of its code points.
std::string strip(std::string_view s, bool left, bool right, std::optional<std::string_view> chars = std::nullopt);

// str.split(sep=None, maxsplit) and str.rsplit; maxsplit < 0 means no limit. Throws
// std::invalid_argument on an empty separator (Python's ValueError).
std::vector<std::string> split(std::string_view s, std::optional<std::string_view> sep, long maxsplit);
std::vector<std::string> rsplit(std::string_view s, std::optional<std::string_view> sep, long maxsplit);

// str.replace(old, new, count); count < 0 replaces all. An empty `old` inserts between code points.
std::string replace(std::string_view s, std::string_view old_text, std::string_view new_text, long count = -1);

// Case mapping covers ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic (the letters chat
// templates meet in role names and system prompts); other scripts pass through unchanged.
std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);       // str.title()
std::string capitalize(std::string_view s);  // str.capitalize()

}  // namespace wisp::jinja::text
