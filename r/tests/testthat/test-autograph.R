# R AutoGraph: R `if`, `while`, `for` on tensors inside tf_function become cond / while loops;
# on R values they stay R.
test_that("while over a tensor is a graph loop; its variables keep dtype", {
  sum_to <- tf_function(function(n) {
    total <- as_tensor(0L)
    i <- as_tensor(1L)
    while (i <= n) {
      total <- total + i
      i <- i + 1L
    }
    total
  })
  expect_equal(as.vector(sum_to(as_tensor(10L))), 55L)
  expect_equal(as.vector(sum_to(as_tensor(100L))), 5050L)  # no retrace: the loop is in the graph
  expect_equal(sum_to$experimental_get_tracing_count(), 1L)
  expect_match(as.character(sum_to$get_concrete_function(as_tensor(1L))$graph$as_graph_def()), "While")
})

test_that("if assigns variables in both branches", {
  f <- tf_function(function(x) {
    y <- x
    if (x > 0) {
      y <- x * 2
      z <- 1
    } else {
      z <- -1
    }
    list(y, z)
  })
  r <- f(as_tensor(3))
  expect_equal(as.vector(r[[1]]), 6)
  expect_equal(as.vector(r[[2]]), 1)
  r <- f(as_tensor(-3))
  expect_equal(as.vector(r[[1]]), -3)
  expect_equal(as.vector(r[[2]]), -1)
  expect_equal(f$experimental_get_tracing_count(), 1L)  # one graph holds both branches
})

test_that("a variable defined in one branch only is refused, as Python AutoGraph does", {
  f <- tf_function(function(x) {
    if (x > 0) w <- x
    x
  })
  expect_error(f(as_tensor(1)), "'w' must also be initialized in the else branch")
})

test_that("for over a tensor walks its rows in a graph loop; R loops with break stay R", {
  f <- tf_function(function(xs) {
    s <- as_tensor(0)
    for (row in xs) s <- s + tf$reduce_sum(row)
    s
  })
  expect_equal(as.vector(f(as_tensor(matrix(1:6 + 0, 2, 3)))), 21)
  g <- tf_function(function(x) {
    for (i in 1:10) {
      if (i > 3) break
      x <- x + 1
    }
    x
  })
  expect_equal(as.vector(g(as_tensor(0))), 3)
})

test_that("break and next in loops over tensors become loop flags, as Python AutoGraph's", {
  f <- tf_function(function(x) {
    while (x > 0) {
      if (x > 5) break
      x <- x - 1
    }
    x
  })
  expect_equal(as.vector(f(as_tensor(3))), 0)
  expect_equal(as.vector(f(as_tensor(9))), 9)
  g <- tf_function(function(xs) {
    s <- as_tensor(0)
    for (v in xs) {
      if (v < 0) next
      if (v > 100) break
      s <- s + v
    }
    s
  })
  expect_equal(as.vector(g(as_tensor(c(1, -2, 3, 200, 5)))), 4)
  expect_equal(as.vector(g(as_tensor(c(1, 2)))), 3)
  h <- tf_function(function(n) {
    i <- as_tensor(0L)
    total <- as_tensor(0L)
    while (i < n) {
      i <- i + 1L
      if (i %% 2L == 0L) next
      total <- total + i
    }
    total
  })
  expect_equal(as.vector(h(as_tensor(10L))), 25L)
  expect_equal(h$experimental_get_tracing_count(), 1L)
  expect_equal(as.vector(h(as_tensor(7L))), 16L)  # the same graph: 1 + 3 + 5 + 7
})

test_that("tf$cond and tf$while_loop as functions", {
  f <- tf_function(function(x) tf$cond(x > 0, function() x, function() -x))
  expect_equal(as.vector(f(as_tensor(-4))), 4)
  g <- tf_function(function(n) tf$while_loop(function(i, s) i < n, function(i, s) list(i + 1L, s + i),
                                            list(as_tensor(0L), as_tensor(0L))))
  r <- g(as_tensor(5L))
  expect_equal(as.vector(r[[2]]), 10L)
})

test_that("an R error inside a trace unwinds and reaches R, and the function still works", {
  f <- tf_function(function(x, fail) {
    if (fail) stop("my failure")
    x + 1
  })
  expect_error(f(as_tensor(1), TRUE), "my failure")
  expect_equal(as.vector(f(as_tensor(1), FALSE)), 2)
})
