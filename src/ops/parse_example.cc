// KilnParseExample: tf.io.parse_example / parse_single_example over serialized
// tf.train.Example protos (TensorFlow's ParseExampleV2, with kiln's attr encoding).
//   inputs:  serialized (string, a scalar or a vector), dense_keys (string vector),
//            sparse_keys (string vector), dense_defaults (one tensor per dense key; an empty
//            one: the feature is required)
//   attrs:   dense_types, sparse_types (dtype numbers: int64, float32 or string);
//            dense_shapes (per dense key: its rank then its dims; a first dim of -1 is a
//            FixedLenSequenceFeature: any count of rows, padded across the batch)
//   outputs: per sparse key its indices, values and dense_shape, then per dense key its value
// The protos are parsed by hand (the wire format of example.proto and feature.proto) and
// treated as hostile: every length is checked, and a malformed proto is InvalidArgumentError.
// kInternal: a graph with it is not saved (TensorFlow's own row takes list(type) attrs, which
// kiln's rows do not have yet).
#include <cstring>
#include <functional>
#include <map>

#include "core/buffer.h"
#include "core/object_value.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kDenseTypes = attr_index(op::KilnParseExample(), "dense_types");
const int kSparseTypes = attr_index(op::KilnParseExample(), "sparse_types");
const int kDenseShapes = attr_index(op::KilnParseExample(), "dense_shapes");

// The values of one feature as the proto holds them.
struct FeatureValues {
  DType kind = DType::Float32;  // Int64, Float32 or String (bytes_list)
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string_view> bytes;
  int64_t size() const {
    return kind == DType::Int64     ? static_cast<int64_t>(ints.size())
           : kind == DType::Float32 ? static_cast<int64_t>(floats.size())
                                    : static_cast<int64_t>(bytes.size());
  }
};

class Wire {
 public:
  explicit Wire(std::string_view d) : d_(d) {}
  bool done() const { return pos_ >= d_.size(); }
  bool varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= d_.size()) return false;
      const auto b = static_cast<unsigned char>(d_[pos_++]);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  // The next field; its payload in *payload for length-delimited fields, *number/*wire set.
  bool field(uint32_t* number, int* wire, std::string_view* payload, uint64_t* scalar) {
    uint64_t key;
    if (!varint(&key)) return false;
    *number = static_cast<uint32_t>(key >> 3);
    *wire = static_cast<int>(key & 7);
    if (*number == 0) return false;
    switch (*wire) {
      case 0:
        return varint(scalar);
      case 1:
        return skip(8, payload);
      case 5:
        return skip(4, payload);
      case 2: {
        uint64_t n;
        if (!varint(&n) || n > d_.size() - pos_) return false;
        return skip(static_cast<size_t>(n), payload);
      }
      default:
        return false;
    }
  }

 private:
  bool skip(size_t n, std::string_view* payload) {
    if (n > d_.size() - pos_) return false;
    *payload = d_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  std::string_view d_;
  size_t pos_ = 0;
};

bool parse_list(std::string_view data, DType kind, FeatureValues* out) {
  out->kind = kind;
  Wire w(data);
  while (!w.done()) {
    uint32_t n;
    int wire;
    std::string_view p;
    uint64_t v = 0;
    if (!w.field(&n, &wire, &p, &v)) return false;
    if (n != 1) continue;
    if (kind == DType::String) {
      if (wire != 2) return false;
      out->bytes.push_back(p);
    } else if (kind == DType::Float32) {
      if (wire == 5) {
        float f;
        std::memcpy(&f, p.data(), 4);
        out->floats.push_back(f);
      } else if (wire == 2) {
        if (p.size() % 4) return false;
        for (size_t i = 0; i < p.size(); i += 4) {
          float f;
          std::memcpy(&f, p.data() + i, 4);
          out->floats.push_back(f);
        }
      } else {
        return false;
      }
    } else {
      if (wire == 0) {
        out->ints.push_back(static_cast<int64_t>(v));
      } else if (wire == 2) {
        Wire packed(p);
        while (!packed.done()) {
          uint64_t x;
          if (!packed.varint(&x)) return false;
          out->ints.push_back(static_cast<int64_t>(x));
        }
      } else {
        return false;
      }
    }
  }
  return true;
}

