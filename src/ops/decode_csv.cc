// KilnDecodeCSV(records, record_defaults...) -> one tensor per column: tf.io.decode_csv
// (TensorFlow's DecodeCSV; kiln's row takes the output types from the defaults, as TensorFlow's
// OUT_TYPE attr lists them, and is kInternal until rows have list(type) attrs).
//   attrs: field_delim (one byte), use_quote_delim, na_value, select_cols (ascending; empty: all)
// Each output has the records' shape. A field that is empty or equals na_value takes its
// column's default; a column whose default is empty is required. Quoted fields follow
// RFC 4180 ("" inside quotes is one quote). Every record is hostile: malformed quoting, a wrong
// field count or an unparsable number is InvalidArgumentError naming the record and field.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/object_value.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kDelim = attr_index(op::KilnDecodeCSV(), "field_delim");
const int kQuote = attr_index(op::KilnDecodeCSV(), "use_quote_delim");
const int kNa = attr_index(op::KilnDecodeCSV(), "na_value");
const int kSelect = attr_index(op::KilnDecodeCSV(), "select_cols");

bool csv_dtype(DType d) {
  return d == DType::Int32 || d == DType::Int64 || d == DType::Float32 || d == DType::Float64 || d == DType::String;
}

void infer_decode_csv(InferContext& c) {
  // The row is variadic (one default per column): the records input is checked to be there
  // before it is read.
  if (c.num_inputs < 1) c.fail("decode_csv takes the records and one default per column");
  require_string_input(c, 0);
  if (c.attrs.s(kDelim).size() != 1) c.fail("field_delim should be only 1 char");
  const int n = c.num_inputs - 1;
  if (n < 1) c.fail("decode_csv needs at least one record default");
  const auto& select = c.attrs.list(kSelect);
  if (!select.empty() && static_cast<int>(select.size()) != n)
    c.fail("The number of select_cols (" + std::to_string(select.size()) +
           ") must match the number of record_defaults (" + std::to_string(n) + ")");
  for (size_t i = 0; i < select.size(); ++i)
    if (select[i] < 0 || (i > 0 && select[i] <= select[i - 1])) c.fail("select_cols is not strictly increasing.");
  c.set_num_outputs(n);
  for (int i = 0; i < n; ++i) {
    const InputInfo& d = c.in(1 + i);
    if (!csv_dtype(d.dtype))
      c.fail("record_defaults[" + std::to_string(i) + "] must be int32, int64, float32, float64 or string, got " +
             std::string(tf_type_name(d.dtype)));
    if (!d.unknown_rank && d.dims->size() > 1)
      c.fail("Shape of a default must be a length-0 or length-1 vector, or a scalar.");
    c.out(i) = {.dtype = d.dtype, .shape = c.in(0).unknown_rank ? TensorShape::unknown() : TensorShape(*c.in(0).dims)};
  }
}

