// kiln::data: input pipelines (TensorFlow's tf.data). A Dataset is an immutable description
// of a sequence of elements (each element a list of tensors, the flattened structure the
// front end keeps); an Iterator runs it. Map, filter and take_while run traced functions
// (ConcreteFunction), so a pipeline built of kiln's own datasets runs in C++ threads and
// never needs a front end's interpreter; a callback source (from_callback) is the one way a
// front end's code joins a pipeline. Errors surface at the element where they occur, as the
// exception the stage threw, from Iterator::next on the consumer's thread.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/function.h"
#include "kiln/shape.h"
#include "kiln/tensor.h"

namespace kiln::data {

// tf.data's cardinality constants and AUTOTUNE.
inline constexpr int64_t kInfiniteCardinality = -1;
inline constexpr int64_t kUnknownCardinality = -2;
inline constexpr int64_t kAutotune = -1;

namespace detail {
class DatasetImpl;
class IteratorImpl;
}  // namespace detail

// One pass over a dataset. Not thread-safe (one consumer); destroying it stops the threads
// its stages started, after each finishes the element it is computing.
class Iterator {
 public:
  explicit Iterator(std::unique_ptr<detail::IteratorImpl> impl);
  ~Iterator();
  Iterator(Iterator&&) noexcept;
  Iterator& operator=(Iterator&&) noexcept;
  // The next element into *element; false at the end (and on every later call).
  bool next(std::vector<Tensor>* element);

