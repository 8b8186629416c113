"""traceprism: read torch.profiler (Kineto) GPU traces of LLM inference.

Open a trace, read its summary, and take any table as an Arrow stream (the Arrow PyCapsule
interface), with its real column types::

    import traceprism, pyarrow as pa, polars as pl, duckdb
    t = traceprism.open("rank0.pt.trace.json.gz")
    t.summary["phases"]                      # as `traceprism summary --json`
    kernels = pa.table(t.table("kernels"))   # no copy through text; int64, float64, string, bool
    df = t.to_pandas("layer_summary")
    pl.DataFrame(t.table("ops_summary"))     # polars.from_arrow(stream) gives a struct Series
    k = t.table("kernels"); duckdb.sql("select phase, sum(dur_us) from k group by 1")

Times are float64 microseconds (fields with metadata ``unit = us``). Nothing is uploaded: the
trace is read by the same Rust core as the CLI and the page.
"""

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

__version__: str

_Path = Union[str, "os.PathLike[str]"]

class TraceError(Exception):
    """A trace (or a rules or capture file) could not be read.

    The message is the CLI's: what went wrong and where (byte offset, event index).
    """

class TraceWarning(UserWarning):
    """A trace was read with a caveat: cut short (its complete events are analysed), or a rank
    left out of a run. Issued through :mod:`warnings`."""

class Table:
    """One typed table. It leaves as an Arrow C stream: ``pyarrow.table(t)``,
    ``polars.DataFrame(t)`` and DuckDB (``duckdb.sql("select ... from t")``) read it as it is.

    Each read makes a new stream, batch by batch; ``kernels`` rows are made from the analysis as
    the batches are read, never built whole.
    """

    @property
    def name(self) -> str:
        """The table's name (its CSV, sheet and Parquet file name)."""
    @property
    def columns(self) -> List[str]:
        """Column names, in order."""
    @property
    def num_rows(self) -> int:
        """The number of rows (for ``kernels``, counted without making the rows); also ``len(t)``."""
    def __len__(self) -> int: ...
    @property
    def types(self) -> List[str]:
        """Each column's declared type: ``integer``, ``float``, ``text``, ``boolean`` or ``us``
        (time in µs, a float64 column)."""
    def __arrow_c_schema__(self) -> Any:
        """The Arrow schema as a PyCapsule."""
    def __arrow_c_stream__(self, requested_schema: Optional[Any] = None) -> Any:
        """The rows as an Arrow C stream in a PyCapsule. ``requested_schema`` is not honoured:
        the table's own types are returned, as the interface allows."""
    def to_arrow(self) -> Any:
        """The table as a ``pyarrow.Table`` (needs pyarrow)."""
    def to_polars(self) -> Any:
        """The table as a ``polars.DataFrame`` (needs polars)."""
    def to_pandas(self) -> Any:
        """The table as a ``pandas.DataFrame`` (needs pyarrow and pandas)."""

class Trace:
    """An analysed trace. Dropping the last reference frees its memory."""

    @property
    def path(self) -> str:
        """The path it was opened from."""
    @property
    def summary(self) -> Dict[str, Any]:
        """The headline facts, equal to ``traceprism summary TRACE --json``."""
    @property
    def identity(self) -> Dict[str, str]:
        """file, device, workload, rank (when known), version: the key-value metadata of its
        Parquet files."""
    def tables(self) -> List[str]:
        """The names of its tables, in export order (as ``traceprism tables``)."""
    def table(self, name: str) -> Table:
        """Table ``name``; ``KeyError`` for an unknown name."""
    def to_pandas(self, name: str) -> Any:
        """Table ``name`` as a ``pandas.DataFrame``."""
    def to_parquet(self, dir: _Path) -> List[Path]:
        """Writes every table as ``dir/<table>.parquet`` (typed, zstd, identity as key-value
        metadata), as ``traceprism export TRACE --parquet DIR``; returns the files written."""

class Run:
    """All ranks of one run: collectives matched, clocks aligned, the straggler named."""

    @property
    def summary(self) -> Dict[str, Any]:
        """Equal to ``traceprism ranks ... --json``: counts, finding, warnings and tables."""
    @property
    def files(self) -> List[str]:
        """The rank files read, in rank order."""
    @property
    def traces(self) -> List[Trace]:
        """Each rank's trace, in rank order: the run is read once for its own tables and its
        ranks' tables."""
    def tables(self) -> List[str]:
        """The names of the run's tables."""
    def table(self, name: str) -> Table:
        """Table ``name``; ``KeyError`` for an unknown name."""
    def to_pandas(self, name: str) -> Any:
        """Table ``name`` as a ``pandas.DataFrame``."""

