// GET /openapi.json: an OpenAPI 3.0 description of every route `wisp serve` answers, with the
// request schemas the parser enforces (types, ranges, required fields), the answers' shapes and the
// error shape.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "serve/api.h"

namespace wisp::serve {

// `ctx`: the loaded model's limits (token ids below its vocabulary, choices per request); null while
// the model loads (the document then leaves the vocabulary's bound out).
nlohmann::json openapi_document(const std::string& model_name, const ApiContext* ctx);

}  // namespace wisp::serve
