# R AutoGraph: inside tf_function, R's `if`, `while` and `for` over tensors become graph
# control flow. A traced function runs in an environment where these three names are
# functions (R evaluates their arguments lazily, so each sees the code, not just a value):
# over R values they do exactly what R does; over a tensor being traced they build a cond
# or a while loop, whose outputs are the variables the code assigns. Python AutoGraph's
# rules carry over: a variable assigned in one branch must be defined before or in both,
# and loop variables keep their dtype and shape.
.autograph <- function(f) {
  if (is.primitive(f)) return(f)
  env <- new.env(parent = environment(f))
  for (n in c(".ag_is_graph", ".ag_if", ".ag_while", ".ag_for", ".ag_seq", ".truthy"))
    assign(n, get(n, envir = asNamespace("kiln")), envir = env)
  body(f) <- .ag_convert(body(f))
  environment(f) <- env
  f
}

# The code, with each `if`, `while` and `for` asking first whether its condition (or
# sequence) is a tensor being traced. R's own statement still runs otherwise, so `break`
# and `next` in R loops work as they always do.
.ag_convert <- function(e) {
  if (!is.call(e)) return(e)
  head <- e[[1]]
  if (is.symbol(head) && as.character(head) %in% c("quote", "~", "bquote")) return(e)
  for (k in seq_along(e)[-1]) if (!identical(e[[k]], quote(expr = )) && !is.null(e[[k]])) e[[k]] <- .ag_convert(e[[k]])
  if (!is.symbol(head)) return(e)
  h <- as.character(head)
  if (h == "if") {
    no <- if (length(e) == 4) e[[4]] else NULL
    return(bquote(
      if (.ag_is_graph(.kiln_cond <- .(e[[2]])))
        .ag_if(.kiln_cond, quote(.(e[[3]])), quote(.(no)), environment())
      else if (.truthy(.kiln_cond)) .(e[[3]]) else .(no)))
  }
  if (h == "while")
    return(bquote(
      if (.ag_is_graph(.(e[[2]]))) .ag_while(quote(.(e[[2]])), quote(.(e[[3]])), environment())
      else while (.truthy(.(e[[2]]))) .(e[[3]])))
  if (h == "for") {
    r_loop <- as.call(list(as.name("for"), e[[2]], quote(.ag_seq(.kiln_seq)), e[[4]]))
    return(bquote(
      if (.ag_is_graph(.kiln_seq <- .(e[[3]]))) .ag_for(quote(.(e[[2]])), .kiln_seq, quote(.(e[[4]])), environment())
      else .(r_loop)))
  }
  e
}

.ag_is_graph <- function(x) .symbolic(x)
# What R's `for` walks: an eager tensor's rows (as TensorFlow iterates a tensor), else the value.
.ag_seq <- function(x) {
  if (inherits(x, "kiln_variable")) x <- x$read_value()
  if (!.is_tensor(x)) return(x)
  lapply(seq_len(dim(x)[1]), function(k) tf$gather(x, k - 1L))
}

.symbolic <- function(x) {
  if (inherits(x, "kiln_variable")) return(.Call(kr_tracing))
  .is_tensor(x) && .info(x)[[3]]
}
.truthy <- function(x) {
  if (inherits(x, "kiln_variable")) x <- x$read_value()
  if (.is_tensor(x)) {
    v <- as.array(x)
    if (length(v) != 1) stop("The truth value of a tensor with more than one element is ambiguous")
    return(as.logical(v))
  }
  x
}

# The symbols an expression assigns with <-, = or <<- (the outputs of a branch or a loop).
.assigned <- function(expr) {
  out <- character(0)
  walk <- function(e) {
    if (is.call(e)) {
      head <- e[[1]]
      if (is.symbol(head) && as.character(head) %in% c("<-", "=") && is.symbol(e[[2]]))
        if (!startsWith(as.character(e[[2]]), ".kiln_")) out <<- c(out, as.character(e[[2]]))
      if (is.symbol(head) && as.character(head) == "function") return()
      for (k in seq_along(e)[-1]) if (!identical(e[[k]], quote(expr = )) && !is.null(e[[k]])) walk(e[[k]])
    }
  }
  walk(expr)
  unique(out)
}