class Comparison:
    """Where trace A is slower than trace B, and why."""

    @property
    def summary(self) -> List[Dict[str, Any]]:
        """Every table, equal to the ``tables`` of ``traceprism compare A B --json``."""
    @property
    def headline(self) -> str:
        """The verdict in one sentence (the CLI's first line): who is slower, by how much a step
        against the steps' noise, and what moved most (``compare_budget``)."""
    def tables(self) -> List[str]:
        """The names of the comparison's tables."""
    def table(self, name: str) -> Table:
        """Table ``name``; ``KeyError`` for an unknown name."""
    def to_pandas(self, name: str) -> Any:
        """Table ``name`` as a ``pandas.DataFrame``."""

def open(
    path: _Path,
    rules: Optional[_Path] = None,
    capture: Union[_Path, Sequence[_Path], None] = None,
    *,
    threads: Optional[int] = None,
    phase_method: str = "union",
    decode_threshold: int = 0,
    micro_idle_us: float = 10.0,
    short_kernel_us: float = 10.0,
    short_kernel_bins: int = 10,
    topk: int = 0,
    split_half_layers: bool = False,
    device: Optional[str] = None,
    exclude_unlinked: bool = False,
    strict: bool = False,
) -> Trace:
    """Reads and analyses a trace: Chrome-trace JSON, plain or gzip, or a JAX ``*.xplane.pb``,
    told apart by its bytes. The GIL is released while it is read. The keywords after ``threads``
    are the CLI's options (``--phase-method`` is ``phase_method``...), as :func:`options` lists them.

    rules: a TOML file of extra kernel-category rules (as ``--rules``).
    capture: a capture trace, a folder with ``execution_details.json``, or a list of them (as
    ``--capture``): kernels replayed from CUDA/HIP graphs take the ops that dispatched them.
    threads: threads that parse a plain-JSON trace (default: one per core, up to 8).
    strict: a trace cut short raises ``TraceError`` (default: a ``TraceWarning``, and its
    complete events are analysed).
    """

def read(
    data: Union[bytes, bytearray],
    name: str = "<bytes>",
    rules: Optional[_Path] = None,
    *,
    phase_method: str = "union",
    decode_threshold: int = 0,
    micro_idle_us: float = 10.0,
    short_kernel_us: float = 10.0,
    short_kernel_bins: int = 10,
    topk: int = 0,
    split_half_layers: bool = False,
    device: Optional[str] = None,
    exclude_unlinked: bool = False,
    strict: bool = False,
) -> Trace:
    """Reads and analyses a trace held in memory (from object storage, say): Chrome-trace JSON,
    plain or gzip, or a JAX XSpace, told apart by its bytes, as :func:`open` does for a file.
    ``name`` stands for the file in messages and in the tables' metadata. The GIL is released
    while it is read. The keywords are :func:`open`'s."""

def ranks(
    paths: Union[_Path, Sequence[_Path]],
    rules: Optional[_Path] = None,
    capture: Union[_Path, Sequence[_Path], None] = None,
    *,
    align: bool = True,
    threads: Optional[int] = None,
    phase_method: str = "union",
    decode_threshold: int = 0,
    micro_idle_us: float = 10.0,
    short_kernel_us: float = 10.0,
    short_kernel_bins: int = 10,
    topk: int = 0,
    split_half_layers: bool = False,
    device: Optional[str] = None,
    exclude_unlinked: bool = False,
    strict: bool = False,
) -> Run:
    """Reads one run's rank traces (a folder of them, or a list of files), as ``traceprism ranks``.
    An unreadable rank is left out with a ``TraceWarning``; fewer than two raise ``TraceError``."""

def compare(
    a: Union[Trace, _Path],
    b: Union[Trace, _Path],
    *,
    phase: str = "all",
    label_a: Optional[str] = None,
    label_b: Optional[str] = None,
    ratio_threshold: float = 1.1,
    min_gap_us: float = 1.0,
    min_change: float = 0.01,
    max_align_cells: int = 16000000,
    rules: Optional[_Path] = None,
    phase_method: str = "union",
    decode_threshold: int = 0,
    micro_idle_us: float = 10.0,
    short_kernel_us: float = 10.0,
    short_kernel_bins: int = 10,
    topk: int = 0,
    split_half_layers: bool = False,
    device: Optional[str] = None,
    exclude_unlinked: bool = False,
    strict: bool = False,
) -> Comparison:
    """Where A is slower than B and why, as ``traceprism compare A B`` (``phase``: all, prefill,
    decode...). The comparison's options first, then, for a trace given as a path, :func:`open`'s."""

def options() -> List[Dict[str, Any]]:
    """Every option :func:`open`, :func:`read`, :func:`ranks` and :func:`compare` take by keyword,
    as the core declares it (the CLI's flags and MCP's arguments are made from the same
    declaration): ``{scope, field, keyword, flags, kind, choices, default, doc}``, ``scope``
    ``analysis`` or ``compare``."""

def table_names() -> List[str]:
    """The names of every table a trace has, in export order."""
