"""The AutoGraph rewrite: a Python function's source, its control flow turned into calls of
`ag__` (autograph/_runtime.py), which choose Python or kiln.cond/kiln.while_loop at run time.

- `if`/`elif`/`else` -> ag__.if_stmt over the variables the branches assign; an `if` whose
  branches both end in `return` (after the statements following an `if` that returns are moved
  into its `else`) -> return ag__.if_return(...);
- `while` -> ag__.while_stmt, `for` -> ag__.for_stmt (tensors, enumerate/zip of tensors, and
  kiln.range iterate as a while_loop; Python iterables unroll); `break` and `continue` become
  flags guarding the rest of the body;
- `a and b`, `a or b`, `not a`, `x if c else y` -> ag__.and_/or_/not_/if_exp;
- `range`, `len`, `enumerate`, `zip` -> their tensor-aware versions; other calls go through
  ag__.converted_call, which converts user functions recursively.

Statements this does not convert (a `return` inside a loop, `for`/`while` with `else`, a
function with `yield`, `global`, `nonlocal` or `super()`) keep their Python meaning: on a
tensor condition they raise OperatorNotAllowedInGraphError, as unconverted code does."""
import ast
import inspect
import itertools
import textwrap
import types

from . import _runtime


class CannotConvert(Exception):
    """The function keeps its Python meaning (no source, a lambda, a generator, ...)."""


_BUILTINS = {"range": "range_", "len": "len_", "enumerate": "enumerate_", "zip": "zip_"}
_NO_CONVERTED_CALL = frozenset(("print", "isinstance", "issubclass", "type", "len", "range", "enumerate", "zip",
                                "super", "getattr", "setattr", "hasattr", "id", "repr", "str", "int", "float",
                                "bool", "list", "tuple", "dict", "set", "min", "max", "abs", "sorted", "reversed",
                                "iter", "next", "callable", "locals", "globals", "vars", "dir", "format"))


def _name(id_, ctx=ast.Load):
    return ast.Name(id=id_, ctx=ctx())


def _ag(attr):
    return ast.Attribute(value=_name("ag__"), attr=attr, ctx=ast.Load())


def _call(func, *args):
    return ast.Call(func=func, args=list(args), keywords=[])


def _tuple(names, ctx=ast.Load):
    return ast.Tuple(elts=[_name(n, ctx) for n in names], ctx=ctx())


def _str_tuple(names):
    return ast.Tuple(elts=[ast.Constant(value=n) for n in names], ctx=ast.Load())


def _def(name, params, body):
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    return ast.FunctionDef(name=name, args=args, body=body or [ast.Pass()], decorator_list=[], returns=None,
                           type_comment=None)


def _lambda(expr):
    args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])
    return ast.Lambda(args=args, body=expr)


# -- what a block assigns, returns, breaks ---------------------------------------------------

class _Assigned(ast.NodeVisitor):
    def __init__(self):
        self.names = []

    def add(self, n):
        if n not in self.names:
            self.names.append(n)

    def visit_Name(self, node):  # noqa: N802
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.add(node.id)

    def visit_FunctionDef(self, node):  # noqa: N802
        self.add(node.name)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef  # noqa: N815

    def visit_Lambda(self, node):  # noqa: N802
        pass

    def _comprehension(self, node):
        pass  # comprehension variables are their own scope

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension  # noqa: N815

    def visit_Import(self, node):  # noqa: N802
        for a in node.names:
            self.add((a.asname or a.name).split(".")[0])

    visit_ImportFrom = visit_Import  # noqa: N815


def assigned(stmts):
    v = _Assigned()
    for s in stmts:
        v.visit(s)
    # Generated helpers are not state; the break/continue flags are.
    return [n for n in v.names if not n.startswith(_HELPER_PREFIXES) and n != "ag__"]


_HELPER_PREFIXES = ("__ag_if_body_", "__ag_else_body_", "__ag_loop_body_", "__ag_loop_test_", "__ag_item_")


