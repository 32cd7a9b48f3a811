// The loader treats every file as untrusted: each malformed input below is a clear error,
// never a crash, hang or huge allocation. The corpus is made by mutating a valid SavedModel
// kiln saved (control flow, variables, constants) one field at a time.
#include <filesystem>
#include <fstream>
#include <tuple>
#include <vector>

#include "graph.pb.h"
#include "io/proto_values.h"
#include "io/saved_files.h"
#include "io/saved_model.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;
namespace fs = std::filesystem;

namespace {

class Malformed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = (fs::temp_directory_path() / ("kiln_malformed_" + std::to_string(::getpid()))).string();
    Variable w(constant<float>({1, 2, 3, 4}, {2, 2}), "w");
    auto f = function(
        [&](Tensor x) {
          Tensor y = matmul(x, w.read()) + 1.0f;
          return cond(
              reduce_sum(y) > 0, [&] { return y; }, [&] { return -y; });
        },
        {.arg_names = {"x"}});
    save(dir_, f.get_concrete_function(ones({1, 2})));
    files_ = read_saved_files(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static tensorflow::GraphDef graph() { return saved_graph(files_); }
  // The signature's FunctionDef.
  static tensorflow::FunctionDef* main_function(tensorflow::GraphDef& def) {
    for (auto& f : *def.mutable_library()->mutable_function())
      if (f.signature().name().rfind("__inference_", 0) == 0) return &f;
    return nullptr;
  }
  static tensorflow::NodeDef* node_of(tensorflow::FunctionDef* f, const std::string& op) {
    for (auto& n : *f->mutable_node_def())
      if (n.op() == op) return &n;
    return nullptr;
  }
  // Loads with one file replaced (checksums off, so the parser behind them is reached).
  template <class E = InvalidArgumentError>
  static void expect_rejected(const std::string& file, const std::string& bytes, const std::string& message) {
    auto files = files_;
    files[file] = bytes;
    expect_error<E>([&] { io::load_from_files(files); }, message);
  }
  template <class E = InvalidArgumentError>
  static void expect_graph_rejected(const tensorflow::GraphDef& def, const std::string& message) {
    expect_error<E>([&] { io::load_from_files(with_graph(files_, def)); }, message);
  }

  static std::string dir_;
  static std::map<std::string, std::string> files_;
};
std::string Malformed::dir_;
std::map<std::string, std::string> Malformed::files_;

}  // namespace

TEST_F(Malformed, TheUnmodifiedModelLoads) {
  EXPECT_NO_THROW(io::load_from_files(files_));
  EXPECT_NO_THROW(load(dir_));
}

TEST_F(Malformed, CorruptFilesOnDisk) {
  const std::string copy = dir_ + "_copy";
  fs::remove_all(copy);
  fs::copy(dir_, copy, fs::copy_options::recursive);
  {
    std::fstream f(copy + "/" + io::kVariablesDataFile, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3);
    f.put('\x7f');
  }
  expect_error<DataLossError>([&] { load(copy); }, "checksum mismatch (the data file is corrupt)");
  fs::remove(copy + "/" + io::kVariablesIndexFile);
  expect_error<NotFoundError>([&] { load(copy); }, "variables.index");
  fs::remove_all(copy);
  expect_error<NotFoundError>([&] { load(copy); }, "cannot open");
}

TEST_F(Malformed, EarlierKilnFormatIsNamed) {
  const std::string old = dir_ + "_old";
  fs::create_directories(old);
  std::ofstream(old + "/manifest.json") << "{}";
  expect_error<UnimplementedError>([&] { load(old); }, "kiln's first format");
  fs::remove_all(old);
}

TEST_F(Malformed, SavedModelBytes) {
  expect_rejected<DataLossError>(io::kSavedModelFile, std::string("\xff\xff\xff\xff garbage", 12),
                                 "is not a valid SavedModel");
  expect_rejected<UnimplementedError>(io::kSavedModelFile, "", "with one meta graph; this one has 0");
  expect_rejected<DataLossError>(io::kVariablesIndexFile, "short", "checkpoint");
  expect_rejected<DataLossError>(io::kVariablesDataFile, "", "runs past the end of the data");
}

