# R's operators and math on tensors dispatch to TensorFlow's ops, as R tensorflow's do.
.binary_ops <- c("+" = "AddV2", "-" = "Sub", "*" = "Mul", "^" = "Pow", "%%" = "FloorMod", "%/%" = "FloorDiv",
                 "==" = "Equal", "!=" = "NotEqual", "<" = "Less", ">" = "Greater", "<=" = "LessEqual",
                 ">=" = "GreaterEqual", "&" = "LogicalAnd", "|" = "LogicalOr")

.binary_rows <- new.env(hash = TRUE, parent = emptyenv())  # filled from .binary_ops at load

Ops.kiln_tensor <- function(e1, e2) {
  op <- .Generic
  if (missing(e2)) {
    if (op == "-") return(.exec("Neg", list(e1)))
    if (op == "+") return(e1)
    if (op == "!") return(.exec("LogicalNot", list(e1)))
    stop("unary ", op, " is not defined for tensors")
  }
  if (op == "/") return(tf$truediv(e1, e2))
  .Call(kr_binary, .binary_rows[[op]], e1, e2)
}
Ops.kiln_variable <- function(e1, e2) {
  if (inherits(e1, "kiln_variable")) e1 <- e1$read_value()
  if (!missing(e2) && inherits(e2, "kiln_variable")) e2 <- e2$read_value()
  if (missing(e2)) get(.Generic)(e1) else get(.Generic)(e1, e2)
}

.unary_ops <- c(abs = "Abs", sign = "Sign", sqrt = "Sqrt", floor = "Floor", ceiling = "Ceil", round = "Round",
                exp = "Exp", expm1 = "Expm1", log1p = "Log1p", cos = "Cos", sin = "Sin", tan = "Tan",
                acos = "Acos", asin = "Asin", atan = "Atan", cosh = "Cosh", sinh = "Sinh", tanh = "Tanh",
                lgamma = "Lgamma", digamma = "Digamma")

Math.kiln_tensor <- function(x, ...) {
  op <- .Generic
  if (op == "log") {
    base <- list(...)$base
    y <- .exec("Log", list(x))
    return(if (is.null(base)) y else y / log(base))
  }
  if (op %in% c("cumsum", "cumprod"))
    return(.exec(if (op == "cumsum") "Cumsum" else "Cumprod", list(x, 0L)))
  if (is.null(.unary_ops[op]) || is.na(.unary_ops[op])) stop(op, "() is not defined for tensors yet")
  .exec(.unary_ops[[op]], list(x))
}

.all_axes <- function(x) {
  r <- length(.info(x)[[2]])
  if (r == 0) integer(0) else seq_len(r) - 1L
}
.reduce <- function(op, x, axis = NULL, keepdims = FALSE) {
  if (is.null(axis)) axis <- .all_axes(x)
  .exec(op, list(x, as.integer(axis)), NULL, list(keep_dims = keepdims))
}

Summary.kiln_tensor <- function(..., na.rm = FALSE) {
  x <- list(...)
  if (length(x) != 1) stop(.Generic, "() of several tensors: combine them with tf$concat first")
  op <- switch(.Generic, sum = "Sum", prod = "Prod", max = "Max", min = "Min", all = "All", any = "Any",
               stop(.Generic, "() is not defined for tensors"))
  .reduce(op, x[[1]])
}
mean.kiln_tensor <- function(x, ...) .reduce("Mean", x)

# The common operators get methods of their own: R finds a specific method faster than it
# dispatches the Ops group (about 1.5 us a call).
`+.kiln_tensor` <- function(e1, e2) if (missing(e2)) e1 else .Call(kr_binary, .binary_rows[["+"]], e1, e2)
`-.kiln_tensor` <- function(e1, e2) {
  if (missing(e2)) return(.Call(kr_execute, .binary_rows[["neg"]], list(e1), NULL, NULL))
  .Call(kr_binary, .binary_rows[["-"]], e1, e2)
}
`*.kiln_tensor` <- function(e1, e2) .Call(kr_binary, .binary_rows[["*"]], e1, e2)
`/.kiln_tensor` <- function(e1, e2) .truediv(e1, e2)
`^.kiln_tensor` <- function(e1, e2) .Call(kr_binary, .binary_rows[["^"]], e1, e2)