def _walk_same_function(node):
    """Nodes under `node`, not entering nested functions, lambdas or classes."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))


def _contains(stmts, kinds, stop_at_loops=False):
    for s in stmts:
        if isinstance(s, kinds):
            return True
        for n in _walk_same_function(s):
            if stop_at_loops and isinstance(n, (ast.For, ast.While, ast.AsyncFor)):
                continue
            if isinstance(n, kinds):
                if stop_at_loops and _inside_loop(s, n):
                    continue
                return True
    return False


def _inside_loop(root, target):
    """True when `target` sits inside a loop nested in `root` (its break belongs to that loop)."""

    def search(node, in_loop):
        if node is target:
            return in_loop
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return None
        for child in ast.iter_child_nodes(node):
            loop = in_loop or (isinstance(node, (ast.For, ast.While, ast.AsyncFor)) and node is not root)
            r = search(child, loop)
            if r is not None:
                return r
        return None

    return bool(search(root, False))


def _always_returns(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


# -- pass 1: single-exit `if`s -----------------------------------------------------------------

def _normalize_returns(stmts):
    """Moves the statements after an `if` that returns into its other branch, so that an `if`
    containing a `return` has both branches ending in one."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.If):
            s.body = _normalize_returns(s.body)
            s.orelse = _normalize_returns(s.orelse)
            rest = stmts[i + 1:]
            body_ret, else_ret = _always_returns(s.body), _always_returns(s.orelse)
            if body_ret and not else_ret and _contains(s.body, ast.Return):
                s.orelse = _normalize_returns(s.orelse + rest)
                out.append(s)
                return out
            if else_ret and not body_ret and _contains(s.orelse, ast.Return):
                s.body = _normalize_returns(s.body + rest)
                out.append(s)
                return out
            out.append(s)
            if body_ret and else_ret:
                return out  # what follows cannot run
        elif isinstance(s, (ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                if hasattr(s, field):
                    setattr(s, field, _normalize_returns(getattr(s, field)))
            out.append(s)
        else:
            out.append(s)
    return out


# -- pass 2: expressions -----------------------------------------------------------------------

class _Expressions(ast.NodeTransformer):
    def __init__(self, local_names, global_names):
        self.local_names = local_names
        self.global_names = global_names

    def visit_BoolOp(self, node):  # noqa: N802
        self.generic_visit(node)
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        expr = node.values[-1]
        for v in reversed(node.values[:-1]):
            expr = _call(_ag(fn), _lambda(v), _lambda(expr))
        return ast.copy_location(expr, node)

    def visit_UnaryOp(self, node):  # noqa: N802
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call(_ag("not_"), node.operand), node)
        return node

    def visit_IfExp(self, node):  # noqa: N802
        self.generic_visit(node)
        return ast.copy_location(_call(_ag("if_exp"), node.test, _lambda(node.body), _lambda(node.orelse)), node)

    def visit_Call(self, node):  # noqa: N802
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id not in self.local_names and f.id not in self.global_names:
            if f.id in _BUILTINS:
                node.func = ast.copy_location(_ag(_BUILTINS[f.id]), f)
                return node
            if f.id in _NO_CONVERTED_CALL:
                return node
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "ag__":
            return node
        args = ast.Tuple(elts=node.args, ctx=ast.Load())
        kwargs = ast.Dict(keys=[k.arg for k in node.keywords], values=[k.value for k in node.keywords])
        kwargs.keys = [None if k is None else ast.Constant(value=k) for k in kwargs.keys]
        return ast.copy_location(_call(_ag("converted_call"), f, args, kwargs), node)

    def visit_FunctionDef(self, node):  # noqa: N802
        self.generic_visit(node)
        return node

    def visit_Lambda(self, node):  # noqa: N802
        return node  # lambdas keep their Python meaning (like the control flow inside them)


# -- pass 3: statements ------------------------------------------------------------------------

class _Statements:
    def __init__(self):
        self.counter = itertools.count(1)

    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s):
        if isinstance(s, ast.If):
            return self.if_(s)
        if isinstance(s, ast.While):
            return self.while_(s)
        if isinstance(s, ast.For):
            return self.for_(s)
        if isinstance(s, (ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                if hasattr(s, field):
                    setattr(s, field, self.block(getattr(s, field)))
            if isinstance(s, ast.Try):
                for h in s.handlers:
                    h.body = self.block(h.body)
            return [s]
        if isinstance(s, ast.FunctionDef):
            s.body = self.block(s.body)
            return [s]
        return [s]

    def if_(self, s):
        n = next(self.counter)
        has_return = _contains(s.body + s.orelse, ast.Return)
        if has_return and not (_always_returns(s.body) and _always_returns(s.orelse)):
            s.body, s.orelse = self.block(s.body), self.block(s.orelse)
            return [s]  # a return AutoGraph cannot single-exit: Python's if
        names = assigned(s.body + s.orelse)
        body = self.block(s.body)
        orelse = self.block(s.orelse)
        t, f = "__ag_if_body_%d" % n, "__ag_else_body_%d" % n
        if has_return:
            defs = [_def(t, names, body), _def(f, names, orelse)]
            call = _call(_ag("if_return"), s.test, _name(t), _name(f), _tuple(names))
            out = defs + [ast.Return(value=call)]
        else:
            ret = ast.Return(value=_tuple(names))
            defs = [_def(t, names, body + [ret]), _def(f, names, orelse + [ret])]
            call = _call(_ag("if_stmt"), s.test, _name(t), _name(f), _tuple(names), _str_tuple(names))
            out = defs + [self._assign(names, call)]
        return _located(out, s)

    @staticmethod
    def _assign(names, call):
        if not names:
            return ast.Expr(value=call)
        return ast.Assign(targets=[_tuple(names, ast.Store)], value=call)

    def _lower_break_continue(self, body, n):
        """break/continue of this loop -> flags; the statements after them are guarded."""
        brk, cnt = "__ag_break_%d" % n, "__ag_continue_%d" % n
        uses_break = _contains(body, ast.Break, stop_at_loops=True)
        uses_continue = _contains(body, ast.Continue, stop_at_loops=True)
        if not uses_break and not uses_continue:
            return body, None, None

        def replace(stmts):
            out = []
            for i, s in enumerate(stmts):
                if isinstance(s, ast.Break):
                    out.append(ast.copy_location(ast.Assign(targets=[_name(brk, ast.Store)],
                                                            value=ast.Constant(value=True)), s))
                    return out
                if isinstance(s, ast.Continue):
                    out.append(ast.copy_location(ast.Assign(targets=[_name(cnt, ast.Store)],
                                                            value=ast.Constant(value=True)), s))
                    return out
                if isinstance(s, ast.If):
                    s.body, s.orelse = replace(s.body), replace(s.orelse)
                elif isinstance(s, (ast.With, ast.Try)):
                    s.body = replace(s.body)
                out.append(s)
                if _contains([s], (ast.Break, ast.Continue), stop_at_loops=True) or _sets_flag(s, brk, cnt):
                    rest = replace(stmts[i + 1:])
                    if rest:
                        flags = ([brk] if uses_break else []) + ([cnt] if uses_continue else [])
                        test = _name(flags[0]) if len(flags) == 1 else _call(
                            _ag("or_"), _lambda(_name(flags[0])), _lambda(_name(flags[1])))
                        guard = ast.If(test=_call(_ag("not_"), test), body=rest, orelse=[])
                        out.append(ast.copy_location(guard, s))
                    return out
            return out

        new_body = replace(body)
        if uses_continue:
            new_body = [ast.Assign(targets=[_name(cnt, ast.Store)], value=ast.Constant(value=False))] + new_body
        return new_body, (brk if uses_break else None), (cnt if uses_continue else None)

    def _loop_blocked(self, s):
        return s.orelse or _contains(s.body, ast.Return)

    def while_(self, s):
        if self._loop_blocked(s):
            s.body = self.block(s.body)
            return [s]
        n = next(self.counter)
        body, brk, cnt = self._lower_break_continue(s.body, n)
        pre = _flags_cleared(brk, cnt)
        test = s.test
        if brk:
            test = _call(_ag("and_"), _lambda(_call(_ag("not_"), _name(brk))), _lambda(test))
        names = _with_flags(assigned(body), brk, cnt)
        body = self.block(body)
        t, b = "__ag_loop_test_%d" % n, "__ag_loop_body_%d" % n
        defs = [_def(t, names, [ast.Return(value=test)]), _def(b, names, body + [ast.Return(value=_tuple(names))])]
        call = _call(_ag("while_stmt"), _name(t), _name(b), _tuple(names), _str_tuple(names))
        out = pre + defs + [self._assign(names, call)]
        return _located(out, s)

    def for_(self, s):
        if self._loop_blocked(s):
            s.body = self.block(s.body)
            return [s]
        n = next(self.counter)
        body, brk, cnt = self._lower_break_continue(s.body, n)
        item = "__ag_item_%d" % n
        body = [ast.copy_location(ast.Assign(targets=[s.target], value=_name(item)), s)] + body
        pre = _flags_cleared(brk, cnt)
        names = _with_flags(assigned(body), brk, cnt)
        body = self.block(body)
        b, t = "__ag_loop_body_%d" % n, "__ag_loop_test_%d" % n
        defs = [_def(b, [item] + names, body + [ast.Return(value=_tuple(names))])]
        extra = ast.Constant(value=None)
        if brk:
            defs.append(_def(t, names, [ast.Return(value=_call(_ag("not_"), _name(brk)))]))
            extra = _name(t)
        call = _call(_ag("for_stmt"), s.iter, extra, _name(b), _tuple(names), _str_tuple(names))
        out = pre + defs + [self._assign(names, call)]
        return _located(out, s)


def _located(stmts, s):
    """Generated statements placed on the header line of `s` (not its whole span): a
    traceback through them points at the `if`/`while`/`for` line."""
    for top in stmts:
        for n in ast.walk(top):
            if "lineno" in n._attributes and not hasattr(n, "lineno"):
                n.lineno = n.end_lineno = s.lineno
                n.col_offset = n.end_col_offset = s.col_offset
    return stmts


def _flags_cleared(*flags):
    """`flag = False` for each break/continue flag a loop uses, before the loop."""
    return [ast.Assign(targets=[_name(f, ast.Store)], value=ast.Constant(value=False)) for f in flags if f]


def _with_flags(names, *flags):
    return names + [f for f in flags if f and f not in names]


def _sets_flag(s, *flags):
    for n in _walk_same_function(s):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in flags:
            return True
    return False


# -- putting it together -----------------------------------------------------------------------

def _function_node(f):
    try:
        source = inspect.getsource(f)
    except (OSError, TypeError) as e:
        raise CannotConvert("no source for %r: %s" % (f, e)) from None
    source = textwrap.dedent(source)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        raise CannotConvert("the source of %r does not parse on its own" % (f,)) from None
    if f.__name__ == "<lambda>":
        return tree, _lambda_as_def(tree, f)
    nodes = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == f.__name__]
    if not nodes:
        raise CannotConvert("%r is not a def statement" % (f,))
    return tree, nodes[0]


def _lambda_as_def(tree, f):
    """The one lambda of the source lines with f's parameters, as `def <lambda>(...): return ...`
    placed in the tree (several such lambdas on the lines: ambiguous, not converted)."""
    code = f.__code__
    params = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
             and [a.arg for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs] == params]
    if len(found) != 1:
        raise CannotConvert("%d lambdas with these parameters on the source lines of %r" % (len(found), f))
    lam = found[0]
    node = ast.FunctionDef(name="__ag_lambda", args=lam.args, body=[ast.Return(value=lam.body)], decorator_list=[],
                           returns=None, type_comment=None)
    ast.copy_location(node, lam)
    ast.fix_missing_locations(node)
    tree.body = [node]
    return node


