# Tensors in R: conversion both ways, printing as R tensorflow prints, and the R generics
# that are not arithmetic (dim, length, `$`, `[`).

#' as_tensor(x, dtype = NULL, shape = NULL): R doubles become float64, integers int32,
#' logicals bool, characters string (R tensorflow's rules); `shape` reshapes row-major.
as_tensor <- function(x, dtype = NULL, shape = NULL, name = NULL) {
  t <- .Call(kr_as_tensor, x, NULL, FALSE)
  if (!is.null(dtype)) {
    dtype <- .as_dtype(dtype)
    if (.Call(kr_tensor_info, t)[[1]] != unclass(dtype)) t <- .Call(kr_cast, t, dtype)
  }
  if (!is.null(shape)) t <- .Call(kr_reshape, t, as.numeric(unlist(shape)))
  t
}

.info <- function(x) .Call(kr_tensor_info, x)

# "(2)", "(1, 1)", "()": R tensorflow prints a shape without Python's trailing comma.
.shape_text <- function(dims, python = FALSE) {
  d <- ifelse(is.na(dims), "None", as.character(dims))
  if (python && length(d) == 1) return(paste0("(", d, ",)"))
  paste0("(", paste(d, collapse = ", "), ")")
}

format.kiln_tensor <- function(x, ...) {
  i <- .info(x)
  if (i[[3]]) return(.Call(kr_tensor_text, x, -1L))
  values <- .Call(kr_tensor_text, x, -1L)
  sep <- if (grepl("\n", values, fixed = TRUE)) "\n" else ""
  paste0("tf.Tensor(", sep, values, ", shape=", .shape_text(i[[2]]), ", dtype=", .dtype_names[i[[1]] + 1], ")")
}
print.kiln_tensor <- function(x, ...) { cat(format(x), "\n", sep = ""); invisible(x) }
# What message() and paste() show: Python's str of the tensor, as reticulate gives it.
as.character.kiln_tensor <- function(x, ...) {
  i <- .info(x)
  if (i[[3]]) return(.Call(kr_tensor_text, x, -1L))
  values <- .Call(kr_tensor_text, x, -1L)
  paste0("tf.Tensor(", values, ", shape=", .shape_text(i[[2]], TRUE), ", dtype=", .dtype_names[i[[1]] + 1], ")")
}

as.array.kiln_tensor <- function(x, ...) {
  v <- .Call(kr_tensor_values, x)
  dims <- .info(x)[[2]]
  if (length(dims) == 0) return(v)
  if (length(dims) == 1) return(array(v, dims))
  aperm(array(v, rev(dims)))
}
as.vector.kiln_tensor <- function(x, mode = "any") as.vector(as.array(x), mode)
as.numeric.kiln_tensor <- function(x, ...) as.numeric(as.array(x))
as.double.kiln_tensor <- function(x, ...) as.double(as.array(x))
as.integer.kiln_tensor <- function(x, ...) as.integer(as.array(x))
as.logical.kiln_tensor <- function(x, ...) as.logical(as.array(x))
dim.kiln_tensor <- function(x) {
  d <- .info(x)[[2]]
  if (length(d) == 0) NULL else d
}
length.kiln_tensor <- function(x) {
  d <- .info(x)[[2]]
  if (is.null(d)) NA_integer_ else as.integer(prod(d))
}
t.kiln_tensor <- function(x) tf$transpose(x)

`$.kiln_tensor` <- function(x, name) {
  switch(name,
    dtype = .dtype(.info(x)[[1]]),
    shape = .shape_of(.info(x)[[2]]),
    name = .info(x)[[4]],
    ndim = length(.info(x)[[2]]),
    numpy = function() as.array(x),
    # anything else: the op of that name with this tensor first (x$matmul(y))
    function(...) tf[[name]](x, ...))
}

# x[i, j]: R's 1-based indices; a missing index keeps the dimension, a number drops it, a
# range a:b (increasing, contiguous) keeps it; negative indices count from the end as R does not.
`[.kiln_tensor` <- function(x, ...) {
  args <- as.list(sys.call())[-c(1, 2)]
  dims <- .info(x)[[2]]
  begin <- end <- integer(0)
  shrink <- 0L; full <- 0L
  for (k in seq_along(args)) {
    if (is.symbol(args[[k]]) && nchar(as.character(args[[k]])) == 0) {
      begin <- c(begin, 0L); end <- c(end, 0L); full <- bitwOr(full, bitwShiftL(1L, k - 1L))
      next
    }
    idx <- eval(args[[k]], parent.frame())
    if (length(idx) == 1) {
      begin <- c(begin, as.integer(idx) - 1L); end <- c(end, as.integer(idx))
      shrink <- bitwOr(shrink, bitwShiftL(1L, k - 1L))
    } else {
      if (any(diff(idx) != 1)) stop("`[` on a tensor takes a single index or an increasing range a:b")
      begin <- c(begin, as.integer(idx[1]) - 1L); end <- c(end, as.integer(idx[length(idx)]))
    }
  }
  vec <- function(v) array(as.integer(v), length(v))  # 1-D even when of length 1
  .exec("StridedSlice", list(x, vec(begin), vec(end), vec(rep(1L, length(begin)))), NULL,
        list(begin_mask = full, end_mask = full, shrink_axis_mask = shrink))
}

#' shape(...): a TensorShape (NA or NULL for an unknown dimension).
shape <- function(...) {
  d <- list(...)
  .shape_of(vapply(d, function(v) if (is.null(v)) NA_integer_ else as.integer(v), 1L))
}
.shape_of <- function(dims) structure(list(dims = dims), class = "kiln_shape")
format.kiln_shape <- function(x, ...) {
  d <- ifelse(is.na(x$dims), "None", as.character(x$dims))
  paste0("TensorShape([", paste(d, collapse = ", "), "])")
}
print.kiln_shape <- function(x, ...) { cat(format(x), "\n", sep = ""); invisible(x) }
.dims <- function(s) if (inherits(s, "kiln_shape")) s$dims else as.numeric(unlist(s))

.spec <- function(shape = NULL, dtype = tf$float32, name = NULL) {
  dims <- if (is.null(shape)) NULL else as.numeric(.dims(shape))
  structure(list(dims, .as_dtype(dtype), name), class = "kiln_tensor_spec")
}
print.kiln_tensor_spec <- function(x, ...) {
  cat("TensorSpec(shape=", if (is.null(x[[1]])) "<unknown>" else .shape_text(x[[1]], TRUE),
      ", dtype=", format(x[[2]]), ", name=", if (is.null(x[[3]])) "None" else paste0("'", x[[3]], "'"), ")\n",
      sep = "")
  invisible(x)
}
