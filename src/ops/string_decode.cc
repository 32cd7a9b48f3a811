// Ops that decode strings into numbers: DecodeRaw (the bytes as an array of a numeric type)
// and UnicodeDecode (code points of UTF-8, UTF-16-BE, UTF-32-BE or Latin-1 text). Both make
// outputs whose length the bytes decide (kOwnOutputs).
#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "core/object_value.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// ---- DecodeRaw(bytes; out_type, little_endian): each string's bytes as elements of out_type;
// output shape: bytes.shape + [length / element size]. Every string has one length.
enum DecodeRawAttr { kOutType, kLittleEndian };

// The raw decoders' output: out_type elements, shape input.shape + [last] (-1: not known yet).
void set_decoded_shape(InferContext& c, int64_t last) {
  c.kernel_dtype = DType::String;
  c.out(0).dtype = c.attrs.type(kOutType);
  if (c.in(0).unknown_rank) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  Dims dims = *c.in(0).dims;
  dims.push_back(last);
  c.out(0).shape = TensorShape(dims);
}

void infer_decode_raw(InferContext& c) {
  require_string_input(c, 0);
  const DType t = c.attrs.type(kOutType);
  require_type_in(
      c, "out_type", t,
      {DType::Float16, DType::Float32, DType::Float64, DType::Int32, DType::UInt16, DType::UInt8, DType::Int16,
       DType::Int8, DType::Int64, DType::Complex64, DType::Complex128, DType::Bool, DType::BFloat16});
  set_decoded_shape(c, -1);
}

void decode_raw(KernelContext& c) {
  const TensorImpl& in = c.in(0);
  const DType t = c.attrs.type(kOutType);
  const auto size = static_cast<int64_t>(dtype_size(t));
  const int64_t n = in.num_elements;
  const int64_t length = n ? static_cast<int64_t>(str_at(in, 0).size()) : 0;
  for (int64_t i = 1; i < n; ++i)
    if (static_cast<int64_t>(str_at(in, i).size()) != length)
      c.fail("DecodeRaw requires input strings to all be the same size, but element " + std::to_string(i) +
             " has size " + std::to_string(length) + " != " + std::to_string(str_at(in, i).size()));
  if (length % size != 0)
    c.fail("Input to DecodeRaw has length " + std::to_string(length) + " that is not a multiple of " +
           std::to_string(size) + ", the size of " + tf_type_name(t));
  Dims dims = in.dims;
  dims.push_back(length / size);
  TensorImpl* out = detail::make_concrete(t, dims);
  c.outputs[0] = out;
  auto* dst = static_cast<unsigned char*>(out->data);
  if (length == 0) return;  // nothing to copy (an empty string's data may be null)
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * length, str_at(in, i).data(), static_cast<size_t>(length));
  // Byte order: each element (each part of a complex one) is reversed when the data's order
  // is not this machine's.
  const bool machine_little = std::endian::native == std::endian::little;
  const bool data_little = c.attrs.b(kLittleEndian);
  const int64_t part = (t == DType::Complex64 || t == DType::Complex128) ? size / 2 : size;
  if (machine_little != data_little && part > 1)
    for (int64_t k = 0; k < n * length; k += part) std::reverse(dst + k, dst + k + part);
  if (t == DType::Bool)  // a bool holds 0 or 1: any nonzero byte is true
    for (int64_t k = 0; k < n * length; ++k) dst[k] = dst[k] != 0;
}

// ---- DecodePaddedRaw(input_bytes, fixed_length; out_type, little_endian): each string's first
// fixed_length bytes (zero-padded when shorter) as elements of out_type; output shape
// input_bytes.shape + [fixed_length / element size]. Strings may differ in length.
void check_fixed_length(int64_t fixed_length, int64_t size, const std::function<void(const std::string&)>& fail) {
  if (fixed_length <= 0) fail("fixed_length (" + std::to_string(fixed_length) + ") must be greater than zero.");
  if (fixed_length % size != 0)
    fail("fixed_length (" + std::to_string(fixed_length) + ") must be a multiple of the size of out_type (" +
         std::to_string(size) + ")");
}

