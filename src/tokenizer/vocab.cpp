#include "tokenizer/vocab.h"

namespace wisp {

Vocab make_vocab_defaults(VocabModel model, const std::string& pre) {
  Vocab v;
  v.model = model;
  v.pre = pre;
  if (model == VocabModel::kSentencePiece) {
    // LLaMA-1/2 conventions, which llama.cpp assumes when an SPM file leaves these keys out.
    v.bos = 1;
    v.eos = 2;
    v.unk = 0;
    v.add_bos = true;
    v.add_space_prefix = true;
  } else {
    // Byte-level BPE files name their special tokens; llama.cpp's id-11 fallback is an artifact of
    // one old model, so a missing id stays missing here (adding a missing BOS is an error later).
    // Llama 3 style vocabularies add BOS unless the file says otherwise.
    v.add_bos = pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe" || pre == "falcon3" || pre == "tekken" ||
                pre == "chameleon";
  }
  return v;
}

}  // namespace wisp
