"""The type stub (python/traceprism.pyi) names exactly what the module has: every public function
and class, and every method and property of each class, so editors and type checkers see the
real API."""

import ast
from pathlib import Path

import traceprism

STUB = Path(__file__).resolve().parents[2] / "python" / "traceprism.pyi"


def test_the_stub_matches_the_module():
    tree = ast.parse(STUB.read_text())
    top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    public = {n for n in dir(traceprism) if not n.startswith("_")} - {"traceprism"}  # the native submodule
    assert top == public
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        if issubclass(getattr(traceprism, cls.name), BaseException):
            continue
        methods = [f for f in cls.body if isinstance(f, ast.FunctionDef)]
        for f in methods:
            if f.name.startswith("__") and not f.name.startswith("__arrow"):
                assert hasattr(getattr(traceprism, cls.name), f.name), f"{cls.name}.{f.name}"
        methods = [f for f in methods if not f.name.startswith("_") or f.name.startswith("__arrow")]
        stubbed = {f.name for f in methods}
        real = {n for n in dir(getattr(traceprism, cls.name)) if not n.startswith("_") or n.startswith("__arrow")}
        assert stubbed == real, cls.name
        for f in methods:
            assert ast.get_docstring(f), f"{cls.name}.{f.name} has a docstring in the stub"