void infer_decode_padded_raw(InferContext& c) {
  require_string_input(c, 0);
  const DType t = c.attrs.type(kOutType);
  require_type_in(c, "out_type", t,
                  {DType::Float16, DType::Float32, DType::Float64, DType::Int32, DType::UInt16, DType::UInt8,
                   DType::Int16, DType::Int8, DType::Int64, DType::BFloat16});
  if (t == DType::Float16)  // in TensorFlow's OpDef, but it registers no kernel for it
    throw NotFoundError(
        "Could not find device for node: {{node DecodePaddedRaw}} = DecodePaddedRaw[out_type=DT_HALF]: TensorFlow "
        "registers kernels for out_type float, double, int32, uint16, uint8, int16, int8, int64, bfloat16");
  if (c.in(1).dtype != DType::Int32)
    c.fail(std::string("cannot compute DecodePaddedRaw as input #1(zero-based) was expected to be a int32 tensor but "
                       "is a ") +
           tf_type_name(c.in(1).dtype) + " tensor");
  if (!c.in(1).unknown_rank && !c.in(1).dims->empty())
    c.fail("k must be scalar, got shape " + dims_text(*c.in(1).dims));
  std::vector<int64_t> fixed;
  const auto size = static_cast<int64_t>(dtype_size(t));
  if (known_ints(c.in(1), &fixed) && fixed.size() == 1) {
    check_fixed_length(fixed[0], size, [&](const std::string& m) { c.fail(m); });
    set_decoded_shape(c, fixed[0] / size);
  } else {
    set_decoded_shape(c, -1);
  }
}

void decode_padded_raw(KernelContext& c) {
  const TensorImpl& in = c.in(0);
  const DType t = c.attrs.type(kOutType);
  const auto size = static_cast<int64_t>(dtype_size(t));
  const int64_t fixed_length = *c.in(1).as<int32_t>();
  check_fixed_length(fixed_length, size, [&](const std::string& m) { c.fail(m); });
  const int64_t n = in.num_elements;
  Dims dims = in.dims;
  dims.push_back(fixed_length / size);
  TensorImpl* out = detail::make_concrete(t, dims);
  c.outputs[0] = out;
  auto* dst = static_cast<unsigned char*>(out->data);
  if (n == 0) return;
  std::memset(dst, 0, static_cast<size_t>(n * fixed_length));
  for (int64_t i = 0; i < n; ++i) {
    const std::string_view s = str_at(in, i);
    const auto take = std::min<int64_t>(fixed_length, static_cast<int64_t>(s.size()));
    if (take > 0) std::memcpy(dst + i * fixed_length, s.data(), static_cast<size_t>(take));
  }
  const bool machine_little = std::endian::native == std::endian::little;
  if (machine_little != c.attrs.b(kLittleEndian) && size > 1)
    for (int64_t k = 0; k < n * fixed_length; k += size) std::reverse(dst + k, dst + k + size);
}

// ---- UnicodeDecode(input; input_encoding, errors, replacement_char,
// replace_control_characters, Tsplits) -> (row_splits, char_values): the code points of all
// strings in order, and where each string's begin. A malformed sequence (the maximal part of
// one that could have been well formed, Unicode's recommended practice) is one error.
enum UnicodeDecodeAttr { kEncoding, kErrors, kReplacement, kReplaceControl, kSplits };
enum class Encoding { kUtf8, kUtf16Be, kUtf32Be, kLatin1 };

