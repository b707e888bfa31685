// The parts of a SentencePiece `tokenizer.model` (a serialized sentencepiece ModelProto) that a
// GGUF "llama" vocabulary needs: every piece with its score and type, and whether the normalizer
// adds a dummy prefix space. A small protobuf reader of our own, so wisp needs no protobuf library.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace wisp::quantize {

struct SentencePiece {
  std::string piece;
  float score = 0.0f;
  int type = 1;  // ModelProto.SentencePiece.Type: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
};

struct SentencePieceModel {
  std::vector<SentencePiece> pieces;  // in id order
  bool add_dummy_prefix = true;       // NormalizerSpec default
};

// Throws wisp::Error naming the file and byte offset on malformed input.
SentencePieceModel read_sentencepiece_model(const std::filesystem::path& path);

}  // namespace wisp::quantize
