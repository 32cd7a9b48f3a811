# tf$...: TensorFlow's Python API as R tensorflow exposes it. Each entry is TensorFlow's
# Python function over raw ops (tf$maximum is Maximum, tf$reduce_mean is Mean over all axes
# by default); ops without a Python-level name are reached as tf$raw_ops$<Op>, generated
# from the registry.
# Each function holds its op's row index, found once when tf is built.
.op1 <- function(op) {
  row <- .rows[[op]]
  function(x, name = NULL) .Call(kr_execute, row, list(x), NULL, NULL)
}
.op2 <- function(op) {
  row <- .rows[[op]]
  function(x, y, name = NULL) .Call(kr_binary, row, x, y)
}
.reduction <- function(op) function(input_tensor, axis = NULL, keepdims = FALSE, name = NULL) {
  .reduce(op, if (.is_tensor(input_tensor)) input_tensor else .to_tensor(input_tensor), axis, keepdims)
}
.is_tensor <- function(x) .Call(kr_is_tensor, x)
.to_tensor <- function(x, dtype = NULL) .Call(kr_as_tensor, x, dtype, TRUE)
.dtype_code <- function(x) {
  if (inherits(x, "kiln_variable")) return(unclass(x$dtype))
  if (.is_tensor(x)) .info(x)[[1]] else NA_integer_
}

# TensorFlow's truediv: integers divide in the float type of its _TRUEDIV_TABLE.
.truediv_float <- c(int8 = "float32", uint8 = "float32", int16 = "float32", uint16 = "float32",
                    int32 = "float64", int64 = "float64", uint32 = "float64", uint64 = "float64")
.truediv <- function(x, y, name = NULL) {
  d <- .dtype_code(x)
  if (is.na(d)) d <- .dtype_code(y)
  to <- if (is.na(d)) NA else .truediv_float[.dtype_names[d + 1]]
  if (!is.na(to)) {
    x <- .Call(kr_cast, .Call(kr_as_tensor, x, .dtype(d), TRUE), to)
    y <- .Call(kr_cast, .Call(kr_as_tensor, y, .dtype(d), TRUE), to)
  }
  .exec("RealDiv", list(x, y), c(1L, 1L))
}

.device <- function(device_name) structure(list(name = device_name), class = "kiln_device")
# with(tf$device("CPU"), expr): kiln runs on the CPU, so the block runs as it is.
with.kiln_device <- function(data, expr, ...) invisible(eval(substitute(expr), parent.frame()))

.random_uniform <- function(shape, minval = 0, maxval = NULL, dtype = tf$float32, seed = NULL, name = NULL) {
  .Call(kr_random_uniform, as.numeric(.dims(shape)), minval, maxval, .as_dtype(dtype), seed)
}
.random_normal <- function(shape, mean = 0, stddev = 1, dtype = tf$float32, seed = NULL, name = NULL) {
  .exec("RandomStandardNormal", list(as.integer(.dims(shape))), NULL,
        list(dtype = .as_dtype(dtype), seed = if (is.null(seed)) 0L else seed)) * stddev + mean
}

.print <- function(..., sep = " ") {
  pieces <- lapply(list(...), function(p) if (is.character(p)) p else .to_tensor(p))
  invisible(.Call(kr_print, pieces))
}

.cond <- function(pred, true_fn, false_fn, name = NULL) .autograph_cond(pred, true_fn, false_fn)

