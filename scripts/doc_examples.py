"""The code examples in README.md, CHANGELOG.md and docs/*.md, so that tests can run them.

A fenced block's first word says its language. ```python blocks run under pytest
(python/tests/test_doc_examples.py): doctest when they hold `>>>` prompts (outputs are
compared), plain exec otherwise, blocks of one file in one namespace, in order. ```cpp
blocks with a main() are compiled against libkiln and run by ctest (doc_examples_cpp).
A block whose info string says `no-test` (```python no-test) is shown only: it needs a
setup a test cannot make (mpirun, a model TensorFlow exported); the tests count these.

Run as a program, it runs one file's Python examples (in this process, so each file gets a
fresh interpreter), or writes the C++ examples to a directory, compiles and runs them:
    python scripts/doc_examples.py python docs/python.md
    python3 scripts/doc_examples.py cpp --cxx g++ --include include --lib build/libkiln.so --out DIR
"""
import argparse
import dataclasses
import doctest
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```(\S*)[ \t]*(.*)$")


@dataclasses.dataclass
class Block:
    path: pathlib.Path
    line: int  # 1-based line of the opening fence
    language: str
    no_test: bool
    text: str

    @property
    def name(self):
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_files():
    return [ROOT / "README.md", ROOT / "CHANGELOG.md"] + sorted((ROOT / "docs").rglob("*.md"))


def blocks(path):
    """The fenced blocks of one Markdown file, in order."""
    out, current, start, lines = [], None, 0, []
    for number, line in enumerate(path.read_text().split("\n"), 1):
        m = FENCE.match(line)
        if current is None and m:
            current, start, lines = m, number, []
        elif current is not None and line.rstrip() == "```":
            out.append(Block(path=path, line=start, language=current.group(1).lower(),
                             no_test="no-test" in current.group(2), text="\n".join(lines) + "\n"))
            current = None
        elif current is not None:
            lines.append(line)
    return out


def all_blocks(language):
    return [b for path in doc_files() for b in blocks(path) if b.language == language]


def cpp_programs():
    return [b for b in all_blocks("cpp") if not b.no_test and re.search(r"\bint main\s*\(", b.text)]


def run_python(path):
    """Runs one file's ```python blocks in order in one namespace; prints each failure."""
    namespace = {"__name__": "__doc_example__"}
    parser = doctest.DocTestParser()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failures, ran = 0, 0
    for block in blocks(path):
        if block.language != "python" or block.no_test:
            continue
        ran += 1
        if ">>>" in block.text:
            test = parser.get_doctest(block.text, namespace, block.name, str(path), block.line - 1)
            runner = doctest.DocTestRunner(optionflags=flags)
            runner.run(test, out=sys.stdout.write, clear_globs=False)
            failures += runner.failures
            namespace = test.globs
        else:
            try:
                exec(compile("\n" * block.line + block.text, str(path), "exec"), namespace)
            except BaseException as e:  # noqa: BLE001 (any failure of an example is reported)
                import traceback
                failures += 1
                print(f"FAIL {block.name}:\n" + "".join(traceback.format_exception(e)))
    print(f"{path.name}: {ran} blocks, {failures} failures")
    return 1 if failures else 0


def run_cpp(args):
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    programs = cpp_programs()
    failures = 0
    for b in programs:
        stem = re.sub(r"[^A-Za-z0-9]+", "_", b.name)
        source, binary = out / f"{stem}.cc", out / stem
        source.write_text(f"// {b.name}\n#line {b.line + 1} \"{b.name.split(':')[0]}\"\n" + b.text)
        lib_dir = str(pathlib.Path(args.lib).resolve().parent)
        compile_cmd = [args.cxx, "-std=c++20", "-O0", f"-I{args.include}", str(source), args.lib,
                       f"-Wl,-rpath,{lib_dir}", "-o", str(binary)]
        result = subprocess.run(compile_cmd, capture_output=True, text=True)
        if result.returncode != 0:
            failures += 1
            print(f"FAIL {b.name}: does not compile\n{result.stderr}")
            continue
        work = out / f"{stem}.run"
        work.mkdir(exist_ok=True)
        result = subprocess.run([str(binary)], capture_output=True, text=True, cwd=work, timeout=300)
        if result.returncode != 0:
            failures += 1
            print(f"FAIL {b.name}: exit status {result.returncode}\n{result.stdout}{result.stderr}")
            continue
        print(f"ok   {b.name}")
    shown = [b.name for b in all_blocks("cpp") if b not in programs]
    print(f"{len(programs) - failures} of {len(programs)} C++ examples compiled and ran; "
          f"{len(shown)} C++ blocks are fragments or no-test: {', '.join(shown)}")
    return 1 if failures or not programs else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    cpp = sub.add_parser("cpp")
    cpp.add_argument("--cxx", default="c++")
    cpp.add_argument("--include", default=str(ROOT / "include"))
    cpp.add_argument("--lib", required=True)
    cpp.add_argument("--out", required=True)
    python = sub.add_parser("python")
    python.add_argument("file")
    args = parser.parse_args()
    if args.command == "python":
        return run_python(pathlib.Path(args.file).resolve())
    return run_cpp(args)


if __name__ == "__main__":
    sys.exit(main())
