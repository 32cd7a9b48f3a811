# The programs of the R guide "Introduction to graphs and tf_function()" (the seed), printing
# what the guide prints.
library(magrittr, include.only = "%>%")

test_that("a Function computes what the R function computes, inner functions included", {
  a_regular_function <- function(x, y, b) {
    x %>% tf$matmul(y) %>% { . + b }
  }
  a_function_that_uses_a_graph <- tf_function(a_regular_function)
  x1 <- as_tensor(1:2, "float64", shape = c(1, 2))
  y1 <- as_tensor(2:3, "float64", shape = c(2, 1))
  b1 <- as_tensor(4)
  expect_equal(as.array(a_regular_function(x1, y1, b1)), as.array(a_function_that_uses_a_graph(x1, y1, b1)))
  inner_function <- function(x, y, b) tf$matmul(x, y) + b
  outer_function <- tf_function(function(x) {
    y <- as_tensor(2:3, "float64", shape = c(2, 1))
    b <- as_tensor(4.0)
    inner_function(x, y, b)
  })
  expect_output(print(outer_function(as_tensor(1:2, "float64", shape = c(1, 2)))),
                "tf.Tensor([[12.]], shape=(1, 1), dtype=float64)", fixed = TRUE)
})

test_that("R `if` on a tensor becomes a graph cond", {
  simple_relu <- function(x) {
    if (tf$greater(x, 0)) x else as_tensor(0, x$dtype)
  }
  tf_simple_relu <- tf_function(simple_relu)
  expect_equal(format(tf_simple_relu(as_tensor(1))), "tf.Tensor(1.0, shape=(), dtype=float64)")
  expect_equal(format(tf_simple_relu(as_tensor(-1))), "tf.Tensor(0.0, shape=(), dtype=float64)")
  g <- as.character(tf_simple_relu$get_concrete_function(as_tensor(1))$graph$as_graph_def())
  expect_match(g, 'op: "Placeholder"', fixed = TRUE)
  expect_match(g, 'op: "StatelessIf"', fixed = TRUE)
})

test_that("one Function, many graphs: tracing messages and signatures as the guide shows", {
  my_relu <- tf_function(function(x) {
    message("Tracing my_relu(x) with: ", x)
    tf$maximum(as_tensor(0), x)
  })
  expect_message(r <- my_relu(as_tensor(5.5)), 'Tracing my_relu(x) with: Tensor("x:0", shape=(), dtype=float64)',
                 fixed = TRUE)
  expect_equal(format(r), "tf.Tensor(5.5, shape=(), dtype=float64)")
  expect_message(r <- my_relu(c(1, -1)), "Tracing my_relu(x) with: 1-1", fixed = TRUE)
  expect_equal(format(r), "tf.Tensor([1. 0.], shape=(2), dtype=float64)")
  expect_message(r <- my_relu(as_tensor(c(3, -3))), 'Tensor("x:0", shape=(2,), dtype=float64)', fixed = TRUE)
  expect_equal(format(r), "tf.Tensor([3. 0.], shape=(2), dtype=float64)")
  expect_silent(r <- my_relu(as_tensor(-2.5)))
  expect_equal(format(r), "tf.Tensor(0.0, shape=(), dtype=float64)")
  expect_silent(r <- my_relu(as_tensor(c(-1., 1.))))
  expect_equal(format(r), "tf.Tensor([0. 1.], shape=(2), dtype=float64)")
  expect_equal(my_relu$pretty_printed_concrete_signatures(), paste(
    "fn(x)", "  Args:", "    x: float64 Tensor, shape=()", "  Returns:", "    float64 Tensor, shape=()", "",
    "fn(x=[1.0, -1.0])", "  Returns:", "    float64 Tensor, shape=(2,)", "",
    "fn(x)", "  Args:", "    x: float64 Tensor, shape=(2,)", "  Returns:", "    float64 Tensor, shape=(2,)",
    sep = "\n"))
})

test_that("graph and eager execution agree; print runs only while tracing", {
  y_true <- tf$random$uniform(shape(5), maxval = 10L, dtype = tf$int32)
  y_pred <- tf$random$uniform(shape(5), maxval = 10L, dtype = tf$int32)
  expect_equal(y_true$dtype, tf$int32)
  expect_true(all(as.array(y_true) >= 0 & as.array(y_true) < 10))
  expected <- as.integer(mean((as.array(y_true) - as.array(y_pred))^2))
  get_MSE <- tf_function(function(y_true, y_pred) mean((y_true - y_pred)^2))
  expect_equal(as.array(get_MSE(y_true, y_pred)), expected, tolerance = 1)
  tf$config$run_functions_eagerly(TRUE)
  on.exit(tf$config$run_functions_eagerly(FALSE))
  expect_equal(as.array(get_MSE(y_true, y_pred)), as.array(tf_function(function(a, b) mean((a - b)^2))(y_true, y_pred)))
  tf$config$run_functions_eagerly(FALSE)
  get_MSE <- tf_function(function(y_true, y_pred) {
    print("Calculating MSE!")
    mean((y_true - y_pred)^2)
  })
  expect_output(error <- get_MSE(y_true, y_pred), "Calculating MSE!", fixed = TRUE)
  expect_silent(error <- get_MSE(y_true, y_pred))
  tf$config$run_functions_eagerly(TRUE)
  expect_output(error <- get_MSE(y_true, y_pred), "Calculating MSE!", fixed = TRUE)
  expect_output(error <- get_MSE(y_true, y_pred), "Calculating MSE!", fixed = TRUE)
})

test_that("non-strict execution: an unused failing gather raises eagerly, not in a graph", {
  unused_return <- function(x) {
    with(tf$device("CPU"), tf$gather(x, list(2L)))
    x
  }
  expect_error(unused_return(as_tensor(0, shape = c(1))), "indices[0] = 2 is not in [0, 1)", fixed = TRUE,
               class = "InvalidArgumentError")
  expect_equal(format(tf_function(unused_return)(as_tensor(0, shape = 1))), "tf.Tensor([0.], shape=(1), dtype=float64)")
})

test_that("power(x, 100) is the same eagerly and as a graph", {
  x <- tf$random$uniform(shape(10, 10), minval = -1L, maxval = 2L, dtype = tf$dtypes$int32)
  power <- function(x, y) {
    result <- tf$eye(10L, dtype = tf$dtypes$int32)
    for (. in seq_len(y)) result <- tf$matmul(x, result)
    result
  }
  expect_equal(as.array(power_as_graph <- tf_function(power)(x, 10)), as.array(power(x, 10)))
})

test_that("R arguments retrace per value and return float32, as TensorFlow's Python values", {
  f <- tf_function(function(x) {
    message("Tracing!")
    (x * x) + 2
  })
  expect_message(r <- f(as_tensor(2)), "Tracing!")
  expect_equal(format(r), "tf.Tensor(6.0, shape=(), dtype=float64)")
  expect_silent(r <- f(as_tensor(3)))
  expect_equal(format(r), "tf.Tensor(11.0, shape=(), dtype=float64)")
  expect_message(r <- f(2), "Tracing!")
  expect_equal(format(r), "tf.Tensor(6.0, shape=(), dtype=float32)")
  expect_message(r <- f(3), "Tracing!")
  expect_equal(format(r), "tf.Tensor(11.0, shape=(), dtype=float32)")
  expect_equal(f$experimental_get_tracing_count(), 3L)
})
