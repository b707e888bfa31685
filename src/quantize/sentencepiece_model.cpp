// Protobuf wire format, only as far as sentencepiece_model.proto needs: varints (wire type 0),
// fixed32 (5, the float score), fixed64 (1, skipped) and length-delimited fields (2).
// Field numbers: ModelProto{1: pieces, 3: normalizer_spec}; SentencePiece{1: piece, 2: score,
// 3: type}; NormalizerSpec{3: add_dummy_prefix}.
#include "quantize/sentencepiece_model.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "wisp/error.h"

namespace wisp::quantize {

namespace {

class Reader {
 public:
  Reader(const std::uint8_t* p, std::size_t n, std::size_t base, const std::string& file)
      : p_(p), n_(n), base_(base), file_(file) {}
  bool done() const { return pos_ >= n_; }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      need(1);
      const std::uint8_t b = p_[pos_++];
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("varint longer than 10 bytes");
  }
  float fixed32() {
    need(4);
    float f;
    std::memcpy(&f, p_ + pos_, 4);  // little-endian on every platform wisp targets
    pos_ += 4;
    return f;
  }
  Reader sub() {
    const std::uint64_t len = varint();
    need(len);
    Reader r(p_ + pos_, static_cast<std::size_t>(len), base_ + pos_, file_);
    pos_ += static_cast<std::size_t>(len);
    return r;
  }
  void skip(int wire) {
    switch (wire) {
      case 0: varint(); break;
      case 1:
        need(8);
        pos_ += 8;
        break;
      case 2: sub(); break;
      case 5:
        need(4);
        pos_ += 4;
        break;
      default: fail("unsupported protobuf wire type " + std::to_string(wire));
    }
  }
  std::string str() {
    Reader s = sub();
    return std::string(reinterpret_cast<const char*>(s.p_), s.n_);
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(file_ + ": malformed SentencePiece model at byte " + std::to_string(base_ + pos_) + ": " + why);
  }

 private:
  void need(std::uint64_t k) const {
    if (k > n_ - pos_) fail("field runs past its end");
  }
  const std::uint8_t* p_;
  std::size_t n_, pos_ = 0, base_;
  const std::string& file_;
};

}  // namespace

SentencePieceModel read_sentencepiece_model(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(file + ": cannot open");
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SentencePieceModel m;
  Reader r(bytes.data(), bytes.size(), 0, file);
  while (!r.done()) {
    const std::uint64_t key = r.varint();
    const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
    if (field == 1 && wire == 2) {
      Reader p = r.sub();
      SentencePiece sp;
      while (!p.done()) {
        const std::uint64_t k = p.varint();
        const int f = static_cast<int>(k >> 3), w = static_cast<int>(k & 7);
        if (f == 1 && w == 2)
          sp.piece = p.str();
        else if (f == 2 && w == 5)
          sp.score = p.fixed32();
        else if (f == 3 && w == 0)
          sp.type = static_cast<int>(p.varint());
        else
          p.skip(w);
      }
      m.pieces.push_back(std::move(sp));
    } else if (field == 3 && wire == 2) {
      Reader n = r.sub();
      while (!n.done()) {
        const std::uint64_t k = n.varint();
        if ((k >> 3) == 3 && (k & 7) == 0)
          m.add_dummy_prefix = n.varint() != 0;
        else
          n.skip(static_cast<int>(k & 7));
      }
    } else {
      r.skip(wire);
    }
  }
  if (m.pieces.empty()) throw Error(file + ": SentencePiece model has no pieces");
  return m;
}

}  // namespace wisp::quantize
