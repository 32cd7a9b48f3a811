// The function library: bodies are named library entries, optimized like the graph, compiled,
// exported and imported once each however many nodes call them.
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <map>

#include "graph.pb.h"
#include "io/saved_files.h"
#include "io/saved_model.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

int count_in(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

TEST(FunctionLibrary, LoopBodyIsOptimized) {
  OptimizerOptions no_fusion;
  no_fusion.elementwise_fusion = false;
  auto f = function(
      [](Tensor x) {
        return while_loop([](const Tensor& v) { return v < 100.0f; },
                          [](const Tensor& v) { return v * 1.0f + constant(2.0f) * constant(3.0f); }, x);
      },
      {.optimizer = no_fusion});
  auto cf = f.get_concrete_function(TensorSpec{{}, DType::Float32});
  const std::string traced = cf.as_graph_def().str(), optimized = cf.optimized_graph_def().str();
  EXPECT_EQ(count_in(traced, "op: \"Mul\""), 2);  // v * 1 and 2 * 3, as traced
  EXPECT_EQ(count_in(optimized, "op: \"Mul\""), 0) << optimized;
  EXPECT_EQ(count_in(optimized, "op: \"AddV2\""), 1);  // v + 6
  EXPECT_EQ(f(constant(1.0f)).item<float>(), 103.0f);
  bool body_report = false;
  for (const std::string& line : cf.optimization_report()) body_report |= line.rfind("while_body", 0) == 0;
  EXPECT_TRUE(body_report);
}

TEST(FunctionLibrary, FusionRunsInsideBranches) {
  auto f = function([](Tensor x) {
    return cond(
        reduce_sum(x) > 0.0f, [&] { return tanh(x * 0.5f + 1.0f) * x; }, [&] { return x; });
  });
  auto cf = f.get_concrete_function(TensorSpec{{4}, DType::Float32});
  EXPECT_GE(count_in(cf.optimized_graph_def().str(), "KilnFusedElementwise"), 1);
  const Tensor x = constant<float>({1, 2, 3, 4});
  EXPECT_EQ(f(x).to_vector<float>(), (tanh(x * 0.5f + 1.0f) * x).to_vector<float>());
}

TEST(FunctionLibrary, ExportWritesEachBodyOnce) {
  auto f = function([](Tensor x) {
    Tensor a = cond(
        x > 0.0f, [&] { return x; }, [&] { return -x; });
    return cond(
        a > 1.0f, [&] { return a * 2.0f; }, [&] { return a; });
  });
  const std::string text = f.get_concrete_function(TensorSpec{{}, DType::Float32}).as_graph_def().str();
  EXPECT_EQ(count_in(text, "signature {"), 4);
  EXPECT_EQ(f(constant(-3.0f)).item<float>(), 6.0f);
}

// A model whose functions each call the next one twice through StatelessIf, `depth` levels
// deep: f_0(x) = x + x, f_k(x) = f_{k-1}(f_{k-1}(x)). Expanded per call it has 2^depth
// copies of f_0; as a library it has depth + 1 functions.
class NestedIf : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = temp_path("nested_if");
    save(dir, function([](Tensor x) { return x + 1.0f; }, {.arg_names = {"x"}})
                  .get_concrete_function(TensorSpec{{}, DType::Float32}));
    files_ = read_saved_files(dir);
    std::filesystem::remove_all(dir);
  }

  static void call_twice(tensorflow::FunctionDef& f, const std::string& callee) {
    auto* c = f.add_node_def();
    c->set_name("c");
    c->set_op("Less");
    c->add_input("x");
    c->add_input("x");
    std::string in = "x";
    for (const char* name : {"a", "b"}) {
      auto* n = f.add_node_def();
      n->set_name(name);
      n->set_op("StatelessIf");
      n->add_input("c:z:0");
      n->add_input(in);
      (*n->mutable_attr())["then_branch"].mutable_func()->set_name(callee);
      (*n->mutable_attr())["else_branch"].mutable_func()->set_name(callee);
      in = std::string(name) + ":output:0";
    }
    (*f.mutable_ret())[f.signature().output_arg(0).name()] = in;
  }

  // The saved model with its signature function replaced by the nested calls.
  static std::map<std::string, std::string> files(int depth) {
    tensorflow::GraphDef def = saved_graph(files_);
    tensorflow::FunctionDef* main = nullptr;
    for (auto& f : *def.mutable_library()->mutable_function())
      if (f.signature().name().rfind("__inference_", 0) == 0) main = &f;
    const tensorflow::FunctionDef shape = *main;  // one float arg x, one float output
    main->clear_node_def();
    main->clear_ret();
    call_twice(*main, "f_" + std::to_string(depth));
    for (int k = 0; k <= depth; ++k) {
      tensorflow::FunctionDef* f = def.mutable_library()->add_function();
      *f->mutable_signature() = shape.signature();
      f->mutable_signature()->set_name("f_" + std::to_string(k));
      if (k > 0) {
        call_twice(*f, "f_" + std::to_string(k - 1));
        continue;
      }
      auto* y = f->add_node_def();
      y->set_name("y");
      y->set_op("AddV2");
      y->add_input("x");
      y->add_input("x");
      (*f->mutable_ret())[f->signature().output_arg(0).name()] = "y:z:0";
    }
    return with_graph(files_, def);
  }

  static std::map<std::string, std::string> files_;
};
std::map<std::string, std::string> NestedIf::files_;

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST_F(NestedIf, EachFunctionIsBuiltOnce) {
  LoadedModel m = io::load_from_files(files(4));
  // The signature calls f_4 twice: x * 2^(2^5), from 2^5 calls of f_0.
  EXPECT_EQ(m.call("serving_default", {constant(1.0f)})[0].item<float>(), 4294967296.0f);
  const std::string text = m.signature("serving_default").as_graph_def().str();
  EXPECT_EQ(count_in(text, "signature {"), 5);  // f_0 .. f_4, each once
}