// Splits one record into fields; false with *error set when it is malformed.
bool split_record(std::string_view r, char delim, bool quotes, std::vector<std::string>* fields, std::string* error) {
  fields->clear();
  size_t i = 0;
  for (;;) {
    std::string field;
    if (quotes && i < r.size() && r[i] == '"') {
      ++i;
      for (;;) {
        if (i >= r.size()) {
          *error = "Quoted field has to end with quote followed by delim or end";
          return false;
        }
        if (r[i] == '"') {
          if (i + 1 < r.size() && r[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field.push_back(r[i++]);
      }
      if (i < r.size() && r[i] != delim) {
        *error = "Quote inside a string has to be escaped by another quote";
        return false;
      }
    } else {
      while (i < r.size() && r[i] != delim) {
        if (quotes && r[i] == '"') {
          *error = "Unquoted fields cannot have quotes inside";
          return false;
        }
        field.push_back(r[i++]);
      }
    }
    fields->push_back(std::move(field));
    if (i >= r.size()) return true;
    ++i;  // the delimiter: a field follows, possibly empty
  }
}

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

void run_decode_csv(KernelContext& c) {
  const TensorImpl& records = c.in(0);
  const char delim = c.attrs.s(kDelim)[0];
  const bool quotes = c.attrs.b(kQuote);
  const std::string& na = c.attrs.s(kNa);
  const auto& select = c.attrs.list(kSelect);
  const int n = c.num_inputs - 1;
  std::vector<Tensor> out(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) out[k] = detail::wrap(detail::make_concrete(c.in(1 + k).dtype, records.dims));
  std::vector<std::string> fields;
  std::string error;
  for (int64_t r = 0; r < records.num_elements; ++r) {
    const std::string_view record = str_at(records, r);
    if (!split_record(record, delim, quotes, &fields, &error))
      throw InvalidArgumentError(error + ": " + std::string(record));
    if (select.empty() && static_cast<int>(fields.size()) != n)
      throw InvalidArgumentError("Expect " + std::to_string(n) + " fields but have " + std::to_string(fields.size()) +
                                 " in record " + std::to_string(r));
    if (!select.empty() && static_cast<int64_t>(fields.size()) <= select.back())
      throw InvalidArgumentError("Expect " + std::to_string(select.back() + 1) + " fields but have " +
                                 std::to_string(fields.size()) + " in record " + std::to_string(r));
    for (int k = 0; k < n; ++k) {
      const std::string& f = fields[select.empty() ? k : static_cast<size_t>(select[k])];
      const TensorImpl& def = c.in(1 + k);
      TensorImpl& o = *detail::impl_of(out[k]);
      if (f.empty() || f == na) {
        if (def.num_elements == 0)
          throw InvalidArgumentError("Field " + std::to_string(k) + " is required but missing in record " +
                                     std::to_string(r) + "!");
        if (def.dtype == DType::String) {
          detail::ObjectValue* s = def.as<detail::ObjectValue* const>()[0];
          detail::object_retain(s);
          o.as<detail::ObjectValue*>()[r] = s;
        } else {
          std::memcpy(static_cast<char*>(o.data) + r * dtype_size(def.dtype), def.data, dtype_size(def.dtype));
        }
        continue;
      }
      auto bad = [&](const char* type) {
        throw InvalidArgumentError("Field " + std::to_string(k) + " in record " + std::to_string(r) +
                                   " is not a valid " + type + ": " + f);
      };
      const std::string t = trimmed(f);
      char* end = nullptr;
      errno = 0;
      switch (def.dtype) {
        case DType::Int32:
        case DType::Int64: {
          const long long v = std::strtoll(t.c_str(), &end, 10);
          const bool is32 = def.dtype == DType::Int32;
          if (t.empty() || *end || errno == ERANGE || (is32 && (v < INT32_MIN || v > INT32_MAX)))
            bad(is32 ? "int32" : "int64");
          if (is32)
            o.as<int32_t>()[r] = static_cast<int32_t>(v);
          else
            o.as<int64_t>()[r] = v;
          break;
        }
        case DType::Float32:
        case DType::Float64: {
          const double v = std::strtod(t.c_str(), &end);
          if (t.empty() || *end) bad(def.dtype == DType::Float32 ? "float" : "double");
          if (def.dtype == DType::Float32)
            o.as<float>()[r] = static_cast<float>(v);
          else
            o.as<double>()[r] = v;
          break;
        }
        default:
          o.as<detail::ObjectValue*>()[r] = detail::make_string(f);
      }
    }
  }
  for (int k = 0; k < n; ++k) c.outputs[k] = hand_out(out[k]);
}

}  // namespace

const OpDef& op::KilnDecodeCSV() {
  static const OpDef def = {.name = "KilnDecodeCSV",
                            .num_inputs = -1,
                            .num_outputs = -1,
                            .input_args = {"records", list_arg("record_defaults")},
                            .traits = kInternal | kFuzzedInternal | kOwnOutputs,
                            .attr_specs = {string_attr("field_delim", ","), bool_attr("use_quote_delim", true),
                                           string_attr("na_value", ""), int_list_attr("select_cols", {})},
                            .infer = infer_decode_csv,
                            .any_dtype_kernel = &run_decode_csv,
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"output"}};
  return def;
}

}  // namespace kiln::ops