 private:
  std::unique_ptr<detail::IteratorImpl> impl_;
};

class Dataset {
 public:
  explicit Dataset(std::shared_ptr<const detail::DatasetImpl> impl) : impl_(std::move(impl)) {}
  // Each component's dtype and shape (-1 where elements differ or it is not known).
  const std::vector<TensorSpec>& element_spec() const;
  // The number of elements, kInfiniteCardinality or kUnknownCardinality.
  int64_t cardinality() const;
  // TensorFlow's class name of the last stage ("TensorSliceDataset", "MapDataset", ...).
  const char* kind() const;
  Iterator make_iterator() const;
  const std::shared_ptr<const detail::DatasetImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<const detail::DatasetImpl> impl_;
};

// Sources.
// Element i is the i-th row of every component (all share the first dimension).
Dataset from_tensor_slices(std::vector<Tensor> components);
// One element: the components.
Dataset from_tensors(std::vector<Tensor> components);
// start, start + step, ... up to stop (exclusive), as scalars of `dtype` (an integer or
// floating dtype); step 0 is InvalidArgumentError.
Dataset range(int64_t start, int64_t stop, int64_t step, DType dtype = DType::Int64);
// Elements a front end produces: each iterator calls make_source() once and then the
// source until it returns false. The source runs on whichever thread pulls from it.
using Source = std::function<bool(std::vector<Tensor>*)>;
// `cardinality` is what the front end knows of the count (kUnknownCardinality if nothing).
Dataset from_callback(std::vector<TensorSpec> element_spec, std::function<Source()> make_source,
                      int64_t cardinality = kUnknownCardinality);

// Files: one string scalar per TFRecord or per line (without its "\n" or "\r\n"), the files
// read in order. compression: "", "GZIP" or "ZLIB". A missing file is NotFoundError, a
// truncated or corrupt record DataLossError, each at the element where the reader meets it.
Dataset tfrecords(std::vector<std::string> filenames, const std::string& compression = "");
Dataset text_lines(std::vector<std::string> filenames, const std::string& compression = "");

// Writes a TFRecord file (TensorFlow's framing, masked CRC-32C; "", "GZIP" or "ZLIB").
class TFRecordWriter {
 public:
  explicit TFRecordWriter(const std::string& path, const std::string& compression = "");
  ~TFRecordWriter();  // closes
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;
  void write(const std::string& record);
  void flush();
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Datasets on disk (implemented in the io layer). save writes TensorFlow's saved-dataset
// directory (Dataset.save: snapshot.metadata, dataset_spec.pb and <run>/<shard>.shard/
// 00000000.snapshot files of TFRecords, one TensorProto per component), which TensorFlow's
// Dataset.load reads; load reads TensorFlow's (the shards interleaved one per CPU, as its
// default reader_func does). Components must be tensors (not variants).
struct SaveOptions {
  std::string compression;  // "", "GZIP" or "ZLIB" (the shard files)
  // The element's structure as kiln::io's JSON form of a StructuredValue; empty: the flat
  // components (one TensorSpec, or a tuple of them).
  std::string structure_json;
  // Each element's first component (an int64 scalar, as shard_func returns) picks the shard
  // it goes to and is not saved.
  bool shard_by_first_component = false;
};
void save(const Dataset& dataset, const std::string& path, const SaveOptions& options = {});
// The structure a saved dataset's dataset_spec.pb holds, as JSON; NotFoundError without one.
std::string saved_structure(const std::string& path);
// element_spec: the flat components; empty reads them from dataset_spec.pb. A shard whose
// records are not the spec's tensors is DataLossError or InvalidArgumentError at that element.
Dataset load(const std::string& path, const std::string& compression = "", std::vector<TensorSpec> element_spec = {});

// Transformations. Functions take an element's components as inputs.
// num_parallel_calls: 0 runs fn on the consumer's thread; n > 0 (or kAutotune, the CPUs
// available) on that many threads, in input order unless `deterministic` is false.
Dataset map(const Dataset& input, ConcreteFunction fn, int64_t num_parallel_calls = 0, bool deterministic = true);
// fn returns a scalar bool: keep the element.
Dataset filter(const Dataset& input, ConcreteFunction predicate);
// Elements while fn returns true; the first false ends the dataset.
Dataset take_while(const Dataset& input, ConcreteFunction predicate);
// Stacks batch_size consecutive elements (the last batch may be smaller unless
// drop_remainder); elements of a batch must have equal shapes.
Dataset batch(const Dataset& input, int64_t batch_size, bool drop_remainder = false);
// As batch, padding each component to the largest shape in the batch (or to
// padded_shapes[i] where its dims are not -1) with padding_values[i] (a scalar of the
// component's dtype).
Dataset padded_batch(const Dataset& input, int64_t batch_size, std::vector<TensorShape> padded_shapes,
                     std::vector<Tensor> padding_values, bool drop_remainder = false);
// The rows of every element (each component's first dimension must agree).
Dataset unbatch(const Dataset& input);
// A random permutation within a sliding buffer. seed < 0: nondeterministic. With
// reshuffle_each_iteration false every iterator gives the same order.
Dataset shuffle(const Dataset& input, int64_t buffer_size, int64_t seed = -1, bool reshuffle_each_iteration = true);
// count < 0: forever.
Dataset repeat(const Dataset& input, int64_t count = -1);
// count < 0: all.
Dataset take(const Dataset& input, int64_t count);
Dataset skip(const Dataset& input, int64_t count);
// Computes up to buffer_size elements ahead on a thread of its own (kAutotune: a few).
Dataset prefetch(const Dataset& input, int64_t buffer_size = kAutotune);
// The elements of the first iteration kept in memory; later iterations read them.
Dataset cache(const Dataset& input);
// With a filename: the first complete pass is written to <filename>.kiln-cache (component
// records as save writes them) and later iterators (in this or a later process) read the
// file. A pass that stops early leaves no file.
Dataset cache(const Dataset& input, const std::string& filename);
// TensorFlow's window: elements become windows of `size` elements (the next window starts
// `shift` elements later; a window takes every `stride`-th element). Each component of a
// window element is a scalar variant holding a dataset of that component's values
// (from_variant reads it); the last windows may be smaller unless drop_remainder.
Dataset window(const Dataset& input, int64_t size, int64_t shift, int64_t stride = 1, bool drop_remainder = false);
// The dataset a scalar variant tensor holds (as_variant's, or a window's component).
Dataset from_variant(const Tensor& variant);
// TensorFlow's interleave (flat_map: cycle_length 1): up to cycle_length inner datasets open
// at once, each made by make_inner from the next input element; block_length elements are
// taken from each in turn, and an exhausted one's place goes to the next input element. With
// prefetch > 0 every open inner dataset runs ahead of its turn on a thread of its own, by up
// to that many elements (num_parallel_calls: the inner pipelines run in parallel, in the same
// order). element_spec: the inner datasets' (their elements' dtypes are checked against it).
using DatasetMaker = std::function<Dataset(const std::vector<Tensor>&)>;
Dataset interleave(const Dataset& input, DatasetMaker make_inner, std::vector<TensorSpec> element_spec,
                   int64_t cycle_length, int64_t block_length, int64_t prefetch = 0);
// Components of every input side by side; ends with the shortest.
Dataset zip(std::vector<Dataset> inputs);
// a's elements, then b's; dtypes and ranks must agree (shapes become the common ones).
Dataset concatenate(const Dataset& a, const Dataset& b);

// tf.data.Options.threading for every stage of the pipeline below it: each parallel map runs at
// most private_threadpool_size worker threads (0: no cap), and with max_intra_op_parallelism 1
// the pipeline's functions run their kernels single-threaded (0: kiln's default, the intra-op
// pool). Other values of max_intra_op_parallelism leave kiln's pool as it is.
Dataset with_threading(const Dataset& input, int private_threadpool_size, int max_intra_op_parallelism);

// Datasets as values of traced functions (tf.data inside tf.function). A dataset, an
// iterator and an optional element are scalar variant tensors; the functions below run
// eagerly or, inside a trace, add a node (a graph holding them is not saved).
// The dataset as a scalar variant tensor (what a trace captures).
Tensor as_variant(const Dataset& dataset);
// A new pass over the dataset a variant holds (KilnMakeIterator).
Tensor make_iterator(const Tensor& dataset);
// The next element of an iterator (KilnIteratorGetNext), whose components have `spec`;
// OutOfRangeError ("End of sequence") at the end.
std::vector<Tensor> iterator_get_next(const Tensor& iterator, const std::vector<TensorSpec>& spec);
// The next element as an optional (KilnIteratorGetNextAsOptional): empty at the end.
Tensor iterator_get_next_as_optional(const Tensor& iterator);
Tensor optional_has_value(const Tensor& optional);
// InvalidArgumentError for an empty optional.
std::vector<Tensor> optional_get_value(const Tensor& optional, const std::vector<TensorSpec>& spec);
// An optional holding `components` (KilnOptionalFromValue), and an empty one (KilnOptionalNone):
// tf.experimental.Optional.from_value and .empty.
Tensor optional_from_value(const std::vector<Tensor>& components);
Tensor optional_none();
// tf.io.parse_example / parse_single_example over serialized tf.train.Example protos
// (KilnParseExample): `serialized` is a string scalar or vector (a batch). Dense features
// have a spec (int64, float32 or string; a first dim of -1 is a FixedLenSequenceFeature) and a
// default (an empty tensor: required); sparse ones (VarLenFeature) a dtype and come back as
// the indices, values and dense_shape of a SparseTensor.
struct ParsedExamples {
  std::vector<Tensor> sparse_indices, sparse_values, sparse_shapes, dense_values;
};
ParsedExamples parse_example(const Tensor& serialized, const std::vector<std::string>& dense_keys,
                             const std::vector<Tensor>& dense_defaults, const std::vector<TensorSpec>& dense_specs,
                             const std::vector<std::string>& sparse_keys, const std::vector<DType>& sparse_types);

// tf.io.decode_csv (KilnDecodeCSV): one tensor per column, each of the records' shape and of
// its default's dtype (int32, int64, float32, float64 or string; an empty default: required).
// select_cols (ascending) picks the columns to parse; empty: every column.
std::vector<Tensor> decode_csv(const Tensor& records, const std::vector<Tensor>& record_defaults,
                               const std::string& field_delim = ",", bool use_quote_delim = true,
                               const std::string& na_value = "", const std::vector<int64_t>& select_cols = {});

// An iterator's state as a checkpoint keeps it: the elements it has handed out (eagerly and
// through the ops alike). Restoring starts a new pass over its dataset and replays that many
// elements, so the handle (and every function that captured it) continues from there; exact
// for a pass that repeats itself (no unseeded shuffle, no generator with outside state).
int64_t iterator_position(const Tensor& iterator);
void iterator_restore(const Tensor& iterator, int64_t position);

// Eagerly, without an op: the next element of a concrete iterator handle, false at the end.
// Safe to call from several threads (callers take turns).
bool iterator_next(const Tensor& iterator, std::vector<Tensor>* element);

}  // namespace kiln::data
