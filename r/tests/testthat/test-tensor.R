# Tensors from R and back, R generics, variables, and bad input as typed R conditions.
test_that("as_tensor follows R tensorflow: doubles float64, integers int32, row-major shape", {
  expect_equal(as_tensor(1)$dtype, tf$float64)
  expect_equal(as_tensor(1L)$dtype, tf$int32)
  expect_equal(as_tensor(TRUE)$dtype, tf$bool)
  expect_equal(as_tensor("a")$dtype, tf$string)
  m <- matrix(1:6, 2, 3)
  t <- as_tensor(m)
  expect_equal(dim(t), c(2L, 3L))
  expect_equal(as.array(t), m)  # the same element at [i, j]
  expect_equal(as.array(as_tensor(1:6, shape = c(2, 3)))[1, ], 1:3)  # row-major fill
  expect_equal(length(as_tensor(array(0, c(2, 3, 4)))), 24L)
  expect_equal(as.vector(as_tensor(numeric(0))), numeric(0))
  expect_equal(format(as_tensor(c(1, -1))), "tf.Tensor([ 1. -1.], shape=(2), dtype=float64)")
  expect_equal(as.character(as_tensor(c(1, -1))), "tf.Tensor([ 1. -1.], shape=(2,), dtype=float64)")
  expect_output(print(tf$float32), "tf.float32")
  expect_output(print(shape(5, NULL)), "TensorShape([5, None])", fixed = TRUE)
})

test_that("operators and math dispatch to TensorFlow's ops", {
  x <- as_tensor(c(1, 4, 9))
  expect_equal(as.vector(x + 1), c(2, 5, 10))
  expect_equal(as.vector(2 * x), c(2, 8, 18))
  expect_equal(as.vector(x / 2), c(0.5, 2, 4.5))
  expect_equal(as.vector(sqrt(x)), c(1, 2, 3))
  expect_equal(as.vector(x^2), c(1, 16, 81))
  expect_equal(as.vector(-x), -c(1, 4, 9))
  expect_equal(as.vector(x > 3), c(FALSE, TRUE, TRUE))
  expect_equal(as.vector(as_tensor(7L) %/% 2L), 3L)
  expect_equal(as.vector(as_tensor(7L) %% 2L), 1L)
  expect_equal(as.vector(as_tensor(7L) / 2L), 3.5)  # truediv of int32 is float64, as TensorFlow's
  expect_equal((as_tensor(7L) / 2L)$dtype, tf$float64)
  expect_equal((as_tensor(7L, "int16") / 2L)$dtype, tf$float32)  # and of int16, float32
  expect_equal(as.vector(sum(x)), 14)
  expect_equal(as.vector(mean(x)), 14 / 3)
  expect_equal(as.vector(max(x)), 9)
  expect_equal(as.vector(exp(as_tensor(0))), 1)
  expect_equal(as.vector(log(as_tensor(1))), 0)
  expect_equal(as.vector(as_tensor(matrix(1:6, 2, 3))[2, ]), c(2L, 4L, 6L))
  expect_equal(as.vector(as_tensor(matrix(1:6, 2, 3))[1, 2:3]), c(3L, 5L))
  expect_equal(as.vector(tf$raw_ops$AddV2(x = x, y = x)), c(2, 8, 18))
  expect_equal(as.vector(tf$reduce_sum(as_tensor(matrix(1:6, 2, 3)), axis = 0L)), c(3L, 7L, 11L))
})

test_that("variables are read and assigned eagerly and from a Function", {
  v <- tf$Variable(1)
  step <- tf_function(function(d) {
    v$assign_add(d)
    v$read_value()
  })
  expect_equal(as.vector(step(as_tensor(2))), 3)
  expect_equal(as.vector(step(as_tensor(2))), 5)
  expect_equal(as.vector(v$read_value()), 5)
  expect_equal(as.vector(v + 1), 6)
})

test_that("bad input is an R condition of TensorFlow's class", {
  expect_error(tf$matmul(as_tensor(matrix(1, 2, 3)), as_tensor(matrix(1, 2, 3))), class = "InvalidArgumentError")
  expect_error(as_tensor(1) + as_tensor(1L), class = "InvalidArgumentError")
  expect_error(as_tensor(list(sum)), "unsupported type")
  expect_error(as_tensor(NA), "NA")
  expect_null(tf$nope)  # tf is a plain environment (one hashed lookup per tf$op)
  expect_error(tf$random$uniform(shape(2), dtype = tf$int32), "Must specify maxval")
  expect_error(as_tensor(1, "float128"), "not a known dtype")
  fake <- as_tensor(1)
  class(fake) <- "kiln_variable"  # a tensor's pointer dressed as a variable is refused, not reinterpreted
  expect_error(fake$read_value(), "expected a kiln variable", class = "InvalidArgumentError")
  expect_error(as_tensor(1L) + 0.5, "Cannot convert 0.5 to EagerTensor of dtype int32")  # no silent truncation
  expect_equal(as.vector(as_tensor(1L) + 2), 3L)  # an integral double is fine
})

test_that("large tensors do not wait for a collection R does not know it needs", {
  live <- function() .Call(kiln:::kr_live_tensor_bytes)
  before <- live()
  peak <- 0
  for (i in 1:40) {  # 64 MiB each, 2.5 GiB in all; R sees only small external pointers
    x <- tf$zeros(shape(4096, 4096))
    peak <- max(peak, live() - before)
  }
  expect_equal(dim(x), c(4096L, 4096L))
  expect_lt(peak, 512 * 2^20)  # kiln asks R to collect after 256 MiB
  rm(x)
  gc()
  expect_lt(live() - before, 2^20)  # and R's collection frees them
})
