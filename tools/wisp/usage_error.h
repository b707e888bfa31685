// The error a `wisp` subcommand throws when the user typed something it cannot accept, and the
// exit status main() gives it (2, as getopt-style tools do; runtime failures exit 1).
#pragma once

#include "wisp/error.h"

namespace wisp::cli {

inline constexpr int kUsageExit = 2;

class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace wisp::cli
