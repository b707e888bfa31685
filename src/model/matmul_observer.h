// An activation-observer seam for calibration (`wisp quantize --calib`): a Backend decorator that
// shows every weight matmul's input rows to an observer before forwarding the op (unchanged, or
// with the weight the observer substitutes).
// Zero cost when unused: the normal forward pass never constructs one; the decorator is only put
// between a Transformer and its real backend by code that asks for it (model/activation_stats.h).
// Keyed by the weight's view (its data pointer identifies the tensor in the mapped file), so it
// does not depend on how the forward pass names or orders its steps.
#pragma once

#include <memory>

#include "model/backend.h"

namespace wisp::model {

class MatmulObserver {
 public:
  virtual ~MatmulObserver() = default;
  // x holds the rows about to be multiplied by w (valid only during the call).
  virtual void on_matmul(const kernels::MatrixView& w, Act x) = 0;
  // The weight to multiply with instead of w (after on_matmul), or null for w itself: the
  // converter's sequential GPTQ runs the source model with its already-quantized layers swapped in
  // (quantize/sequential_hessians.h). The view must stay valid until the matmul returns.
  virtual const kernels::MatrixView* substitute(const kernels::MatrixView& /*w*/) { return nullptr; }
};

// A backend that runs every op on `inner` and calls obs.on_matmul before each matmul. Both must
// outlive the returned backend.
std::unique_ptr<Backend> make_observing_backend(Backend& inner, MatmulObserver& obs);

}  // namespace wisp::model