TEST_F(Malformed, UnknownOp) {
  auto def = graph();
  node_of(main_function(def), "MatMul")->set_op("FooBar");
  expect_graph_rejected<UnimplementedError>(def, "uses 1 op(s) kiln does not have:\n  FooBar (in __inference_");
  def = graph();
  node_of(main_function(def), "MatMul")->set_op("KilnFusedElementwise");  // internal ops are never loaded
  expect_graph_rejected<UnimplementedError>(def, "KilnFusedElementwise (in __inference_");
}

TEST_F(Malformed, AttrTypesAndNames) {
  auto def = graph();
  (*node_of(main_function(def), "MatMul")->mutable_attr())["transpose_a"].set_i(3);
  expect_graph_rejected(def, "attr 'transpose_a' has the wrong type: expected bool");
  def = graph();
  // An attr with a default may be missing (TensorFlow strips them); one without may not.
  node_of(main_function(def), "MatMul")->mutable_attr()->erase("transpose_b");
  {
    std::string bytes;
    def.SerializeToString(&bytes);
    auto files = files_;
    files["graph.pb"] = bytes;
    EXPECT_NO_THROW(io::load_from_files(files));
  }
  def = graph();
  node_of(main_function(def), "Const")->mutable_attr()->erase("dtype");
  expect_graph_rejected(def, "NodeDef missing attr 'dtype'");
  def = graph();
  (*node_of(main_function(def), "MatMul")->mutable_attr())["frobnicate"].set_b(true);
  expect_graph_rejected(def, "NodeDef mentions attr 'frobnicate' not in Op<name=MatMul>");
}

TEST_F(Malformed, DimsDtypesAndTensorSizes) {
  auto def = graph();
  auto* value = (*node_of(main_function(def), "Const")->mutable_attr())["value"].mutable_tensor();
  value->mutable_tensor_shape()->add_dim()->set_size(-5);
  expect_graph_rejected(def, "bad dimension -5");
  def = graph();
  value = (*node_of(main_function(def), "Const")->mutable_attr())["value"].mutable_tensor();
  value->set_dtype(static_cast<tensorflow::DataType>(11));  // qint8, which kiln lacks
  expect_graph_rejected(def, "unsupported dtype 11");
  def = graph();
  value = (*node_of(main_function(def), "Const")->mutable_attr())["value"].mutable_tensor();
  value->clear_float_val();
  value->set_tensor_content(std::string(7, 'x'));
  value->mutable_tensor_shape()->add_dim()->set_size(2);
  expect_graph_rejected(def, "tensor_content has 7 bytes; dtype and shape need 8");
  // A string tensor's encoded list (lengths, then bytes) must account for every byte, and a
  // forged length or count may not make kiln allocate before the bytes are checked.
  for (const auto& [content, dims, message] : std::vector<std::tuple<std::string, int64_t, std::string>>{
           {std::string("\x02\x02"
                        "abc",
                        5),
            2, "add up to 4 bytes; it holds 3"},
           {std::string("\x05\x01"
                        "abc",
                        5),
            2, "add up to 6 bytes; it holds 3"},
           {std::string("\xff\xff\xff\xff\xff\xff", 6), 1, "string length in tensor_content is malformed"},
           {std::string("\x01"
                        "a",
                        2),
            int64_t{1} << 30, "too short for 1073741824 strings"}}) {
    def = graph();
    value = (*node_of(main_function(def), "Const")->mutable_attr())["value"].mutable_tensor();
    value->set_dtype(tensorflow::DT_STRING);
    value->clear_float_val();
    value->set_tensor_content(content);
    value->clear_tensor_shape();
    value->mutable_tensor_shape()->add_dim()->set_size(dims);
    expect_graph_rejected(def, message);
  }
  def = graph();  // a small value asking for a huge tensor is refused before allocating
  value = (*node_of(main_function(def), "Const")->mutable_attr())["value"].mutable_tensor();
  value->mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 31);
  expect_graph_rejected(def, "must store its bytes in tensor_content");
  def = graph();
  value = (*node_of(main_function(def), "Const")->mutable_attr())["value"].mutable_tensor();
  for (int i = 0; i < 40; ++i) value->mutable_tensor_shape()->add_dim()->set_size(1);
  expect_graph_rejected(def, "rank 40 exceeds 32");
  def = graph();
  main_function(def)->mutable_signature()->mutable_input_arg(0)->set_type(tensorflow::DT_INT32);
  expect_graph_rejected(def, "is int32 but");
}

