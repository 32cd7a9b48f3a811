# Package start-up: kiln's errors become R conditions, and `tf` is built from the op
# registry and the API table.
.onLoad <- function(libname, pkgname) {
  .Call(kr_set_hooks, .raise_kiln_error, .trace)
  .build_tf()
}

# A kiln error as an R condition of TensorFlow's class: tryCatch(..., InvalidArgumentError = ...)
# catches it, and its message starts as TensorFlow's does.
.raise_kiln_error <- function(kind, message) {
  cond <- structure(
    class = c(kind, "kiln_error", "error", "condition"),
    list(message = paste0(kind, ": ", message), call = NULL))
  stop(cond)
}
