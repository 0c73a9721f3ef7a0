// Recurrent layers: RNN, GRU, LSTM (layout 0: [seq, batch, input]; 1: batch first).
#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

Status recurrent_shape(ShapeContext& ctx, int64_t gates) {
  const TensorType& x = ctx.input(0);
  const TensorType& w = ctx.input(1);
  const std::string direction = ctx.attrs().get_string("direction", "forward");
  int64_t dirs;
  if (direction == "forward" || direction == "reverse") dirs = 1;
  else if (direction == "bidirectional") dirs = 2;
  else return ctx.fail("direction '%s' is not one of forward, reverse, bidirectional", direction.c_str());
  const int64_t layout = ctx.attrs().get_int("layout", 0);
  if (layout != 0 && layout != 1) return ctx.fail("layout %lld must be 0 or 1", ll(layout));
  if (x.has_rank() && x.rank() != 3) return ctx.fail("X %s must be 3-D", x.str().c_str());
  if (w.has_rank() && w.rank() != 3) return ctx.fail("W %s must be 3-D [num_directions, %lld*hidden, input]", w.str().c_str(), ll(gates));
  Dim hidden;
  if (ctx.attrs().has("hidden_size")) {
    const int64_t h = ctx.attrs().get_int("hidden_size", 0);
    if (h < 1) return ctx.fail("hidden_size %lld must be >= 1", ll(h));
    hidden = Dim(h);
  }
  if (w.has_rank()) {
    const Dim& d0 = (*w.shape)[0];
    if (d0.known() && d0.value != dirs)
      return ctx.fail("W %s has %lld directions; direction '%s' needs %lld", w.str().c_str(), ll(d0.value),
                      direction.c_str(), ll(dirs));
    const Dim& g = (*w.shape)[1];
    if (g.known()) {
      if (g.value % gates != 0) return ctx.fail("W %s dim 1 is not a multiple of %lld gates", w.str().c_str(), ll(gates));
      if (hidden.known() && hidden.value != g.value / gates)
        return ctx.fail("W %s does not match hidden_size %lld (%lld gates)", w.str().c_str(), ll(hidden.value), ll(gates));
      hidden = Dim(g.value / gates);
    }
  }
  Dim seq, batch;
  if (x.has_rank()) {
    seq = (*x.shape)[layout == 0 ? 0 : 1];
    batch = (*x.shape)[layout == 0 ? 1 : 0];
  }
  const DType dt = x.dtype;
  set_out(ctx, 0, dt, layout == 0 ? Shape{seq, dirs, batch, hidden} : Shape{batch, seq, dirs, hidden});
  const Shape state = layout == 0 ? Shape{dirs, batch, hidden} : Shape{batch, dirs, hidden};
  set_out(ctx, 1, dt, state);
  set_out(ctx, 2, dt, state);  // LSTM's Y_c
  return Status::Ok();
}

Status rnn_shape(ShapeContext& ctx) { return recurrent_shape(ctx, 1); }
Status gru_shape(ShapeContext& ctx) { return recurrent_shape(ctx, 3); }
Status lstm_shape(ShapeContext& ctx) { return recurrent_shape(ctx, 4); }

}  // namespace

OPENACL_REGISTER_OP(RNN).inputs(3, 6).outputs(0, 2).shape(rnn_shape);
OPENACL_REGISTER_OP(GRU).inputs(3, 6).outputs(0, 2).shape(gru_shape);
OPENACL_REGISTER_OP(LSTM).inputs(3, 8).outputs(0, 3).shape(lstm_shape);

}  // namespace openacl::graph::nn