bool encoding_named(std::string name, Encoding* e) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::toupper(ch); });
  if (name == "UTF-8" || name == "UTF8")
    *e = Encoding::kUtf8;
  else if (name == "UTF-16-BE" || name == "UTF-16BE")
    *e = Encoding::kUtf16Be;
  else if (name == "UTF-32-BE" || name == "UTF-32BE")
    *e = Encoding::kUtf32Be;
  else if (name == "LATIN1" || name == "ISO-8859-1" || name == "LATIN-1")
    *e = Encoding::kLatin1;
  else
    return false;
  return true;
}

void check_unicode_decode_attrs(const Attrs& a, const std::function<void(const std::string&)>& fail) {
  Encoding e;
  if (!encoding_named(a.s(kEncoding), &e)) fail("Could not create converter for input encoding: " + a.s(kEncoding));
  if (a.i(kReplacement) < 0 || a.i(kReplacement) > 0x10FFFF) fail("replacement_char out of unicode codepoint range");
}

void infer_unicode_decode(InferContext& c) {
  require_string_input(c, 0);
  require_string_in(c, "errors", c.attrs.s(kErrors), {"strict", "replace", "ignore"});
  require_type_in(c, "Tsplits", c.attrs.type(kSplits), {DType::Int32, DType::Int64});
  check_unicode_decode_attrs(c.attrs, [&](const std::string& m) { c.fail(m); });
  c.kernel_dtype = DType::String;
  const InputInfo& in = c.in(0);
  int64_t n = 1;
  if (in.unknown_rank) n = -1;
  for (size_t i = 0; n >= 0 && i < in.dims->size(); ++i) n = (*in.dims)[i] < 0 ? -1 : n * (*in.dims)[i];
  c.out(0) = {.dtype = c.attrs.type(kSplits), .shape = TensorShape(Dims{n < 0 ? -1 : n + 1})};
  c.out(1) = {.dtype = DType::Int32, .shape = TensorShape::unknown_dims(1)};
}

// The code point at s[i...], advancing i; -1 for a malformed sequence (i past its maximal part).
int32_t next_utf8(std::string_view s, size_t& i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = b(i++);
  if (lead < 0x80) return lead;
  int more;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  int32_t cp;
  if (lead >= 0xC2 && lead <= 0xDF)
    more = 1, cp = lead & 0x1F;
  else if (lead >= 0xE0 && lead <= 0xEF)
    more = 2, cp = lead & 0x0F, lo = lead == 0xE0 ? 0xA0 : 0x80, hi = lead == 0xED ? 0x9F : 0xBF;
  else if (lead >= 0xF0 && lead <= 0xF4)
    more = 3, cp = lead & 0x07, lo = lead == 0xF0 ? 0x90 : 0x80, hi = lead == 0xF4 ? 0x8F : 0xBF;
  else
    return -1;
  for (int k = 0; k < more; ++k) {
    if (i >= s.size() || b(i) < lo || b(i) > hi) return -1;
    cp = (cp << 6) | (b(i++) & 0x3F);
    lo = 0x80, hi = 0xBF;
  }
  return cp;
}

int32_t next_utf16be(std::string_view s, size_t& i) {
  const auto unit = [&](size_t k) {
    return static_cast<int32_t>((static_cast<unsigned char>(s[k]) << 8) | static_cast<unsigned char>(s[k + 1]));
  };
  if (i + 2 > s.size()) {
    i = s.size();
    return -1;
  }
  const int32_t u = unit(i);
  i += 2;
  if (u < 0xD800 || u > 0xDFFF) return u;
  if (u >= 0xDC00 || i + 2 > s.size() || unit(i) < 0xDC00 || unit(i) > 0xDFFF) return -1;
  const int32_t low = unit(i);
  i += 2;
  return 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
}

int32_t next_utf32be(std::string_view s, size_t& i) {
  if (i + 4 > s.size()) {
    i = s.size();
    return -1;
  }
  uint32_t u = 0;
  for (int k = 0; k < 4; ++k) u = (u << 8) | static_cast<unsigned char>(s[i + k]);
  i += 4;
  return u > 0x10FFFF || (u >= 0xD800 && u <= 0xDFFF) ? -1 : static_cast<int32_t>(u);
}

