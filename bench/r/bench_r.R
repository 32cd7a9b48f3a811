# The cost of a call from R into kiln: an eager op, a cached tf_function call, and the R
# guide's power(x, 100) eagerly and as a graph. Run: Rscript bench/r/bench_r.R (after make r).
# Prints microseconds per call: the fastest of 5 timed rounds of a byte-compiled loop that
# evaluates the expression n times (the machine is shared: the fastest round is the least
# disturbed), after one warm-up call.
library(kiln)

per_call_us <- function(expr, n) {
  loop <- compiler::cmpfun(eval(bquote(function() for (i in seq_len(.(n))) .(substitute(expr))),
                                parent.frame()))
  eval(substitute(expr), parent.frame())
  rounds <- vapply(1:5, function(r) {
    t0 <- proc.time()[["elapsed"]]
    loop()
    (proc.time()[["elapsed"]] - t0) / n * 1e6
  }, 0)
  min(rounds)
}

x <- as_tensor(c(1, 2, 3))
y <- as_tensor(c(4, 5, 6))
f <- tf_function(function(a, b) a + b)
invisible(f(x, y))
empty <- function() NULL
n <- 200000

rows <- c(
  "an empty R closure call (the floor)" = per_call_us(empty(), n),
  "eager op: tf$add(x, y)" = per_call_us(tf$add(x, y), n),
  "eager op: x + y (S3 method)" = per_call_us(x + y, n),
  "eager op: tf$raw_ops$AddV2(x = x, y = y)" = per_call_us(tf$raw_ops$AddV2(x = x, y = y), n),
  "eager op: tf$maximum(x, 0)" = per_call_us(tf$maximum(x, 0), n),
  "cached tf_function call: f(x, y)" = per_call_us(f(x, y), n))

m <- tf$random$uniform(shape(10, 10), minval = -1L, maxval = 2L, dtype = tf$int32)
power <- function(x, y) {
  result <- tf$eye(10L, dtype = tf$int32)
  for (. in seq_len(y)) result <- tf$matmul(x, result)
  result
}
power_as_graph <- tf_function(power)
invisible(power_as_graph(m, 100))
rows["power(x, 100) eagerly"] <- per_call_us(power(m, 100), 200)
rows["power(x, 100) as a graph"] <- per_call_us(power_as_graph(m, 100), 5000)

cpu <- grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1]
cat(sprintf("CPU: %s\n", sub("^model name\\s*:\\s*", "", cpu)))
for (k in names(rows)) cat(sprintf("%-42s %9.2f us\n", k, rows[[k]]))