TEST_F(Malformed, DanglingAndCyclicInputs) {
  auto def = graph();
  auto* mm = node_of(main_function(def), "MatMul");
  mm->set_input(0, "nowhere:output:0");
  expect_graph_rejected(def, "input 'nowhere:output:0' names no node");
  def = graph();
  node_of(main_function(def), "MatMul")->set_input(0, "x:output:abc");
  expect_graph_rejected(def, "malformed input 'x:output:abc'");
  def = graph();
  mm = node_of(main_function(def), "MatMul");
  mm->set_input(0, mm->name() + ":output:5");
  expect_graph_rejected(def, "is on a cycle");
  def = graph();
  auto* add = node_of(main_function(def), "AddV2");
  mm = node_of(main_function(def), "MatMul");
  mm->set_input(0, add->name() + ":output:0");
  expect_graph_rejected(def, "is on a cycle");
  def = graph();
  mm = node_of(main_function(def), "MatMul");
  mm->set_input(0, node_of(main_function(def), "Const")->name() + ":output:3");
  expect_graph_rejected(def, "output 3 does not exist");
  def = graph();
  node_of(main_function(def), "MatMul")->add_input("x");
  expect_graph_rejected(def, "expects 2 inputs, got 3");
  def = graph();
  node_of(main_function(def), "MatMul")->set_name("x");
  expect_graph_rejected(def, "node name 'x' is empty, malformed or not unique");
}

TEST_F(Malformed, FunctionsThatCallThemselves) {
  auto def = graph();
  std::string branch;
  for (auto& f : *def.mutable_library()->mutable_function())
    if (f.signature().name().rfind("__inference_", 0) != 0) branch = f.signature().name();
  ASSERT_FALSE(branch.empty());
  // Make a branch contain an If whose branch is itself.
  for (auto& f : *def.mutable_library()->mutable_function()) {
    if (f.signature().name() != branch) continue;
    auto* n = f.add_node_def();
    n->set_name("recurse");
    n->set_op("StatelessIf");
    n->add_input(f.signature().input_arg(0).name());
    n->add_input(f.signature().input_arg(0).name());
    (*n->mutable_attr())["then_branch"].mutable_func()->set_name(branch);
    (*n->mutable_attr())["else_branch"].mutable_func()->set_name(branch);
  }
  expect_graph_rejected(def, "calls itself");
  def = graph();
  node_of(main_function(def), "StatelessIf")->mutable_attr()->at("then_branch").mutable_func()->set_name("ghost");
  expect_graph_rejected(def, "function 'ghost' is not in the function library");
  def = graph();
  *def.mutable_library()->add_function() = *main_function(def);
  expect_graph_rejected(def, "defines '" + main_function(def)->signature().name() + "' twice");
}

TEST_F(Malformed, Variables) {
  auto def = graph();
  tensorflow::NodeDef* handle = nullptr;  // the main graph's handle, fed to the signature's call
  for (auto& n : *def.mutable_node())
    if (n.op() == "VarHandleOp") handle = &n;
  ASSERT_NE(handle, nullptr);
  (*handle->mutable_attr())["shape"].mutable_shape()->add_dim()->set_size(9);
  expect_graph_rejected(def, "is saved with shape (2, 2), its handle says otherwise");
  def = graph();
  node_of(main_function(def), "ReadVariableOp")->clear_input();
  expect_graph_rejected(def, "needs a variable handle");
  // The object graph binds the call's variable to the root object, which has no value.
  tensorflow::SavedModel sm = saved_model_of(files_);
  for (auto& [name, fn] : *sm.mutable_meta_graphs(0)->mutable_object_graph_def()->mutable_concrete_functions())
    fn.set_bound_inputs(0, 0);
  auto files = files_;
  sm.SerializeToString(&files[io::kSavedModelFile]);
  expect_error<InvalidArgumentError>([&] { io::load_from_files(files); }, "has no saved variable value");
  for (auto& [name, fn] : *sm.mutable_meta_graphs(0)->mutable_object_graph_def()->mutable_concrete_functions())
    fn.set_bound_inputs(0, 99);
  sm.SerializeToString(&files[io::kSavedModelFile]);
  expect_error<InvalidArgumentError>([&] { io::load_from_files(files); }, "bound input names node 99; it has");
}