void unicode_decode(KernelContext& c) {
  const Attrs& a = c.attrs;
  check_unicode_decode_attrs(a, [&](const std::string& m) { c.fail(m); });
  Encoding encoding;
  encoding_named(a.s(kEncoding), &encoding);
  const std::string& errors = a.s(kErrors);
  const auto replacement = static_cast<int32_t>(a.i(kReplacement));
  const bool replace_control = a.b(kReplaceControl);
  const TensorImpl& in = c.in(0);
  std::vector<int64_t> splits{0};
  std::vector<int32_t> chars;
  for (int64_t e = 0; e < in.num_elements; ++e) {
    const std::string_view s = str_at(in, e);
    for (size_t i = 0; i < s.size();) {
      int32_t cp;
      switch (encoding) {
        case Encoding::kUtf8:
          cp = next_utf8(s, i);
          break;
        case Encoding::kUtf16Be:
          cp = next_utf16be(s, i);
          break;
        case Encoding::kUtf32Be:
          cp = next_utf32be(s, i);
          break;
        default:
          cp = static_cast<unsigned char>(s[i++]);
          break;
      }
      if (cp < 0) {
        if (errors == "strict") c.fail("Invalid formatting on input string");
        if (errors == "ignore") continue;
        cp = replacement;
      } else if (replace_control && cp < 0x20) {
        cp = replacement;
      }
      chars.push_back(cp);
    }
    splits.push_back(static_cast<int64_t>(chars.size()));
  }
  const DType split_dtype = a.type(kSplits);
  TensorImpl* row_splits = detail::make_concrete(split_dtype, Dims{static_cast<int64_t>(splits.size())});
  c.outputs[0] = row_splits;
  for (size_t k = 0; k < splits.size(); ++k) {
    if (split_dtype == DType::Int32)
      row_splits->as<int32_t>()[k] = static_cast<int32_t>(splits[k]);
    else
      row_splits->as<int64_t>()[k] = splits[k];
  }
  TensorImpl* values = detail::make_concrete(DType::Int32, Dims{static_cast<int64_t>(chars.size())});
  c.outputs[1] = values;
  std::copy(chars.begin(), chars.end(), values->as<int32_t>());
}

}  // namespace

const OpDef& op::DecodeRaw() {
  static const OpDef def = {.name = "DecodeRaw",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"bytes"},
                            .traits = kOwnOutputs,
                            .attr_specs = {type_attr("out_type"), bool_attr("little_endian", true)},
                            .infer = infer_decode_raw,
                            .kernels = string_kernel(&decode_raw),
                            .type_attr = nullptr,
                            .grad = &no_gradient};
  return def;
}

const OpDef& op::DecodePaddedRaw() {
  static const OpDef def = {.name = "DecodePaddedRaw",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input_bytes", "fixed_length"},
                            .traits = kOwnOutputs,
                            .attr_specs = {type_attr("out_type"), bool_attr("little_endian", true)},
                            .infer = infer_decode_padded_raw,
                            .kernels = string_kernel(&decode_padded_raw),
                            .type_attr = nullptr,
                            .grad = &no_gradient};
  return def;
}

const OpDef& op::UnicodeDecode() {
  static const OpDef def = {
      .name = "UnicodeDecode",
      .num_inputs = 1,
      .num_outputs = 2,
      .input_args = {"input"},
      .traits = kOwnOutputs,
      .attr_specs = {string_attr("input_encoding"), string_attr("errors", "replace"),
                     int_attr("replacement_char", 65533), bool_attr("replace_control_characters", false),
                     type_attr("Tsplits", DType::Int64)},
      .infer = infer_unicode_decode,
      .kernels = string_kernel(&unicode_decode),
      .type_attr = nullptr,
      .grad = &no_gradient,
      .output_args = {"row_splits", "char_values"}};
  return def;
}

}  // namespace kiln::ops