# Converted code by (code object, file, which builtin-like names the globals shadow): the
# rewrite reads only those, so a function made again from the same source (a closure, a
# lambda built per call, a method per instance) is converted once. Failures are kept too.
_SHADOWABLE = tuple(sorted(set(_BUILTINS) | _NO_CONVERTED_CALL))
_converted_code = {}
_CACHE_LIMIT = 512


def convert(f):
    """The converted version of a Python function (a new function with the same globals,
    closure cells, defaults and line numbers), or CannotConvert."""
    if not isinstance(f, types.FunctionType):
        raise CannotConvert("%r is not a Python function" % (f,))
    if getattr(f, "__kiln_do_not_convert__", False):
        raise CannotConvert("%r is marked do_not_convert" % (f,))
    if _runtime.is_generator_or_coroutine(f):
        raise CannotConvert("generators and coroutines keep their Python meaning")
    shadowed = tuple(n for n in _SHADOWABLE if n in f.__globals__)
    key = (f.__code__, f.__code__.co_filename, shadowed)
    entry = _converted_code.get(key)
    if entry is None:
        try:
            entry = _convert_code(f)
        except CannotConvert as e:
            entry = e
        if len(_converted_code) >= _CACHE_LIMIT:
            _converted_code.pop(next(iter(_converted_code)))  # the oldest
        _converted_code[key] = entry
    if isinstance(entry, CannotConvert):
        raise CannotConvert(*entry.args)
    inner_code, freevars, source = entry
    cells = dict(zip(freevars, f.__closure__ or ()))
    ag_cell = types.CellType(_runtime)
    closure = tuple(ag_cell if v == "ag__" else cells[v] for v in inner_code.co_freevars)
    converted = types.FunctionType(inner_code, f.__globals__, f.__name__, f.__defaults__, closure)
    converted.__kwdefaults__ = f.__kwdefaults__
    converted.__dict__.update(f.__dict__)
    converted.__wrapped__ = f
    converted.__qualname__ = f.__qualname__
    converted.__module__ = f.__module__
    converted.__kiln_autograph_source__ = source
    return converted