TEST_F(NestedIf, TwentyLevelsLoadFast) {
  for (int depth : {10, 20}) {
    const auto input = files(depth);
    const long rss_before = peak_rss_kb();
    const auto t0 = std::chrono::steady_clock::now();
    LoadedModel m = io::load_from_files(input);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    // Reported, not asserted (timings are the benchmarks' job): see the closing note.
    std::printf("nested If depth %d: saved_model.pb %zu bytes, load %.2f ms, peak RSS %+ld KB\n", depth,
                input.at(io::kSavedModelFile).size(), ms, peak_rss_kb() - rss_before);
    EXPECT_EQ(count_in(m.signature("serving_default").as_graph_def().str(), "signature {"), depth + 1);
  }
}

TEST_F(NestedIf, NodeBudgetRefusesBigModels) {
  expect_error<InvalidArgumentError>([&] { io::load_from_files(files(20), LoadOptions{.max_nodes = 40}); },
                                     "more than 40 nodes, the node budget of a load (LoadOptions::max_nodes)");
  EXPECT_NO_THROW(io::load_from_files(files(20), LoadOptions{.max_nodes = 70}));  // 3 per function, 21+1 functions
}

TEST_F(NestedIf, MutualRecursionIsRefused) {
  auto input = files(2);
  tensorflow::GraphDef def = saved_graph(input);
  for (auto& f : *def.mutable_library()->mutable_function())
    if (f.signature().name() == "f_0") {  // f_0 calls f_2, which calls f_1, which calls f_0
      f.clear_node_def();
      f.clear_ret();
      call_twice(f, "f_2");
    }
  input = with_graph(input, def);
  expect_error<InvalidArgumentError>([&] { io::load_from_files(input); }, "calls itself");
}

}  // namespace

