# The R tour: the programs of TensorFlow's R guide "Introduction to graphs and tf_function()",
# run natively on kiln (library(kiln) in place of library(tensorflow); no Python).
library(kiln)
library(magrittr, include.only = "%>%")

cat("## Taking advantage of graphs\n")
a_regular_function <- function(x, y, b) {
  x %>%
    tf$matmul(y) %>%
    { . + b }
}
a_function_that_uses_a_graph <- tf_function(a_regular_function)
x1 <- as_tensor(1:2, "float64", shape = c(1, 2))
y1 <- as_tensor(2:3, "float64", shape = c(2, 1))
b1 <- as_tensor(4)
orig_value <- as.array(a_regular_function(x1, y1, b1))
tf_function_value <- as.array(a_function_that_uses_a_graph(x1, y1, b1))
stopifnot(orig_value == tf_function_value)

inner_function <- function(x, y, b) {
  tf$matmul(x, y) + b
}
outer_function <- tf_function(function(x) {
  y <- as_tensor(2:3, "float64", shape = c(2, 1))
  b <- as_tensor(4.0)
  inner_function(x, y, b)
})
print(outer_function(as_tensor(1:2, "float64", shape = c(1, 2))))

cat("\n## Converting R functions to graphs\n")
simple_relu <- function(x) {
  if (tf$greater(x, 0))
    x
  else
    as_tensor(0, x$dtype)
}
tf_simple_relu <- tf_function(simple_relu)
cat(
  "First branch, with graph: ", format(tf_simple_relu(as_tensor(1))), "\n",
  "Second branch, with graph: ", format(tf_simple_relu(as_tensor(-1))), "\n",
  sep = ""
)
graph_def <- tf_simple_relu$get_concrete_function(as_tensor(1))$graph$as_graph_def()
cat(substr(as.character(graph_def), 1, 200), "...\n")

cat("\n## Polymorphism: one Function, many graphs\n")
my_relu <- tf_function(function(x) {
  message("Tracing my_relu(x) with: ", x)
  tf$maximum(as_tensor(0), x)
})
print(my_relu(as_tensor(5.5)))
print(my_relu(c(1, -1)))
print(my_relu(as_tensor(c(3, -3))))
print(my_relu(as_tensor(-2.5)))
print(my_relu(as_tensor(c(-1., 1.))))
cat(my_relu$pretty_printed_concrete_signatures(), "\n")

cat("\n## Graph execution vs. eager execution\n")
get_MSE <- tf_function(function(y_true, y_pred) {
  mean((y_true - y_pred) ^ 2)
})
(y_true <- tf$random$uniform(shape(5), maxval = 10L, dtype = tf$int32))
(y_pred <- tf$random$uniform(shape(5), maxval = 10L, dtype = tf$int32))
print(get_MSE(y_true, y_pred))
tf$config$run_functions_eagerly(TRUE)
print(get_MSE(y_true, y_pred))
tf$config$run_functions_eagerly(FALSE)

get_MSE <- tf_function(function(y_true, y_pred) {
  print("Calculating MSE!")
  mean((y_true - y_pred) ^ 2)
})
error <- get_MSE(y_true, y_pred)
error <- get_MSE(y_true, y_pred)
error <- get_MSE(y_true, y_pred)
tf$config$run_functions_eagerly(TRUE)
error <- get_MSE(y_true, y_pred)
error <- get_MSE(y_true, y_pred)
error <- get_MSE(y_true, y_pred)
tf$config$run_functions_eagerly(FALSE)

cat("\n## Non-strict execution\n")
unused_return_eager <- function(x) {
  with(tf$device("CPU"),
       tf$gather(x, list(2L))) # unused
  x
}
try(unused_return_eager(as_tensor(0, shape = c(1))))
unused_return_graph <- tf_function(function(x) {
  with(tf$device("CPU"),
       tf$gather(x, list(2L))) # unused
  x
})
print(unused_return_graph(as_tensor(0, shape = 1)))

cat("\n## Seeing the speed-up\n")
x <- tf$random$uniform(shape(10, 10), minval = -1L, maxval = 2L, dtype = tf$dtypes$int32)
power <- function(x, y) {
  result <- tf$eye(10L, dtype = tf$dtypes$int32)
  for (. in seq_len(y))
    result <- tf$matmul(x, result)
  result
}
power_as_graph <- tf_function(power)
invisible(power_as_graph(x, 100))
if (requireNamespace("bench", quietly = TRUE)) {  # as the guide measures it (bench::mark)
  marks <- bench::mark("Eager execution" = power(x, 100), "Graph execution" = power_as_graph(x, 100),
                       check = FALSE, min_iterations = 20)
  print(marks[, c("expression", "min", "median", "itr/sec")])
} else {
  time_it <- function(f, n) { t0 <- proc.time()[["elapsed"]]; for (i in seq_len(n)) f(); (proc.time()[["elapsed"]] - t0) / n }
  cat(sprintf("Eager execution: %.1f us per call\n", 1e6 * time_it(function() power(x, 100), 50)))
  cat(sprintf("Graph execution: %.1f us per call\n", 1e6 * time_it(function() power_as_graph(x, 100), 500)))
}

cat("\n## When is a Function tracing?\n")
a_function_with_r_side_effect <- tf_function(function(x) {
  message("Tracing!")
  (x * x) + 2
})
print(a_function_with_r_side_effect(as_tensor(2)))
print(a_function_with_r_side_effect(as_tensor(3)))
print(a_function_with_r_side_effect(2))
print(a_function_with_r_side_effect(3))

cat("\n## R control flow on tensors (R AutoGraph)\n")
sum_to <- tf_function(function(n) {
  total <- as_tensor(0L)
  i <- as_tensor(1L)
  while (i <= n) {
    total <- total + i
    i <- i + 1L
  }
  total
})
print(sum_to(as_tensor(10L)))