// Example -> key -> values (the last entry of a key wins, as in protobuf maps).
bool parse_example(std::string_view data, std::map<std::string_view, FeatureValues>* out) {
  Wire example(data);
  while (!example.done()) {
    uint32_t n;
    int wire;
    std::string_view features;
    uint64_t v;
    if (!example.field(&n, &wire, &features, &v)) return false;
    if (n != 1 || wire != 2) continue;
    Wire fw(features);
    while (!fw.done()) {
      std::string_view entry;
      if (!fw.field(&n, &wire, &entry, &v)) return false;
      if (n != 1 || wire != 2) continue;
      std::string_view key, feature;
      Wire ew(entry);
      while (!ew.done()) {
        std::string_view p;
        if (!ew.field(&n, &wire, &p, &v)) return false;
        if (n == 1 && wire == 2) key = p;
        if (n == 2 && wire == 2) feature = p;
      }
      FeatureValues values;
      values.kind = DType::Variant;  // an empty Feature: no list at all
      Wire lw(feature);
      while (!lw.done()) {
        std::string_view p;
        if (!lw.field(&n, &wire, &p, &v)) return false;
        if (wire != 2 || n < 1 || n > 3) continue;
        values = FeatureValues();
        const DType kind = n == 1 ? DType::String : n == 2 ? DType::Float32 : DType::Int64;
        if (!parse_list(p, kind, &values)) return false;
      }
      (*out)[key] = std::move(values);
    }
  }
  return true;
}

const char* kind_name(DType d) { return d == DType::Int64 ? "int64" : d == DType::Float32 ? "float" : "string"; }

struct DenseSpec {
  DType dtype;
  std::vector<int64_t> dims;  // dims[0] == -1: a sequence feature
  int64_t row_elements = 1;   // elements per row of a sequence feature, or in all
  bool sequence() const { return !dims.empty() && dims[0] < 0; }
};

std::vector<DenseSpec> dense_specs(const std::vector<int64_t>& types, const std::vector<int64_t>& shapes,
                                   const std::function<void(const std::string&)>& fail) {
  std::vector<DenseSpec> out;
  size_t at = 0;
  for (int64_t t : types) {
    DenseSpec s{.dtype = static_cast<DType>(t), .dims = {}};
    if (at >= shapes.size()) fail("dense_shapes is shorter than dense_types");
    const int64_t rank = shapes[at++];
    if (rank < 0 || rank > 32 || at + static_cast<size_t>(rank) > shapes.size()) fail("dense_shapes is malformed");
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t dim = shapes[at++];
      if (dim < -1 || (dim == -1 && d > 0)) fail("dense_shapes: only the first dim may be unknown");
      s.dims.push_back(dim);
      if (dim >= 0) s.row_elements = kiln::checked_mul(s.row_elements, dim, "a dense feature's size");
    }
    out.push_back(std::move(s));
  }
  if (at != shapes.size()) fail("dense_shapes is longer than dense_types");
  return out;
}

void check_types(const std::vector<int64_t>& types, const std::function<void(const std::string&)>& fail) {
  for (int64_t t : types)
    if (t != static_cast<int64_t>(DType::Int64) && t != static_cast<int64_t>(DType::Float32) &&
        t != static_cast<int64_t>(DType::String))
      fail("Example features are int64, float32 or string");
}

// The number of elements of an input whose shape is fully known; -1 otherwise.
int64_t known_elements(const InputInfo& in) {
  if (in.unknown_rank) return -1;
  int64_t n = 1;
  for (int64_t d : *in.dims) {
    if (d < 0) return -1;
    n = kiln::checked_mul(n, d, "an input's size");
  }
  return n;
}

void infer_parse_example(InferContext& c) {
  // The row is variadic (one default per dense key): the three fixed inputs are checked to be
  // there before they are read.
  if (c.num_inputs < 3) c.fail("KilnParseExample takes serialized, dense_keys, sparse_keys and the dense defaults");
  require_string_input(c, 0);
  require_string_input(c, 1);
  require_string_input(c, 2);
  const auto& dtypes = c.attrs.list(kDenseTypes);
  const auto& stypes = c.attrs.list(kSparseTypes);
  auto fail = [&](const std::string& m) { c.fail(m); };
  check_types(dtypes, fail);
  check_types(stypes, fail);
  const auto specs = dense_specs(dtypes, c.attrs.list(kDenseShapes), fail);
  if (c.num_inputs != 3 + static_cast<int>(specs.size())) c.fail("KilnParseExample takes one default per dense key");
  // Checked here, not only by the kernel, so a graph whose outputs go unused (and whose node is
  // pruned) fails as the eager op does.
  const int64_t dense_keys = known_elements(c.in(1)), sparse_keys = known_elements(c.in(2));
  if ((dense_keys >= 0 && dense_keys != static_cast<int64_t>(specs.size())) ||
      (sparse_keys >= 0 && sparse_keys != static_cast<int64_t>(stypes.size())))
    c.fail("the keys do not match dense_types and sparse_types");
  const InputInfo& ser = c.in(0);
  if (!ser.unknown_rank && ser.dims->size() > 1) c.fail("serialized must be a scalar or a vector");
  const bool batched = ser.unknown_rank || ser.dims->size() == 1;
  const int64_t batch = !ser.unknown_rank && ser.dims->size() == 1 ? (*ser.dims)[0] : -1;
  const int ns = static_cast<int>(stypes.size());
  c.set_num_outputs(3 * ns + static_cast<int>(specs.size()));
  for (int i = 0; i < ns; ++i) {
    c.out(i) = {.dtype = DType::Int64, .shape = TensorShape::unknown_dims(2)};
    c.out(ns + i) = {.dtype = static_cast<DType>(stypes[i]), .shape = TensorShape::unknown_dims(1)};
    c.out(2 * ns + i) = {.dtype = DType::Int64, .shape = TensorShape({batched ? 2 : 1})};
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    Dims dims;
    if (batched) dims.push_back(batch);
    for (int64_t d : specs[i].dims) dims.push_back(d);
    if (c.in(3 + static_cast<int>(i)).dtype != specs[i].dtype)
      c.fail("dense_defaults[" + std::to_string(i) + "] must be a " + kind_name(specs[i].dtype) + " tensor");
    c.out(3 * ns + static_cast<int>(i)) = {.dtype = specs[i].dtype, .shape = TensorShape(dims)};
  }
}