def _convert_code(f):
    """(the converted function's code object, f's free variable names, its source)."""
    tree, node = _function_node(f)
    for n in ast.walk(node):
        if isinstance(n, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)):
            raise CannotConvert("global, nonlocal and yield keep their Python meaning")
        if isinstance(n, ast.Name) and n.id in ("super", "__class__"):
            raise CannotConvert("super() needs the class cell of the original function")
    first = node.decorator_list[0].lineno if node.decorator_list else node.lineno  # co_firstlineno's line
    ast.increment_lineno(tree, f.__code__.co_firstlineno - first)
    node.decorator_list = []

    params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    params += [a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None]
    local_names = [n for n in assigned(node.body) if n not in params]

    body = node.body
    doc = []
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc, body = body[:1], body[1:]
    if not _always_returns(body):
        body = body + [ast.Return(value=ast.Constant(value=None))]
    body = _normalize_returns(body)
    exprs = _Expressions(set(local_names) | set(params), set(f.__globals__))
    body = [exprs.visit(s) for s in body]
    body = _Statements().block(body)
    init = [ast.Assign(targets=[_name(n, ast.Store)],
                       value=_call(_ag("Undefined"), ast.Constant(value=n))) for n in local_names]
    node.body = doc + init + body

    # A factory whose parameters are the original function's free variables and ag__: the
    # converted function's closure is then rebuilt from the original cells (live, not copies).
    freevars = list(f.__code__.co_freevars)
    # Under its own name the def would bind that name in the factory, and a recursive call
    # would read the factory's local instead of the global (or cell) the original reads.
    node.name = "__ag_converted"
    factory = _def("__ag_factory", ["ag__"] + freevars, [node, ast.Return(value=_name(node.name))])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, f.__code__.co_filename, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner_code = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == node.name)
    inner_code = inner_code.replace(co_name=f.__code__.co_name, co_qualname=f.__code__.co_qualname)
    node.name = f.__code__.co_name
    return inner_code, freevars, ast.unparse(node)
