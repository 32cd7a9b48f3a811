// kiln.data's C++ half: kiln::data datasets as opaque objects the pure-Python Dataset class
// composes (python/kiln/data/). Pulling an element releases the GIL, so a pipeline's threads
// run while Python waits; a Python source (from_generator) takes the GIL for each element.
#include <kiln/data.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "convert.h"

namespace kiln::python {
namespace {

namespace kd = kiln::data;

// A Python object a pipeline thread may drop: the reference is released under the GIL.
struct GilObject {
  nb::object obj;
  explicit GilObject(nb::object o) : obj(std::move(o)) {}
  ~GilObject() {
    if (!Py_IsInitialized()) {
      obj.release();  // the interpreter is gone: leak rather than touch it
      return;
    }
    nb::gil_scoped_acquire gil;
    obj.reset();
  }
};

// (dims or None, dtype) per component -> TensorSpecs.
std::vector<TensorSpec> specs_from(const std::vector<std::tuple<std::optional<std::vector<int64_t>>, nb::object>>& in) {
  std::vector<TensorSpec> out;
  for (const auto& [dims, dtype] : in)
    out.push_back({.shape = dims ? TensorShape(*dims) : TensorShape::unknown(), .dtype = dtype_from(dtype)});
  return out;
}

nb::list specs_to(const std::vector<TensorSpec>& specs) {
  nb::list out;
  for (const TensorSpec& s : specs) {
    nb::object dims = nb::none();
    if (!s.shape.unknown_rank()) {
      nb::list d;
      for (int64_t v : s.shape.dims()) d.append(v < 0 ? nb::none() : nb::int_(v));
      dims = d;
    }
    out.append(nb::make_tuple(dims, dtype_object(s.dtype)));
  }
  return out;
}

// One pass, held as an iterator handle (a scalar variant) so a traced function the iterator
// is passed to pulls from the same stream. Dropping it (or close()) releases the handle with
// the GIL released: when it was the last holder, the pipeline's threads stop, and a thread
// waiting for the GIL in a Python source can finish first.
struct PyIterator {
  Tensor handle;
  explicit PyIterator(Tensor h) : handle(std::move(h)) {}
  ~PyIterator() { close(); }
  void close() {
    if (!handle.defined()) return;
    if (PyGILState_Check()) {
      nb::gil_scoped_release release;
      handle = Tensor();
    } else {
      handle = Tensor();
    }
  }
  // The next element's components, or None at the end.
  nb::object next() {
    if (!handle.defined()) return nb::none();
    std::vector<Tensor> element;
    bool more = false;
    {
      nb::gil_scoped_release release;
      more = kd::iterator_next(handle, &element);
    }
    if (!more) return nb::none();
    return nb::cast(element);
  }
};

}  // namespace

void bind_data(nb::module_& m) {
  nb::class_<kd::Dataset>(m, "DatasetCore")
      .def_prop_ro("element_spec", [](const kd::Dataset& d) { return specs_to(d.element_spec()); })
      .def("cardinality", &kd::Dataset::cardinality)
      .def_prop_ro("kind", [](const kd::Dataset& d) { return std::string(d.kind()); })
      .def("make_iterator", [](const kd::Dataset& d) { return new PyIterator(kd::make_iterator(kd::as_variant(d))); })
      .def("variant", [](const kd::Dataset& d) { return kd::as_variant(d); });
  nb::class_<PyIterator>(m, "DatasetIteratorCore")
      .def("next", &PyIterator::next)
      .def("close", &PyIterator::close)
      .def_prop_ro("handle", [](const PyIterator& it) { return it.handle; });
  // The dataset ops, eagerly or as nodes of the current trace; specs as element_spec gives them.
  m.def("data_make_iterator", &kd::make_iterator);
  m.def("data_iterator_get_next",
        [](const Tensor& it, const std::vector<std::tuple<std::optional<std::vector<int64_t>>, nb::object>>& spec) {
          return kd::iterator_get_next(it, specs_from(spec));
        });
  m.def("data_iterator_get_next_as_optional", &kd::iterator_get_next_as_optional);
  m.def("data_iterator_position", &kd::iterator_position);
  // Replaying runs the pipeline: without the GIL, so a Python source can take it.
  m.def("data_iterator_restore", &kd::iterator_restore, nb::call_guard<nb::gil_scoped_release>());
  m.def("data_optional_has_value", &kd::optional_has_value);
  m.def("data_optional_from_value", &kd::optional_from_value);
  m.def("data_optional_none", &kd::optional_none);
  m.def("data_optional_get_value",
        [](const Tensor& opt, const std::vector<std::tuple<std::optional<std::vector<int64_t>>, nb::object>>& spec) {
          return kd::optional_get_value(opt, specs_from(spec));
        });

  m.def("data_from_tensor_slices", &kd::from_tensor_slices);
  m.def("data_from_tensors", &kd::from_tensors);
  m.def("data_range", [](int64_t start, int64_t stop, int64_t step, nb::handle dtype) {
    return kd::range(start, stop, step, dtype_from(dtype));
  });
  // make_source() returns a callable that returns a list of tensors, or None at the end.
  m.def("data_from_callback", [](const std::vector<std::tuple<std::optional<std::vector<int64_t>>, nb::object>>& spec,
                                 nb::object make_source, int64_t cardinality) {
    auto maker = std::make_shared<GilObject>(std::move(make_source));
    return kd::from_callback(
        specs_from(spec),
        [maker]() -> kd::Source {
          std::shared_ptr<GilObject> source;
          {
            nb::gil_scoped_acquire gil;
            source = std::make_shared<GilObject>(maker->obj());
          }
          return [source](std::vector<Tensor>* out) {
            nb::gil_scoped_acquire gil;
            nb::object r = source->obj();
            if (r.is_none()) return false;
            *out = nb::cast<std::vector<Tensor>>(r);
            return true;
          };
        },
        cardinality);
  });
  // make_inner(list of tensors) returns the inner dataset (a core Dataset) for an input element.
  m.def("data_interleave", [](const kd::Dataset& input, nb::object make_inner,
                              const std::vector<std::tuple<std::optional<std::vector<int64_t>>, nb::object>>& spec,
                              int64_t cycle, int64_t block, int64_t prefetch) {
    auto maker = std::make_shared<GilObject>(std::move(make_inner));
    return kd::interleave(
        input,
        [maker](const std::vector<Tensor>& element) {
          nb::gil_scoped_acquire gil;
          return nb::cast<kd::Dataset>(maker->obj(element));
        },
        specs_from(spec), cycle, block, prefetch);
  });
  m.def("data_tfrecords", &kd::tfrecords, nb::arg("filenames"), nb::arg("compression") = "");
  m.def("data_text_lines", &kd::text_lines, nb::arg("filenames"), nb::arg("compression") = "");
  nb::class_<kd::TFRecordWriter>(m, "TFRecordWriterCore")
      .def(nb::init<const std::string&, const std::string&>(), nb::arg("path"), nb::arg("compression") = "")
      .def("write",
           [](kd::TFRecordWriter& w, nb::bytes record) { w.write(std::string(record.c_str(), record.size())); })
      .def("flush", &kd::TFRecordWriter::flush)
      .def("close", &kd::TFRecordWriter::close);
  // (dims, dtype) specs as element_spec gives them; returns [indices..., values..., shapes..., dense...].
  m.def("parse_example",
        [](const Tensor& serialized, const std::vector<std::string>& dense_keys, const std::vector<Tensor>& defaults,
           const std::vector<std::tuple<std::optional<std::vector<int64_t>>, nb::object>>& dense_specs,
           const std::vector<std::string>& sparse_keys, const std::vector<nb::object>& sparse_types) {
          std::vector<DType> stypes;
          for (const auto& t : sparse_types) stypes.push_back(dtype_from(t));
          auto r = kd::parse_example(serialized, dense_keys, defaults, specs_from(dense_specs), sparse_keys, stypes);
          std::vector<Tensor> out;
          for (auto* part : {&r.sparse_indices, &r.sparse_values, &r.sparse_shapes, &r.dense_values})
            out.insert(out.end(), part->begin(), part->end());
          return out;
        });
  m.def("decode_csv", &kd::decode_csv, nb::arg("records"), nb::arg("record_defaults"), nb::arg("field_delim"),
        nb::arg("use_quote_delim"), nb::arg("na_value"), nb::arg("select_cols"));
  m.def("data_map", [](const kd::Dataset& d, const ConcreteFunction& fn, int64_t parallel, bool deterministic) {
    return kd::map(d, fn, parallel, deterministic);
  });
  m.def("data_filter", &kd::filter);
  m.def("data_take_while", &kd::take_while);
  m.def("data_batch", &kd::batch);
  m.def("data_padded_batch", [](const kd::Dataset& d, int64_t n,
                                const std::vector<std::optional<std::vector<std::optional<int64_t>>>>& shapes,
                                std::vector<Tensor> values, bool drop) {
    std::vector<TensorShape> padded;
    for (const auto& s : shapes) {
      if (!s) {
        padded.push_back(TensorShape::unknown());
        continue;
      }
      std::vector<int64_t> dims;
      for (const auto& v : *s) dims.push_back(v ? *v : -1);
      padded.push_back(TensorShape(dims));
    }
    return kd::padded_batch(d, n, std::move(padded), std::move(values), drop);
  });
  m.def("data_unbatch", &kd::unbatch);
  m.def("data_window", &kd::window);
  m.def("data_from_variant", &kd::from_variant);
  m.def("data_shuffle", &kd::shuffle);
  m.def("data_repeat", &kd::repeat);
  m.def("data_take", &kd::take);
  m.def("data_skip", &kd::skip);
  m.def("data_prefetch", &kd::prefetch);
  m.def("data_cache", [](const kd::Dataset& d) { return kd::cache(d); });
  m.def("data_cache_file", [](const kd::Dataset& d, const std::string& filename) { return kd::cache(d, filename); });
  // Saving runs the whole pipeline: without the GIL, so a Python source can take it per element.
  m.def(
      "data_save",
      [](const kd::Dataset& d, const std::string& path, const std::string& compression, const std::string& structure,
         bool shard_first) {
        kd::save(d, path,
                 {.compression = compression, .structure_json = structure, .shard_by_first_component = shard_first});
      },
      nb::call_guard<nb::gil_scoped_release>());
  m.def("data_with_threading", &kd::with_threading);
  m.def("data_saved_structure", &kd::saved_structure);
  m.def("data_load", [](const std::string& path, const std::string& compression,
                        const std::vector<std::tuple<std::optional<std::vector<int64_t>>, nb::object>>& spec) {
    return kd::load(path, compression, specs_from(spec));
  });
  m.def("data_zip", &kd::zip);
  m.def("data_concatenate", &kd::concatenate);
}

}  // namespace kiln::python