// Appends element k of values (of dtype d) to out at element index `at`.
void put(DType d, const FeatureValues& v, int64_t k, TensorImpl& out, int64_t at) {
  if (d == DType::Int64)
    out.as<int64_t>()[at] = v.ints[k];
  else if (d == DType::Float32)
    out.as<float>()[at] = v.floats[k];
  else
    out.as<detail::ObjectValue*>()[at] = detail::make_string(v.bytes[k]);
}
void put_default(const TensorImpl& def, int64_t k, TensorImpl& out, int64_t at) {
  if (def.dtype == DType::String) {
    detail::ObjectValue* s = def.as<detail::ObjectValue* const>()[def.num_elements == 1 ? 0 : k];
    detail::object_retain(s);
    out.as<detail::ObjectValue*>()[at] = s;
    return;
  }
  const size_t size = dtype_size(def.dtype);
  std::memcpy(static_cast<char*>(out.data) + at * size,
              static_cast<const char*>(def.data) + (def.num_elements == 1 ? 0 : k) * size, size);
}

TensorImpl* new_output(DType d, const Dims& dims) { return detail::make_concrete(d, dims); }

void run_parse_example(KernelContext& c) {
  const TensorImpl& ser = c.in(0);
  const bool batched = ser.dims.size() == 1;
  const int64_t batch = batched ? ser.dims[0] : 1;
  const TensorImpl& dkeys = c.in(1);
  const TensorImpl& skeys = c.in(2);
  const auto& stypes = c.attrs.list(kSparseTypes);
  auto fail = [&](const std::string& m) { c.fail(m); };
  const auto specs = dense_specs(c.attrs.list(kDenseTypes), c.attrs.list(kDenseShapes), fail);
  if (dkeys.num_elements != static_cast<int64_t>(specs.size()) ||
      skeys.num_elements != static_cast<int64_t>(stypes.size()))
    c.fail("the keys do not match dense_types and sparse_types");

  // Outputs are handed out only once all are made: an error on the way frees them.
  std::vector<Tensor> results(static_cast<size_t>(c.num_outputs));
  auto keep = [&](int k, TensorImpl* t) {
    results[k] = detail::wrap(t);
    return t;
  };
  std::vector<std::map<std::string_view, FeatureValues>> examples(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b)
    if (!parse_example(str_at(ser, b), &examples[b]))
      throw InvalidArgumentError("Could not parse example input, value: '" + std::string(str_at(ser, b)) + "'");

  // A feature's values in the example, checked against the dtype it is parsed as; null if absent.
  auto find = [&](int64_t b, std::string_view key, DType want) -> const FeatureValues* {
    auto it = examples[b].find(key);
    if (it == examples[b].end() || it->second.kind == DType::Variant) return nullptr;
    if (it->second.kind != want)
      throw InvalidArgumentError("Name: <unknown>, Key: " + std::string(key) + ", Index: " + std::to_string(b) +
                                 ".  Data types don't match. Data type: " + kind_name(it->second.kind) +
                                 " but expected type: " + kind_name(want));
    return &it->second;
  };

  const int ns = static_cast<int>(stypes.size());
  for (int i = 0; i < ns; ++i) {
    const DType d = static_cast<DType>(stypes[i]);
    const std::string_view key = str_at(skeys, i);
    int64_t total = 0, longest = 0;
    std::vector<const FeatureValues*> found(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      found[b] = find(b, key, d);
      const int64_t n = found[b] ? found[b]->size() : 0;
      total += n;
      longest = std::max(longest, n);
    }
    const int64_t index_rank = batched ? 2 : 1;
    TensorImpl* indices = keep(i, new_output(DType::Int64, Dims{total, index_rank}));
    TensorImpl* values = keep(ns + i, new_output(d, Dims{total}));
    TensorImpl* shape = keep(2 * ns + i, new_output(DType::Int64, Dims{index_rank}));
    int64_t at = 0;
    for (int64_t b = 0; b < batch; ++b) {
      if (!found[b]) continue;
      for (int64_t k = 0; k < found[b]->size(); ++k, ++at) {
        if (batched) {
          indices->as<int64_t>()[2 * at] = b;
          indices->as<int64_t>()[2 * at + 1] = k;
        } else {
          indices->as<int64_t>()[at] = k;
        }
        put(d, *found[b], k, *values, at);
      }
    }
    if (batched) {
      shape->as<int64_t>()[0] = batch;
      shape->as<int64_t>()[1] = longest;
    } else {
      shape->as<int64_t>()[0] = longest;
    }
  }

  for (size_t i = 0; i < specs.size(); ++i) {
    const DenseSpec& s = specs[i];
    const std::string_view key = str_at(dkeys, static_cast<int64_t>(i));
    const TensorImpl& def = c.in(3 + static_cast<int>(i));
    std::vector<const FeatureValues*> found(static_cast<size_t>(batch));
    int64_t rows = 0;  // a sequence feature's padded row count
    for (int64_t b = 0; b < batch; ++b) {
      found[b] = find(b, key, s.dtype);
      if (!found[b]) {
        if (!s.sequence() && def.num_elements == 0)
          throw InvalidArgumentError("Feature: " + std::string(key) + " (data type: " + kind_name(s.dtype) +
                                     ") is required but could not be found.");
        continue;
      }
      const int64_t n = found[b]->size();
      if (s.sequence()) {
        if (s.row_elements == 0 ? n != 0 : n % s.row_elements != 0)
          throw InvalidArgumentError("Name: <unknown>, Key: " + std::string(key) + ", Index: " + std::to_string(b) +
                                     ".  Number of values is not a multiple of the row size.");
        rows = std::max(rows, s.row_elements ? n / s.row_elements : 0);
      } else if (n != s.row_elements) {
        throw InvalidArgumentError("Key: " + std::string(key) + ".  Can't parse serialized Example.");
      }
    }
    if (!s.sequence() && def.num_elements != 0 && def.num_elements != 1 && def.num_elements != s.row_elements)
      c.fail("the default of " + std::string(key) + " has the wrong number of elements");
    if (s.sequence() && def.num_elements > 1) c.fail("a FixedLenSequenceFeature's default_value must be a scalar");
    Dims dims;
    if (batched) dims.push_back(batch);
    for (size_t d = 0; d < s.dims.size(); ++d) dims.push_back(d == 0 && s.sequence() ? rows : s.dims[d]);
    TensorImpl* out = keep(3 * ns + static_cast<int>(i), new_output(s.dtype, dims));
    const int64_t per_example = s.sequence() ? rows * s.row_elements : s.row_elements;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t base = b * per_example;
      const int64_t have = found[b] ? found[b]->size() : 0;
      for (int64_t k = 0; k < per_example; ++k) {
        if (k < have) {
          put(s.dtype, *found[b], k, *out, base + k);
        } else if (def.num_elements > 0) {
          put_default(def, k, *out, base + k);
        } else if (s.dtype == DType::Int64) {
          out->as<int64_t>()[base + k] = 0;
        } else if (s.dtype == DType::Float32) {
          out->as<float>()[base + k] = 0;
        }  // a string slot is already the empty string
      }
    }
  }
  for (size_t k = 0; k < results.size(); ++k) c.outputs[k] = hand_out(results[k]);
}

}  // namespace

const OpDef& op::KilnParseExample() {
  static const OpDef def = {
      .name = "KilnParseExample",
      .num_inputs = -1,
      .num_outputs = -1,
      .input_args = {"serialized", "dense_keys", "sparse_keys", list_arg("dense_defaults")},
      .traits = kInternal | kFuzzedInternal | kOwnOutputs,
      .attr_specs = {int_list_attr("dense_types"), int_list_attr("sparse_types"), int_list_attr("dense_shapes")},
      .infer = infer_parse_example,
      .any_dtype_kernel = &run_parse_example,
      .type_attr = nullptr,
      .grad = &no_gradient,
      .output_args = {"output"}};
  return def;
}

}  // namespace kiln::ops
