#include "ops/widen.h"

#include <vector>

#include "core/dtype_table.h"

namespace kiln::ops {
namespace {

bool reduced(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

template <class H>
void widen_into(const TensorImpl& src, TensorImpl& dst) {
  const H* in = src.as<H>();
  float* out = dst.as<float>();
  for (int64_t i = 0; i < src.num_elements; ++i) out[i] = static_cast<float>(in[i]);
}
template <class H>
void narrow_into(const TensorImpl& src, TensorImpl& dst) {
  const float* in = src.as<float>();
  H* out = dst.as<H>();
  for (int64_t i = 0; i < src.num_elements; ++i) out[i] = H(in[i]);
}

}  // namespace

void run_widened(KernelContext& c) {
  const KernelFn wide = c.op.kernels[static_cast<int>(DType::Float32)];
  if (!wide) throw InternalError(std::string(c.op.name) + " has no float32 kernel to widen");
  std::vector<Tensor> holders;  // the float32 copies, alive for the call
  std::vector<const TensorImpl*> inputs(c.inputs, c.inputs + c.num_inputs);
  for (int i = 0; i < c.num_inputs; ++i) {
    const TensorImpl& x = c.in(i);
    if (!reduced(x.dtype)) continue;
    holders.push_back(detail::wrap(detail::make_concrete(DType::Float32, x.dims)));
    TensorImpl& w = *detail::impl_of(holders.back());
    if (x.dtype == DType::Float16)
      widen_into<float16>(x, w);
    else
      widen_into<bfloat16>(x, w);
    inputs[i] = &w;
  }
  if (c.op.has(kOwnOutputs)) {
    // The kernel makes its outputs: its float32 ones are the 16-bit inputs' type computed
    // wide (a sorted segment sum), its others stay (Where's int64 coordinates).
    KernelContext wc{c.op, inputs.data(), c.num_inputs, c.outputs, c.num_outputs, c.attrs};
    wide(wc);
    DType narrow = DType::Float32;
    for (int i = 0; i < c.num_inputs; ++i)
      if (reduced(c.in(i).dtype)) narrow = c.in(i).dtype;
    for (int i = 0; i < c.num_outputs; ++i) {
      TensorImpl* w = c.outputs[i];
      if (!w || w->dtype != DType::Float32 || narrow == DType::Float32) continue;
      Tensor wide_out = detail::wrap(w);  // released once narrowed
      c.outputs[i] = detail::make_concrete(narrow, w->dims);
      if (narrow == DType::Float16)
        narrow_into<float16>(*w, *c.outputs[i]);
      else
        narrow_into<bfloat16>(*w, *c.outputs[i]);
    }
    return;
  }
  std::vector<TensorImpl*> outputs(c.outputs, c.outputs + c.num_outputs);
  for (int i = 0; i < c.num_outputs; ++i) {
    if (!reduced(c.out(i).dtype)) continue;
    holders.push_back(detail::wrap(detail::make_concrete(DType::Float32, c.out(i).dims)));
    outputs[i] = detail::impl_of(holders.back());
  }
  KernelContext wc{c.op, inputs.data(), c.num_inputs, outputs.data(), c.num_outputs, c.attrs};
  wide(wc);
  for (int i = 0; i < c.num_outputs; ++i) {
    if (outputs[i] == c.outputs[i]) continue;
    if (c.out(i).dtype == DType::Float16)
      narrow_into<float16>(*outputs[i], c.out(i));
    else
      narrow_into<bfloat16>(*outputs[i], c.out(i));
  }
}

}  // namespace kiln::ops
