# dtypes: tf$float32, tf$int32, ... as small objects that print as TensorFlow's do.
.dtype <- function(code) structure(as.integer(code), class = "kiln_dtype")
.dtype_names <- c("bool", "int32", "int64", "float32", "float64", "uint8", "int8", "int16", "uint16",
                  "uint32", "uint64", "variant", "float16", "bfloat16", "string", "complex64", "complex128")
.as_dtype <- function(x) {
  if (inherits(x, "kiln_dtype")) return(x)
  .dtype(.Call(kr_dtype_code, x))
}
format.kiln_dtype <- function(x, ...) paste0("tf.", .Call(kr_dtype_name, x))
print.kiln_dtype <- function(x, ...) { cat(format(x), "\n", sep = ""); invisible(x) }
as.character.kiln_dtype <- function(x, ...) .Call(kr_dtype_name, x)
