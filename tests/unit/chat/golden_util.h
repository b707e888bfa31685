// Shared loading of tests/golden/chat (written by scripts/gen_golden_chat.py).
#pragma once

#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace wisp::chat_test {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string golden_dir() { return std::string(WISP_GOLDEN_DIR) + "/chat"; }

// ordered_json: the contexts' dict order is part of what the templates see (tojson prints it).
inline const nlohmann::ordered_json& golden() {
  static const nlohmann::ordered_json g = nlohmann::ordered_json::parse(read_file(golden_dir() + "/renders.json"));
  return g;
}

inline std::string template_source(const std::string& name) {
  return read_file(golden_dir() + "/templates/" + golden()["templates"][name]["file"].get<std::string>());
}

// The fixed clock the golden renders used ("now": "YYYY-MM-DDTHH:MM:SS").
inline std::tm golden_now() {
  const std::string iso = golden()["now"].get<std::string>();
  std::tm tm{};
  tm.tm_year = std::stoi(iso.substr(0, 4)) - 1900;
  tm.tm_mon = std::stoi(iso.substr(5, 2)) - 1;
  tm.tm_mday = std::stoi(iso.substr(8, 2));
  tm.tm_hour = std::stoi(iso.substr(11, 2));
  tm.tm_min = std::stoi(iso.substr(14, 2));
  tm.tm_sec = std::stoi(iso.substr(17, 2));
  const std::time_t t = timegm(&tm);  // fills in weekday and day of the year
  gmtime_r(&t, &tm);
  return tm;
}

}  // namespace wisp::chat_test
