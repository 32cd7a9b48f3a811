# tf$GradientTape and tf$saved_model from R; TensorFlow (Python, when the repository's .venv
# has it) loads what R saved.
test_that("GradientTape differentiates eagerly and inside a Function", {
  x <- as_tensor(3)
  with(tf$GradientTape() %as% tape, {
    tape$watch(x)
    y <- x^2
  })
  expect_equal(as.vector(tape$gradient(y, x)), 6)
  expect_error(tape$gradient(y, x), "only be used to compute one set of gradients")

  w <- tf$Variable(matrix(c(1, 2, 3, 4), 2, 2))
  step <- tf_function(function(x) {
    with(tf$GradientTape() %as% tape, {
      loss <- tf$reduce_sum(tf$matmul(x, w)^2)
    })
    w$assign_sub(0.01 * tape$gradient(loss, w))
    loss
  })
  x <- as_tensor(matrix(1, 1, 2))
  expect_equal(as.vector(step(x)), 58)  # (1+2)^2 + (3+4)^2
  expect_lt(as.vector(step(x)), 58)     # the update made it smaller
  expect_equal(step$experimental_get_tracing_count(), 1L)
})

test_that("a persistent tape gives several gradients; stop_recording pauses it", {
  x <- as_tensor(2)
  with(tf$GradientTape(persistent = TRUE) %as% tape, {
    tape$watch(x)
    y <- x * x
    with(tape$stop_recording(), z <- y * x)  # not recorded
    u <- y * 3
  })
  expect_equal(as.vector(tape$gradient(y, x)), 4)
  expect_equal(as.vector(tape$gradient(u, x)), 12)
  expect_null(tape$gradient(z, x))
  g <- tape$gradient(u, list(a = x))
  expect_equal(names(g), "a")
})

test_that("a Function saved from R loads in kiln and in TensorFlow", {
  f <- tf_function(function(x) tf$maximum(x, 0) * 2,
                   input_signature = list(tf$TensorSpec(shape(NULL), tf$float32)))
  dir <- file.path(tempdir(), "r_saved_model")
  unlink(dir, recursive = TRUE)
  tf$saved_model$save(f, dir)
  m <- tf$saved_model$load(dir)
  out <- m$signatures$serving_default(x = as_tensor(c(-1, 2), "float32"))
  expect_equal(as.vector(out$output_0), c(0, 4))
  expect_error(tf$saved_model$save(tf_function(function(x) x), dir), "input_signature")

  python <- Sys.getenv("KILN_TEST_PYTHON")  # ctest sets it to the build's Python (tests/CMakeLists.txt)
  skip_if_not(nzchar(python) && file.exists(python), "no Python with TensorFlow to load it")
  script <- sprintf(paste0(
    "import tensorflow as tf; m = tf.saved_model.load(%s); ",
    "print(m.signatures['serving_default'](x=tf.constant([-1., 2., 3.5]))['output_0'].numpy().tolist())"),
    shQuote(dir, type = "sh"))
  res <- suppressWarnings(system2(python, c("-c", shQuote(script)), stdout = TRUE, stderr = FALSE,
                                  env = c("TF_CPP_MIN_LOG_LEVEL=3", "PYTHONPATH=")))
  skip_if(!is.null(attr(res, "status")), "TensorFlow is not importable")
  expect_equal(tail(res, 1), "[0.0, 4.0, 7.0]")
})