// The graph, the object graph and the checkpoint must agree on each variable's dtype.
TEST_F(Malformed, VariableDtypesAgree) {
  auto def = graph();
  (*node_of(main_function(def), "ReadVariableOp")->mutable_attr())["dtype"].set_type(tensorflow::DT_INT32);
  expect_graph_rejected(def, "Trying to read variable with wrong dtype. Expected int32 got float");
  tensorflow::SavedModel sm = saved_model_of(files_);
  for (auto& node : *sm.mutable_meta_graphs(0)->mutable_object_graph_def()->mutable_nodes())
    if (node.has_variable()) node.mutable_variable()->set_dtype(tensorflow::DT_INT64);
  auto files = files_;
  sm.SerializeToString(&files[io::kSavedModelFile]);
  expect_error<InvalidArgumentError>([&] { io::load_from_files(files); }, "the object graph declares int64");
}

// An optimizer update takes two variables (TensorFlow's order: handles first).
TEST(MalformedTraining, OpsWithSeveralVariableHandles) {
  Variable w(constant<float>({1, 2}, {2}), "w");
  SGD opt(0.1, 0.9);
  auto f = function([&](const Tensor& g) { opt.apply_gradients({g}, {&w}); }, {.arg_names = {"g"}});
  const std::string dir = temp_path("malformed_training");
  save(dir, f.get_concrete_function(constant<float>({1, 1}, {2})));
  const std::map<std::string, std::string> files = read_saved_files(dir);
  fs::remove_all(dir);
  EXPECT_NO_THROW(io::load_from_files(files));
  auto rejected = [&](const std::function<void(tensorflow::NodeDef&)>& mutate, const std::string& message) {
    tensorflow::GraphDef def = saved_graph(files);
    tensorflow::NodeDef* apply = nullptr;
    for (auto& fn : *def.mutable_library()->mutable_function())
      for (auto& n : *fn.mutable_node_def())
        if (n.op() == "ResourceApplyKerasMomentum") apply = &n;
    ASSERT_NE(apply, nullptr);
    mutate(*apply);
    expect_error<InvalidArgumentError>([&] { io::load_from_files(with_graph(files, def)); }, message);
  };
  rejected([](tensorflow::NodeDef& n) { n.mutable_input()->DeleteSubrange(1, 1); },
           "needs a variable handle (VarHandleOp) as input 1");
  rejected([](tensorflow::NodeDef& n) { n.mutable_input()->SwapElements(1, 2); },
           "variable handles must come before its other inputs");
  rejected([](tensorflow::NodeDef& n) { n.set_input(1, n.input(0)); }, "var and accum must be different variables");
  rejected([](tensorflow::NodeDef& n) { n.set_op("ResourceApplyGradientDescent"); },
           "takes 1 variable handle(s), got 2");
  rejected([](tensorflow::NodeDef& n) { (*n.mutable_attr())["use_nesterov"].set_i(1); }, "use_nesterov");
}

// An op row's attr defaults are values of the attrs' kinds (the loader fills stripped
// attrs with them, and kernels read them by kind).
TEST(AttrSpecs, DefaultsHoldTheirKind) {
  auto holds = [](const ops::AttrSpec& a) {
    const ops::AttrValue& v = a.default_value;
    switch (a.kind) {
      case ops::AttrKind::kInt:
        return std::holds_alternative<int64_t>(v);
      case ops::AttrKind::kFloat:
        return std::holds_alternative<double>(v);
      case ops::AttrKind::kBool:
        return std::holds_alternative<bool>(v);
      case ops::AttrKind::kType:
        return std::holds_alternative<DType>(v);
      case ops::AttrKind::kIntList:
        return std::holds_alternative<std::vector<int64_t>>(v);
      case ops::AttrKind::kString:
        return std::holds_alternative<std::string>(v);
      case ops::AttrKind::kShape:
        return std::holds_alternative<ops::ShapeAttr>(v);
      default:
        return false;  // tensors, functions and variables have no defaults
    }
  };
  int with_default = 0;
  for (const ops::OpDef* op : ops::all_ops())
    for (const ops::AttrSpec& a : op->attr_specs) {
      ASSERT_NE(a.name, nullptr) << op->name;
      if (!a.has_default()) continue;
      ++with_default;
      EXPECT_TRUE(holds(a)) << op->name << " attr " << a.name;
    }
  EXPECT_GT(with_default, 20);
}

