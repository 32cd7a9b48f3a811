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
  if (h == "if") return(.ag_if_form(e[[2]], e[[3]], if (length(e) == 4) e[[4]] else NULL))
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

# The converted form of `if (cond) yes else no` (its parts already converted).
.ag_if_form <- function(cond, yes, no) {
  bquote(
    if (.ag_is_graph(.kiln_cond <- .(cond)))
      .ag_if(.kiln_cond, quote(.(yes)), quote(.(no)), environment())
    else if (.truthy(.kiln_cond)) .(yes) else .(no))
}

.ag_is_graph <- function(x) .symbolic(x)
# Names the conversion itself assigns: never a branch's or a loop's outputs.
.ag_temporaries <- c(".kiln_cond", ".kiln_seq", ".kiln_args", ".kiln_r")
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
        if (!(as.character(e[[2]]) %in% .ag_temporaries)) out <<- c(out, as.character(e[[2]]))
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
# `break` and `next` in a loop over tensors, as Python AutoGraph converts them: each sets a
# flag (.kiln_break, a loop variable the condition also tests; .kiln_next, reset every
# iteration), and the statements after one that may set a flag run only while neither is set.
.ag_jumps <- function(body_expr) {
  uses <- FALSE
  replace <- function(e) {
    if (!is.call(e)) return(e)
    head <- e[[1]]
    if (is.symbol(head)) {
      h <- as.character(head)
      if (h == "break") { uses <<- TRUE; return(quote(.kiln_break <- TRUE)) }
      if (h == "next") { uses <<- TRUE; return(quote(.kiln_next <- TRUE)) }
      if (h %in% c("while", "for", "repeat", ".ag_while", ".ag_for", "function")) return(e)  # their own jumps
    }
    for (k in seq_along(e)[-1]) if (!identical(e[[k]], quote(expr = )) && !is.null(e[[k]])) e[[k]] <- replace(e[[k]])
    e
  }
  sets_flag <- function(e) any(c(".kiln_break", ".kiln_next") %in% all.names(e))
  guard <- function(e) {  # in every block, what follows a statement that may jump is guarded
    if (!is.call(e)) return(e)
    if (is.symbol(e[[1]]) && as.character(e[[1]]) %in% c("while", "for", "repeat", ".ag_while", ".ag_for", "function"))
      return(e)
    for (k in seq_along(e)[-1]) if (!identical(e[[k]], quote(expr = )) && !is.null(e[[k]])) e[[k]] <- guard(e[[k]])
    if (identical(e[[1]], as.name("{")) && length(e) > 2) {
      for (k in 2:(length(e) - 1)) if (sets_flag(e[[k]])) {
        rest <- guard(as.call(c(list(as.name("{")), as.list(e)[(k + 1):length(e)])))
        e <- as.call(c(as.list(e)[1:k], list(.ag_if_form(quote(!(.kiln_break | .kiln_next)), rest, NULL))))
        break
      }
    }
    e
  }
  body <- replace(body_expr)
  if (!uses) return(NULL)
  body <- guard(if (is.call(body) && identical(body[[1]], as.name("{"))) body else call("{", body))
  as.call(c(list(as.name("{"), quote(.kiln_next <- FALSE)), as.list(body)[-1]))
}

# A `while` whose condition is a tensor being traced: a while loop over what the body assigns.
.ag_while <- function(cond_expr, body_expr, env) {
  jumps <- .ag_jumps(body_expr)
  if (!is.null(jumps)) {
    body_expr <- jumps
    cond_expr <- bquote(.(cond_expr) & !.kiln_break)
  }
  vars <- .loop_vars(body_expr, env)
  if (!is.null(jumps)) vars <- c(vars, ".kiln_break")
  if (!length(vars)) stop("a `while` over a tensor must assign a variable defined before the loop", call. = FALSE)
  init <- lapply(vars, function(n) if (n == ".kiln_break") as_tensor(FALSE) else .result_tensor(get(n, envir = env)))
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
  for (i in seq_along(vars)) if (vars[i] != ".kiln_break") assign(vars[i], r[[i]], envir = env)
  invisible(NULL)
}

# A `for` over a tensor being traced: a while loop over its rows.
.ag_for <- function(var_sym, seq, body_expr, env) {
  if (inherits(seq, "kiln_variable")) seq <- seq$read_value()
  name <- as.character(var_sym)
  jumps <- .ag_jumps(body_expr)
  if (!is.null(jumps)) body_expr <- jumps
  vars <- .loop_vars(body_expr, env, exclude = name)
  if (!is.null(jumps)) vars <- c(vars, ".kiln_break")
  n <- tf$shape(seq)[1]
  init <- c(list(as_tensor(0L)),
            lapply(vars, function(v) if (v == ".kiln_break") as_tensor(FALSE) else .result_tensor(get(v, envir = env))))
  brk <- match(".kiln_break", vars)
  r <- .Call(kr_while,
             function(v) if (is.na(brk)) v[[1]] < n else (v[[1]] < n) & !v[[brk + 1]],
             function(v) {
               e <- new.env(parent = env)
               for (i in seq_along(vars)) assign(vars[i], v[[i + 1]], envir = e)
               assign(name, tf$gather(seq, v[[1]]), envir = e)
               eval(body_expr, e)
               c(list(v[[1]] + 1L), lapply(vars, function(x) .result_tensor(get(x, envir = e))))
             },
             init, NULL)
  for (i in seq_along(vars)) if (vars[i] != ".kiln_break") assign(vars[i], r[[i + 1]], envir = env)
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