# An `if` on a tensor being traced: a cond whose outputs are its value and what it assigns.
.ag_if <- function(cond, yes_expr, no_expr, env) {
  a_yes <- .assigned(yes_expr); a_no <- .assigned(no_expr)
  before <- Filter(function(n) exists(n, envir = env), union(a_yes, a_no))
  for (n in setdiff(union(a_yes, a_no), before))
    if (!(n %in% a_yes && n %in% a_no))
      stop("'", n, "' must also be initialized in the ", if (n %in% a_yes) "else" else "if",
           " branch", call. = FALSE)
  outs <- union(a_yes, a_no)
  with_value <- !is.null(no_expr)
  branch <- function(expr) function() {
    benv <- new.env(parent = env)
    val <- if (is.null(expr)) NULL else eval(expr, benv)
    res <- lapply(outs, function(n) .result_tensor(get(n, envir = benv)))
    if (with_value) {
      if (is.null(val)) stop("both branches of an `if` on a tensor must give a value, or neither", call. = FALSE)
      res <- c(list(.result_tensor(val)), res)
    }
    res
  }
  r <- .Call(kr_cond, cond, branch(yes_expr), branch(no_expr))
  k <- if (with_value) 1L else 0L
  for (i in seq_along(outs)) assign(outs[i], r[[i + k]], envir = env)
  if (with_value) r[[1]] else invisible(NULL)
}

# Loop variables: what the body assigns that exists before the loop (TensorFlow's rule).
.loop_vars <- function(body_expr, env, exclude = character(0)) {
  v <- setdiff(.assigned(body_expr), exclude)
  Filter(function(n) exists(n, envir = env), v)
}
.no_jumps <- function(body_expr) {
  if (any(c("break", "next") %in% all.names(body_expr)))
    stop("`break` and `next` in a loop over tensors are not supported yet: use a loop condition",
         call. = FALSE)
}

# A `while` whose condition is a tensor being traced: a while loop over what the body assigns.
.ag_while <- function(cond_expr, body_expr, env) {
  .no_jumps(body_expr)
  vars <- .loop_vars(body_expr, env)
  if (!length(vars)) stop("a `while` over a tensor must assign a variable defined before the loop", call. = FALSE)
  init <- lapply(vars, function(n) .result_tensor(get(n, envir = env)))
  scope <- function(v) {
    e <- new.env(parent = env)
    for (i in seq_along(vars)) assign(vars[i], v[[i]], envir = e)
    e
  }
  r <- .Call(kr_while,
             function(v) eval(cond_expr, scope(v)),
             function(v) {
               e <- scope(v)
               eval(body_expr, e)
               lapply(vars, function(n) .result_tensor(get(n, envir = e)))
             },
             init, NULL)
  for (i in seq_along(vars)) assign(vars[i], r[[i]], envir = env)
  invisible(NULL)
}

# A `for` over a tensor being traced: a while loop over its rows.
.ag_for <- function(var_sym, seq, body_expr, env) {
  if (inherits(seq, "kiln_variable")) seq <- seq$read_value()
  name <- as.character(var_sym)
  .no_jumps(body_expr)
  vars <- .loop_vars(body_expr, env, exclude = name)
  n <- tf$shape(seq)[1]
  init <- c(list(as_tensor(0L)), lapply(vars, function(v) .result_tensor(get(v, envir = env))))
  r <- .Call(kr_while,
             function(v) v[[1]] < n,
             function(v) {
               e <- new.env(parent = env)
               for (i in seq_along(vars)) assign(vars[i], v[[i + 1]], envir = e)
               assign(name, tf$gather(seq, v[[1]]), envir = e)
               eval(body_expr, e)
               c(list(v[[1]] + 1L), lapply(vars, function(x) .result_tensor(get(x, envir = e))))
             },
             init, NULL)
  for (i in seq_along(vars)) assign(vars[i], r[[i + 1]], envir = env)
  invisible(NULL)
}

.autograph_cond <- function(pred, true_fn, false_fn) {
  if (!.symbolic(pred)) return(if (.truthy(pred)) true_fn() else false_fn())
  single <- NULL
  wrap <- function(fn) function() {
    v <- fn()
    single <<- !is.list(v) || is.object(v)
    if (single) list(.result_tensor(v)) else lapply(v, .result_tensor)
  }
  r <- .Call(kr_cond, pred, wrap(true_fn), wrap(false_fn))
  if (isTRUE(single)) r[[1]] else r
}