// Code outside the rows reads these traits' attrs at fixed places.
TEST(AttrSpecs, TraitAttrsSitWhereTheTraitsSay) {
  for (const ops::OpDef* op : ops::all_ops()) {
    if (op->has(ops::kConstValue)) {
      ASSERT_GT(op->attr_specs.size(), size_t{ops::kConstValueAttr}) << op->name;
      EXPECT_STREQ(op->attr_specs[ops::kConstValueAttr].name, "value") << op->name;
    }
    if (op->has(ops::kReadsVariable)) {
      ASSERT_GT(op->attr_specs.size(), size_t{ops::kReadsVariableAttr}) << op->name;
      EXPECT_EQ(op->attr_specs[ops::kReadsVariableAttr].kind, ops::AttrKind::kResource) << op->name;
    }
  }
  EXPECT_EQ(ops::attr_index(ops::op::MatMul(), "transpose_b"), 1);
  EXPECT_THROW(ops::attr_index(ops::op::MatMul(), "adj_x"), InternalError);
  EXPECT_THROW(ops::attr_index({{&ops::op::MaxPool(), "data_format"}, {&ops::op::AvgPool(), "data_format"}}),
               InternalError);  // 4 vs 3: shared code may not read it at one place
}

// Every row names its inputs (kiln.raw_ops and docs/ops.md are generated from them): as many
// as it takes, unless a list argument takes the rest; a list's number attr is one of its attrs.
TEST(ArgSpecs, EveryRowNamesItsInputs) {
  for (const ops::OpDef* op : ops::all_ops()) {
    int lists = 0;
    for (const ops::ArgSpec& a : op->input_args) {
      ASSERT_NE(a.name, nullptr) << op->name;
      if (!a.list) continue;
      ++lists;
      if (a.number_attr) {
        EXPECT_GE(ops::attr_index(*op, a.number_attr), 0) << op->name;
      }
    }
    if (lists == 0)
      EXPECT_EQ(static_cast<int>(op->input_args.size()), op->num_inputs) << op->name;
    else
      EXPECT_EQ(op->num_inputs, -1) << op->name << ": a list argument makes the input count variable";
  }
}

// A While that carries a variable: its body must hand the handle back unchanged, in its place.
TEST(MalformedLoop, BodyMustReturnItsVariableHandle) {
  Variable w(constant(0.5f), "w");
  auto f = function(
      [&](Tensor x) {
        auto [i, y] = while_loop([](Tensor i, Tensor) { return i < 3; },
                                 [&](Tensor i, Tensor y) { return std::make_tuple(i + 1, y * w.read()); },
                                 std::make_tuple(constant(0), x));
        return y;
      },
      {.arg_names = {"x"}});
  const std::string dir = temp_path("malformed_loop");
  save(dir, f.get_concrete_function(constant(2.0f)));
  const std::map<std::string, std::string> files = read_saved_files(dir);
  fs::remove_all(dir);
  EXPECT_FLOAT_EQ(io::load_from_files(files).call("serving_default", {constant(2.0f)})[0].item<float>(), 0.25f);
  auto rejected = [&](const std::function<void(tensorflow::FunctionDef&)>& mutate, const std::string& message) {
    tensorflow::GraphDef def = saved_graph(files);
    tensorflow::FunctionDef* body = nullptr;
    for (auto& fn : *def.mutable_library()->mutable_function())
      if (fn.signature().name().find("_loop") != std::string::npos) body = &fn;
    ASSERT_NE(body, nullptr);
    mutate(*body);
    expect_error<InvalidArgumentError>([&] { io::load_from_files(with_graph(files, def)); }, message);
  };
  // The handle's output names a tensor instead.
  rejected(
      [](tensorflow::FunctionDef& body) {
        for (auto& [key, value] : *body.mutable_ret())
          if (key.find("_out") != std::string::npos) value = body.signature().input_arg(0).name();
      },
      "is a resource but returns a tensor");
  // The handle comes back in another place.
  rejected(
      [](tensorflow::FunctionDef& body) {
        auto* outs = body.mutable_signature()->mutable_output_arg();
        outs->SwapElements(0, outs->size() - 1);
      },
      "loop body");
}
