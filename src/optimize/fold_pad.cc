// fold_pad: a zero Pad of the spatial dims whose one user is a convolution with VALID (or
// EXPLICIT) padding becomes that convolution's explicit padding: Conv2D(Pad(x, p), f) ->
// Conv2D(x, f, padding="EXPLICIT", explicit_paddings=p). Keras's ZeroPadding2D before a
// strided convolution (MobileNetV2, EfficientNet, ResNet50's stem) is this pattern; the
// padded copy of the activation (a pass over memory, and a buffer) is gone, and the
// convolution reads zeros outside the image instead. TensorFlow's oneDNN graph rewrite fuses
// Pad into Conv2D the same way. The sums are those of the padded input, zeros and all: kiln's
// im2col kernels multiply the zeros as before; where a kernel skips the window's pixels
// outside the image instead (the grouped kernels, oneDNN), a skipped 0 x w term changes a sum
// only when w is infinite or NaN (0 x inf is NaN) or, for a zero sum, its sign.
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

// The conv rows' attr order (ops/conv.cc): strides, padding, explicit_paddings, data_format, ...
constexpr int kPadding = 1, kExplicitPaddings = 2, kDataFormat = 3;

// The Pad's [[0,0],[top,bottom],[left,right],[0,0]] as the conv's explicit_paddings order
// ([before, after] per dim, NHWC); empty when it pads the batch or channels or is not constant.
std::vector<int64_t> spatial_paddings(const Node& pad) {
  const ops::TensorImpl* t = pad.inputs[1].node->const_value();
  if (!t || t->num_elements != 8 || t->dims.size() != 2) return {};
  std::vector<int64_t> p = ops::int_values(*t);
  if (p.size() != 8 || p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0) return {};
  for (int64_t v : p)
    if (v < 0) return {};
  return p;
}

class FoldPad : public Pass {
 public:
  const char* name() const override { return "fold_pad"; }
  bool run(graph::Graph& g, const PassContext&) override {
    const int n = g.num_nodes();
    const UseCounts counts(g);
    Replacements repl;
    for (int id = 0; id < n; ++id) {
      Node& conv = *g.node(id);
      if ((conv.op != &op::Conv2D() && conv.op != &op::DepthwiseConv2dNative()) || !conv.control_inputs.empty())
        continue;
      const Node& pad = *conv.inputs[0].node;
      // Used once: not also the filter.
      if (pad.op != &op::Pad() || !counts.used_once(pad)) continue;
      const std::string& format = conv.attrs.s(kDataFormat);
      const std::string& padding = conv.attrs.s(kPadding);
      if (!(format.empty() || format == "NHWC") || (padding != "VALID" && padding != "EXPLICIT")) continue;
      std::vector<int64_t> p = spatial_paddings(pad);
      if (p.empty()) continue;
      if (padding == "EXPLICIT") {
        const std::vector<int64_t>& had = conv.attrs.list(kExplicitPaddings);
        if (had.size() != 8) continue;
        for (int k = 0; k < 8; ++k) p[k] += had[k];
      }
      ops::Attrs attrs = conv.attrs;
      attrs[kPadding] = std::string("EXPLICIT");
      attrs[kExplicitPaddings] = std::move(p);
      Node* folded = g.add_node(*conv.op, conv.name + "/pad_folded", {pad.inputs[0], conv.inputs[1]}, std::move(attrs));
      repl[{&conv, 0}] = Output{folded, 0};
    }
    g.replace_uses(repl);
    return !repl.empty();
  }
};

}  // namespace

std::unique_ptr<Pass> make_fold_pad() { return std::make_unique<FoldPad>(); }

}  // namespace kiln::optimize