namespace {

// The executor runs a While's cond and body over slots kept for the whole loop, and an
// elementwise step may write over an input that dies there (buffer forwarding). Neither may
// touch a tensor someone else holds: the caller's input, a captured value, a result.
TEST(LoopExecution, ForwardingNeverWritesOverHeldTensors) {
  const Tensor x = constant<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20});
  const Tensor scale = constant<float>(std::vector<float>(20, 0.5f), {20});
  const std::vector<float> x_before = x.to_vector<float>();
  auto f = function([&](Tensor v, Tensor n) {
    auto [i, w] = while_loop([&](Tensor i, Tensor) { return i < n; },
                             [&](Tensor i, Tensor w) { return std::make_tuple(i + 1, (w + 1.0f) * scale); },
                             std::make_tuple(constant(0), v));
    return w;
  });
  const Tensor n = constant(3);
  const Tensor y = f(x, n);
  EXPECT_EQ(x.to_vector<float>(), x_before);
  EXPECT_EQ(scale.to_vector<float>(), std::vector<float>(20, 0.5f));
  Tensor expect = x;
  for (int k = 0; k < 3; ++k) expect = (expect + 1.0f) * scale;
  EXPECT_EQ(y.to_vector<float>(), expect.to_vector<float>());
  const Tensor y2 = f(x, n);  // a second call must not write over the first call's result
  EXPECT_EQ(y.to_vector<float>(), expect.to_vector<float>());
  EXPECT_EQ(y2.to_vector<float>(), expect.to_vector<float>());
  EXPECT_EQ(f(x, constant(0)).to_vector<float>(), x_before);  // zero iterations: the input itself
}

// Shapes known only at run time (unknown dims): an elementwise step writes over an input
// that dies there only once its shape function has said the input has the output's shape.
// The product below is [2, 1] against the output's [2, 4] in the first call (a broadcast:
// writing four columns into it would overrun it) and [2, 4] in the second (forwarded).
TEST(LoopExecution, RunTimeShapesForwardOnlyAnInputOfTheOutputsShape) {
  auto f = function([](Tensor x, Tensor w, Tensor y) { return tanh(matmul(x, w)) + y; });
  auto cf = f.get_concrete_function(TensorSpec{{-1, -1}, DType::Float32}, TensorSpec{{-1, -1}, DType::Float32},
                                    TensorSpec{{-1, 4}, DType::Float32});
  const Tensor x = random_uniform({2, 3}, -1, 1, DType::Float32, 1);
  const Tensor y = random_uniform({2, 4}, -1, 1, DType::Float32, 2);
  for (int64_t cols : {1, 4, 1}) {
    const Tensor w = random_uniform({3, cols}, -1, 1, DType::Float32, 3);
    const Tensor got = cf(x, w, y)[0];
    EXPECT_EQ(got.shape().dims(), (Dims{2, 4})) << cols;
    EXPECT_EQ(got.to_vector<float>(), (tanh(matmul(x, w)) + y).to_vector<float>()) << cols;
  }
}

TEST(LoopExecution, BodyReturningAVariableTwice) {
  auto f = function([](Tensor a, Tensor b) {
    auto [p, q] = while_loop([](Tensor p, Tensor) { return p < 10.0f; },
                             [](Tensor p, Tensor q) { return std::make_tuple(p + q, p + q); }, std::make_tuple(a, b));
    return p * 100.0f + q;
  });
  // (1,1) -> (2,2) -> (4,4) -> (8,8) -> (16,16)
  EXPECT_EQ(f(constant(1.0f), constant(1.0f)).item<float>(), 1616.0f);
}

}  // namespace

namespace {

// A body result that is a constant (after optimization, the Const's own slot): the loop must
// not move the constant out of the plan.
TEST(LoopExecution, BodyReturningAConstant) {
  auto f = function([](Tensor n) {
    auto [i, s] = while_loop([&](Tensor i, Tensor) { return i < n; },
                             [](Tensor i, Tensor) { return std::make_tuple(i + 1, constant(7)); },
                             std::make_tuple(constant(0), constant(0)));
    return i * 100 + s;
  });
  EXPECT_EQ(f(constant(3)).item<int32_t>(), 307);
  EXPECT_EQ(f(constant(5)).item<int32_t>(), 507);
  EXPECT_EQ(f(constant(0)).item<int32_t>(), 0);
}

}  // namespace
