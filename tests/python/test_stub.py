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


def _keywords(fn: ast.FunctionDef) -> dict:
    """A stubbed function's keyword-only parameters and their defaults."""
    return {a.arg: ast.literal_eval(d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults)}


def test_every_function_takes_the_declared_options_by_keyword():
    """The keywords of open, read, ranks and compare are the options the core declares (the CLI's
    flags, snake-cased), with the declared defaults; each one given reaches the core."""
    declared = traceprism.options()
    analysis = {d["keyword"]: d for d in declared if d["scope"] == "analysis" and d["flags"] and d["kind"] != "internal"}
    compare = {d["keyword"]: d for d in declared if d["scope"] == "compare" and d["flags"] and d["kind"] != "internal"}
    assert "phase_method" in analysis and "rules" in analysis and "phase" in compare

    def default(d):
        return False if d["kind"] == "switch" else d["default"]

    funcs = {n.name: n for n in ast.parse(STUB.read_text()).body if isinstance(n, ast.FunctionDef)}
    for name in ("open", "read", "ranks"):
        kw = _keywords(funcs[name])
        kw.pop("threads", None)
        kw.pop("align", None)
        # `rules` is a positional parameter of these three (a path, as `--rules`).
        assert set(kw) == set(analysis) - {"rules"}, name
        assert all(kw[k] == default(analysis[k]) for k in kw), name
    kw = _keywords(funcs["compare"])
    assert set(kw) == set(analysis) | set(compare)
    assert all(kw[k] == default({**analysis, **compare}[k]) for k in kw)
    methods = next(d for d in declared if d["keyword"] == "phase_method")["choices"]
    assert methods[:2] == ["union", "hybrid"] and "gemm_params" in methods


def test_an_option_given_by_keyword_reaches_the_analysis():
    """Options by keyword (phase_method was absent from the Python face before the declaration)
    give what the CLI's flags give, and differ from the defaults; an unknown keyword is a
    TypeError that lists the options."""
    import pytest
    from conftest import FIXTURES, cli_json, comparable

    import pyarrow as pa

    trace = FIXTURES / "llama_dense_eager.pt.trace.json.gz"
    t = traceprism.open(trace, phase_method="kernel_names", topk=3)
    want = cli_json("summary", trace, "--json", "--phase-method", "kernel_names", "--topk", "3")
    assert comparable(t.summary) == comparable(want)
    # The method chosen is the one each pass's phase came from, and the top-k table keeps 3 rows.
    assert set(pa.table(t.table("phase_methods")).column("final_method").to_pylist()) == {"kernel_names"}
    default = traceprism.open(trace)
    assert set(pa.table(default.table("phase_methods")).column("final_method").to_pylist()) == {"union"}
    assert pa.table(t.table("short_kernels")).num_rows == 3 < pa.table(default.table("short_kernels")).num_rows
    with pytest.raises(TypeError, match="unexpected keyword argument 'phase_methd'.*phase_method"):
        traceprism.open(trace, phase_methd="hybrid")
    with pytest.raises(traceprism.TraceError, match="unknown value 'vibes'"):
        traceprism.open(trace, phase_method="vibes")