.build_tf <- function() {
  env <- tf
  env$raw_ops <- .build_raw_ops()
  for (o in names(.binary_ops)) assign(o, .rows[[.binary_ops[[o]]]], envir = .binary_rows)
  assign("neg", .rows[["Neg"]], envir = .binary_rows)
  for (d in .dtype_names) assign(d, .dtype(match(d, .dtype_names) - 1L), envir = env)
  env$float <- env$float32; env$double <- env$float64
  env$dtypes <- list2env(mget(.dtype_names, envir = env))
  env$dtypes$as_dtype <- .as_dtype
  math <- list(
    add = .op2("AddV2"), subtract = .op2("Sub"), multiply = .op2("Mul"), truediv = .truediv,
    divide = .truediv, pow = .op2("Pow"), maximum = .op2("Maximum"), minimum = .op2("Minimum"),
    greater = .op2("Greater"), greater_equal = .op2("GreaterEqual"), less = .op2("Less"),
    less_equal = .op2("LessEqual"), equal = .op2("Equal"), not_equal = .op2("NotEqual"),
    floormod = .op2("FloorMod"), floordiv = .op2("FloorDiv"), squared_difference = .op2("SquaredDifference"),
    logical_and = .op2("LogicalAnd"), logical_or = .op2("LogicalOr"), logical_not = .op1("LogicalNot"),
    abs = .op1("Abs"), negative = .op1("Neg"), square = .op1("Square"), sqrt = .op1("Sqrt"),
    exp = .op1("Exp"), log = .op1("Log"), sin = .op1("Sin"), cos = .op1("Cos"), tanh = .op1("Tanh"),
    sigmoid = .op1("Sigmoid"), sign = .op1("Sign"), floor = .op1("Floor"), ceil = .op1("Ceil"),
    round = .op1("Round"), reciprocal = .op1("Reciprocal"), rsqrt = .op1("Rsqrt"),
    reduce_sum = .reduction("Sum"), reduce_mean = .reduction("Mean"), reduce_max = .reduction("Max"),
    reduce_min = .reduction("Min"), reduce_prod = .reduction("Prod"), reduce_all = .reduction("All"),
    reduce_any = .reduction("Any"))
  for (n in names(math)) assign(n, math[[n]], envir = env)
  env$math <- list2env(math)
  env$matmul <- function(a, b, transpose_a = FALSE, transpose_b = FALSE, name = NULL)
    .exec("MatMul", list(a, b), c(1L, 1L), list(transpose_a = transpose_a, transpose_b = transpose_b))
  env$linalg <- list2env(list(matmul = env$matmul))
  env$cast <- function(x, dtype, name = NULL) .Call(kr_cast, x, .as_dtype(dtype))
  env$reshape <- function(tensor, shape, name = NULL) .exec("Reshape", list(tensor, as.integer(.dims(shape))))
  env$transpose <- function(a, perm = NULL, name = NULL) {
    if (is.null(perm)) perm <- rev(.all_axes(.to_tensor(a)))
    .exec("Transpose", list(a, as.integer(perm)))
  }
  env$identity <- .op1("Identity")
  env$concat <- function(values, axis, name = NULL) .exec("ConcatV2", c(values, list(as.integer(axis))),
                                                          c(rep(1L, length(values)), 2L), list(N = length(values)))
  env$stack <- function(values, axis = 0L, name = NULL)
    .exec("Pack", values, rep(1L, length(values)), list(N = length(values), axis = as.integer(axis)))
  env$gather <- function(params, indices, axis = 0L, batch_dims = 0L, name = NULL)
    .exec("GatherV2", list(params, .Call(kr_as_tensor, unlist(indices), NULL, TRUE), as.integer(axis)), NULL,
          list(batch_dims = as.integer(batch_dims)))
  env$constant <- function(value, dtype = NULL, shape = NULL, name = NULL) {
    t <- .Call(kr_as_tensor, value, if (is.null(dtype)) NULL else .as_dtype(dtype), TRUE)
    if (!is.null(shape)) t <- .Call(kr_reshape, t, as.numeric(.dims(shape)))
    t
  }
  env$convert_to_tensor <- env$constant
  env$zeros <- function(shape, dtype = tf$float32, name = NULL)
    .exec("Fill", list(as.integer(.dims(shape)), .Call(kr_as_tensor, 0, .as_dtype(dtype), FALSE)))
  env$ones <- function(shape, dtype = tf$float32, name = NULL)
    .exec("Fill", list(as.integer(.dims(shape)), .Call(kr_as_tensor, 1, .as_dtype(dtype), FALSE)))
  env$fill <- function(dims, value, name = NULL) .exec("Fill", list(as.integer(.dims(dims)), value))
  env$eye <- function(num_rows, dtype = tf$float32, name = NULL) .Call(kr_eye, num_rows, .as_dtype(dtype))
  env$range <- function(start, limit = NULL, delta = 1L, dtype = NULL, name = NULL) {
    if (is.null(limit)) { limit <- start; start <- 0L }
    r <- .exec("Range", list(start, limit, delta), c(1L, 1L, 1L))
    if (is.null(dtype)) r else env$cast(r, dtype)
  }
  env$shape <- function(input, out_type = tf$int32, name = NULL)
    .exec("Shape", list(input), NULL, list(out_type = .as_dtype(out_type)))
  env$size <- function(input, name = NULL) .exec("Size", list(input))
  env$rank <- function(input, name = NULL) .exec("Rank", list(input))
  env$where <- function(condition, x = NULL, y = NULL, name = NULL) {
    if (is.null(x)) return(.exec("Where", list(condition)))
    .exec("SelectV2", list(condition, x, y), c(NA, 1L, 1L))
  }
  env$cond <- .cond
  env$while_loop <- function(cond, body, loop_vars, maximum_iterations = NULL, name = NULL)
    .Call(kr_while, function(v) do.call(cond, v), function(v) do.call(body, v), loop_vars, maximum_iterations)
  env$print <- .print
  env$device <- .device
  env[["function"]] <- function(f, input_signature = NULL, jit_compile = NULL, reduce_retracing = FALSE, ...)
    tf_function(f, input_signature = input_signature, reduce_retracing = reduce_retracing)
  env$TensorSpec <- .spec
  env$TensorShape <- function(dims) .shape_of(as.integer(unlist(dims)))
  env$Variable <- .variable
  env$GradientTape <- .gradient_tape
  env$saved_model <- list2env(list(save = .saved_model_save, load = .saved_model_load))
  env$random <- list2env(list(uniform = .random_uniform, normal = .random_normal))
  env$nn <- list2env(list(relu = .op1("Relu"), sigmoid = .op1("Sigmoid"), tanh = .op1("Tanh"),
                           softmax = function(logits, axis = -1L, name = NULL) .exec("Softmax", list(logits)),
                           relu6 = .op1("Relu6"), elu = .op1("Elu")))
  env$config <- list2env(list(
    run_functions_eagerly = function(run_eagerly) invisible(.Call(kr_run_functions_eagerly, as.logical(run_eagerly))),
    functions_run_eagerly = function() .Call(kr_run_functions_eagerly, NULL)))
  env$executing_eagerly <- function() !.Call(kr_tracing)
  invisible(env)
}

#' The `tf` object: TensorFlow's API as R tensorflow's `tf$...`.
# tf and its modules are plain environments, so `tf$add` is one hashed lookup (a classed
# object would send every `$` through S3 dispatch, which costs more than the op). Like any R
# environment, a name it lacks reads as NULL.
tf <- new.env(hash = TRUE, parent = emptyenv())

#' Environment details, as tensorflow::tf_config() reports them.
tf_config <- function() {
  cat("kiln ", as.character(utils::packageVersion("kiln")), " (native; no Python)\n", sep = "")
  invisible(list(available = TRUE, version = utils::packageVersion("kiln"), python = NULL))
}
