// The guided tour of kiln: `make demo` runs this. Each section prints what it shows.
#include <kiln/kiln.h>

#include <chrono>
#include <cstdlib>
#include <iostream>

using namespace kiln;

namespace {
void section(const char* title) { std::cout << "\n== " << title << " ==\n"; }

Tensor a_regular_function(Tensor x, Tensor y, Tensor b) {
  x = matmul(x, y);
  x = x + b;
  return x;
}

Tensor power(Tensor x, int y) {
  Tensor result = eye(10, DType::Int32);
  for (int i = 0; i < y; ++i) result = matmul(x, result);
  return result;
}

template <class F>
double micros_per_call(F&& f, int n) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
}
// Runs a shell command (a fresh process), echoing it first.
void run_command(const std::string& command) {
  std::cout << "$ " << command << "\n" << std::flush;
  if (std::system(command.c_str()) != 0) std::cout << "(command failed)\n";
}

}  // namespace

int main() {
  std::cout << std::unitbuf;  // kiln::print writes to stderr: keep the two streams in order
  section("Tensors");
  Tensor m = constant<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  std::cout << m << "\n";
  std::cout << constant(5.5) << "\n" << range(0, 5, 1, DType::Int32) << "\n" << eye(2, DType::Int64) << "\n";
  std::cout << "shape " << m.shape().str() << ", dtype " << dtype_name(m.dtype()) << "\n";

  section("Ops and broadcasting (TensorFlow semantics)");
  std::cout << "m + [10, 20, 30] = " << m + constant<float>({10, 20, 30}) << "\n";
  std::cout << "m * 2 = " << m * 2 << "\n";
  std::cout << "reduce_sum(m, {1}) = " << reduce_sum(m, {1}) << "\n";
  std::cout << "softmax(m) = " << softmax(m) << "\n";
  std::cout << "-7 // 2 = " << floordiv(constant(-7), 2) << "   (integer floor division)\n";
  std::cout << "7 / 2 = " << constant(7) / 2 << "   (truediv of ints gives float64)\n";

  section("Every op by its TensorFlow name (execute_op, the registry's generic call)");
  std::cout << "Pad(m) = " << execute_op("Pad", {m, constant<int32_t>({0, 1, 1, 0}, {2, 2})})[0] << "\n";
  std::cout << "Einsum = "
            << execute_op("Einsum", {m, m}, {{"equation", std::string("ij,kj->ik")}, {"N", int64_t{2}}})[0] << "\n";
  std::cout << "uint8 pixels as float32: " << cast(constant<uint8_t>({0, 128, 255}), DType::Float32) / 255.0f << "\n";

  section("Errors are typed and name the op");
  try {
    (void)(m + constant<float>({1, 2, 3, 4}));
  } catch (const InvalidArgumentError& e) {
    std::cout << "InvalidArgumentError: " << e.what() << "\n";
  }
  try {
    (void)(constant<float>({1}) + constant<int32_t>({1}));
  } catch (const Error& e) {
    std::cout << error_code_name(e.code()) << ": " << e.what() << "\n";
  }

  section("kiln::function: trace once, run the graph");
  auto a_function_that_uses_a_graph = function(a_regular_function);
  Tensor x1 = constant<float>({1, 2}, {1, 2}), y1 = constant<float>({2, 3}, {2, 1}), b1 = constant(4.0f);
  std::cout << "eager:    " << a_regular_function(x1, y1, b1) << "\n";
  std::cout << "function: " << a_function_that_uses_a_graph(x1, y1, b1) << "\n";

  section("Polymorphism: one graph per input signature");
  auto my_relu = function(
      [](Tensor x) {
        std::cout << "  (tracing my_relu with " << x << ")\n";  // host side effect: only while tracing
        return maximum(constant(0.0), x);
      },
      {.name = "my_relu", .arg_names = {"x"}});
  std::cout << my_relu(constant(5.5)) << "\n";
  std::cout << my_relu(std::vector<double>{1, -1}) << "\n";
  std::cout << my_relu(constant<double>({3, -3})) << "\n";
  std::cout << my_relu(constant(-2.5)) << "   (no new trace)\n";
  std::cout << "traces: " << my_relu.tracing_count() << "\n" << my_relu.pretty_printed_concrete_signatures();

  section("Why it traced");
  auto scaled = function([](Tensor x, int y) { return x * y; }, {.arg_names = {"x", "y"}});
  (void)scaled(constant<int32_t>({1, 2}), 2);
  (void)scaled(constant<int32_t>({1, 2}), 3);
  (void)scaled(constant<int32_t>({1, 2, 3}), 3);
  for (const auto& reason : scaled.trace_log()) std::cout << "  " << reason << "\n";

  section("kiln::print runs on every call; std::cout only while tracing");
  auto noisy = function([](Tensor x) {
    std::cout << "  std::cout: tracing\n";
    print("  kiln::print: x =", x);
    return x + 1;
  });
  (void)noisy(constant(1));
  (void)noisy(constant(2));
  std::cerr.flush();

  section("Non-strict execution: unused ops do not run");
  auto unused = function([](Tensor x) {
    (void)gather(x, std::vector<int64_t>{1});  // out of range, but nothing needs it
    return x;
  });
  std::cout << unused(constant<float>({0})) << "\n";

  section("input_signature and reduce_retracing");
  auto any_rank = function([](Tensor x) { return x + 1; },
                           {.input_signature = std::vector<TensorSpec>{{TensorShape::unknown(), DType::Int32}}});
  (void)any_rank(constant(1));
  (void)any_rank(constant<int32_t>({1, 2}));
  std::cout << "unknown-rank signature, scalar and vector calls: " << any_rank.tracing_count() << " trace\n";
  auto relaxed = function([](Tensor x) { return x * 2; }, {.reduce_retracing = true});
  for (int n : {3, 5, 7, 9}) (void)relaxed(zeros({n}));
  std::cout << "reduce_retracing over shapes (3,), (5,), (7,), (9,): " << relaxed.tracing_count() << " traces\n";

  section("Control flow and state: cond, while_loop, Variable");
  auto simple_relu = function([](Tensor x) {
    return cond(
        greater(x, 0), [&] { return x; }, [&] { return zeros({}, x.dtype()); });
  });
  std::cout << "simple_relu(3) = " << simple_relu(constant(3)) << ", simple_relu(-3) = " << simple_relu(constant(-3))
            << "\n";
  auto sum_to = function([](Tensor n) {
    auto [i, s] = while_loop([&](Tensor i, Tensor) { return i < n; },
                             [](Tensor i, Tensor s) { return std::make_tuple(i + 1, s + i); },
                             std::make_tuple(constant(0), constant(0)));
    return s;
  });
  std::cout << "sum of 0..99 with a while_loop: " << sum_to(constant(100)) << " (" << sum_to.tracing_count()
            << " trace)\n";
  // Loop bodies and branches are functions of the graph's library, optimized like the graph.
  auto grow = function([](Tensor v) {
    return while_loop([](const Tensor& v) { return v < 100.0f; },
                      [](const Tensor& v) { return v * 1.0f + constant(2.0f) * constant(3.0f); }, v);
  });
  for (const std::string& line : grow.get_concrete_function(constant(1.0f)).optimization_report())
    if (line.rfind("while_body", 0) == 0) std::cout << "optimizer, inside the loop body: " << line << "\n";
  Variable counter(constant(0), "counter");
  auto step = function([&](Tensor x) {
    counter.assign_add(1);
    return x + cast(counter.read(), DType::Float32);
  });
  std::cout << "f(1.0) = " << step(constant(1.0f)) << ", then " << step(constant(1.0f))
            << "; counter = " << counter.read() << "\n";

  section("The graph, as TensorFlow's GraphDef text");
  auto positive = function([](Tensor x) { return greater(x, 0); }, {.arg_names = {"x"}});
  std::cout << positive.get_concrete_function(constant(1)).as_graph_def().str();

  section("Graph mode is faster: power(x, 100) on a 10x10 int32 matrix");
  Tensor x = random_uniform({10, 10}, -1, 2, DType::Int32, 7);
  auto power_as_graph = function(power);
  (void)power_as_graph(x, 100);
  const double eager_us = micros_per_call([&] { (void)power(x, 100); }, 300);
  const double graph_us = micros_per_call([&] { (void)power_as_graph(x, 100); }, 300);
  std::cout << "eager: " << eager_us << " us/call, function: " << graph_us << " us/call\n";

  section("Gradients: GradientTape, eagerly and inside a function");
  {
    Variable w(constant(3.0f), "w");
    GradientTape tape;
    Tensor y = w * w;
    std::cout << "d(w^2)/dw at w = 3: " << tape.gradient(y, {&w})[0] << "\n";
    // A whole training step (forward, loss, gradients, SGD update) traced into one graph.
    Dense layer(4, 3, nullptr, 1, "classifier");
    SGD sgd(0.5, 0.9);
    Tensor features = random_normal({32, 4}, 0, 1, DType::Float32, 2);
    Tensor labels = argmax(matmul(features, constant<float>({1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, -1}, {4, 3})), 1);
    auto train_step = function([&](const Tensor& x, const Tensor& y) {
      GradientTape t;
      Tensor loss = reduce_mean(sparse_softmax_cross_entropy_with_logits(y, layer(x)));
      sgd.apply_gradients(t.gradient(loss, layer.trainable_variables()), layer.trainable_variables());
      return loss;
    });
    std::cout << "loss:";
    for (int i = 0; i < 40; ++i) {
      const float loss = train_step(features, labels).item<float>();
      if (i % 8 == 0 || i == 39) std::cout << " " << loss;
    }
    const ConcreteFunction cf = train_step.get_concrete_function(features, labels);
    std::cout << "\nthe training step is one graph: " << cf.graph().size() << " traced nodes, "
              << cf.optimized_graph().size() << " after optimization\n";
    int updates = 0;
    for (const Operation& op : cf.optimized_graph().operations) updates += op.type == "ResourceApplyKerasMomentum";
    std::cout << "its SGD update: " << updates
              << " ResourceApplyKerasMomentum ops (TensorFlow's fused update: one in-place pass per variable)\n";
  }

  section("Portable: save, run in a fresh process, export to TensorFlow.js, draw");
  Variable kernel(constant<float>({0.5f, -1, 2, 1}, {2, 2}), "dense/kernel");
  auto dense = function(
      [&](Tensor inputs) { return relu(matmul(inputs, kernel.read())); },
      {.arg_names = {"x"}, .input_signature = std::vector<TensorSpec>{{TensorShape({-1, 2}), DType::Float32, "x"}}});
  const std::string dir = "tour_model";
  save(dir, dense.get_concrete_function(ones({1, 2})));
  std::cout << "saved to " << dir << "/ (saved_model.pb, variables/: TensorFlow's SavedModel)\n";
  std::cout << "in this process: " << dense(constant<float>({1, 2}, {1, 2})) << "\n";
  run_command(std::string(KILN_CLI) + " show " + dir);
  run_command(std::string(KILN_CLI) + " run " + dir + " --input 'x=[[1,2],[3,-4]]'");
  run_command(std::string(KILN_CLI) + " export-tfjs " + dir + " tour_model_tfjs");
  run_command(std::string(KILN_CLI) + " graph " + dir + " --format svg -o tour_model.svg");
  std::cout << "drew the graph in tour_model.svg\n";

  section("Limits for a server: a deadline, a memory budget (kiln/limits.h)");
  {
    auto spin = function([](Tensor x) {  // a loop whose condition never turns false
      auto [i, v] = while_loop([](Tensor i, Tensor) { return i >= 0; },
                               [](Tensor i, Tensor v) { return std::make_tuple(i + 1, v * 1.0f); },
                               std::make_tuple(constant(0), x));
      return v;
    });
    const auto start = std::chrono::steady_clock::now();
    try {
      RunLimitsScope limits({.timeout = std::chrono::milliseconds(50)});
      spin(constant(1.0f));
    } catch (const DeadlineExceededError& e) {
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      std::cout << "a loop that never ends, under a 50 ms deadline: " << error_code_name(e.code()) << " after "
                << (ms < 100 ? "50-100" : "over 100") << " ms\n";
    }
    try {
      RunLimitsScope limits({.memory_limit_bytes = 1 << 20});
      (void)zeros({1 << 20});  // 4 MB
    } catch (const ResourceExhaustedError& e) {
      std::cout << "4 MB of zeros under a 1 MB budget: " << error_code_name(e.code()) << "\n";
    }
    std::cout << "and kiln goes on: " << spin.tracing_count() << " trace, " << zeros({2}) << "\n";
  }
  return 0;
}
