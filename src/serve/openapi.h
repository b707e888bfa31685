// GET /openapi.json: an OpenAPI 3.0 description of every route `wisp serve` answers, with the
// request schemas the parser enforces (types, ranges, required fields) and the error shape.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace wisp::serve {

nlohmann::json openapi_document(const std::string& model_name);

}  // namespace wisp::serve
