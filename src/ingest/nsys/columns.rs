//! The tables the reader reads and their columns, each declared once by name: a table is a type
//! whose variants are its columns ([`table!`]), a row is read through them ([`Row::int`],
//! [`Row::text`]), and [`WANTED`] (what the page's SQLite module is asked for) is built from the
//! same declarations, so a name and its position can never drift apart.

use std::marker::PhantomData;
pub use traceprism_sqlite::Cell;

/// A column of a table declared with [`table!`]: its position in the columns read.
pub trait Column: Copy {
    /// The table's name in the export.
    const TABLE: &'static str;
    /// Its columns, by name, in the order read.
    const COLUMNS: &'static [&'static str];
    /// This column's position in [`Column::COLUMNS`].
    fn at(self) -> usize;
}

/// One row of table `T`, read by `T`'s columns.
pub struct Row<'r, 'c, T> {
    cells: &'r [Cell<'c>],
    table: PhantomData<T>,
}

impl<'r, 'c, T: Column> Row<'r, 'c, T> {
    /// The row of `cells` (in [`Column::COLUMNS`] order).
    pub fn new(cells: &'r [Cell<'c>]) -> Self {
        Row { cells, table: PhantomData }
    }
    /// The column as an integer (`None` when NULL, absent or not a whole number).
    pub fn int(&self, column: T) -> Option<i64> {
        self.cells.get(column.at()).and_then(|c| c.int())
    }
    /// The column as text (`None` when NULL, absent or not text).
    pub fn text(&self, column: T) -> Option<&'c str> {
        self.cells.get(column.at()).and_then(|c| c.text())
    }
}

/// Declares a table: `table!(Doc, Name = "SQL_TABLE" { column = "sqlColumn", ... })`.
macro_rules! table {
    ($(#[$doc:meta])* $name:ident = $table:literal { $($(#[$cdoc:meta])* $col:ident = $sql:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($(#[$cdoc])* #[doc = concat!("`", $sql, "`")] $col),*
        }
        impl Column for $name {
            const TABLE: &'static str = $table;
            const COLUMNS: &'static [&'static str] = &[$($sql),*];
            fn at(self) -> usize {
                self as usize
            }
        }
    };
}

table!(
    /// The export's own facts (`EXPORT_SCHEMA_VERSION`).
    MetaExport = "META_DATA_EXPORT" { Name = "name", Value = "value" }
);
table!(
    /// Every string the other tables name by id.
    StringIds = "StringIds" { Id = "id", Value = "value" }
);
table!(
    /// Processes and their names.
    Processes = "PROCESSES" { GlobalPid = "globalPid", Pid = "pid", Name = "name" }
);
table!(
    /// Threads' names.
    ThreadNames = "ThreadNames" { NameId = "nameId", GlobalTid = "globalTid" }
);
table!(
    /// The GPU's kernels: the table the analysis cannot do without.
    Kernels = "CUPTI_ACTIVITY_KIND_KERNEL" {
        Start = "start", End = "end", DeviceId = "deviceId", StreamId = "streamId", CorrelationId = "correlationId",
        GlobalPid = "globalPid", DemangledName = "demangledName", ShortName = "shortName",
        GridX = "gridX", GridY = "gridY", GridZ = "gridZ", BlockX = "blockX", BlockY = "blockY", BlockZ = "blockZ",
    }
);
table!(
    /// Whole-graph replays (`nsys profile --cuda-graph-trace=graph`, the default): one row per
    /// replay, and none of the graph's kernels in [`Kernels`].
    GraphReplays = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE" {
        Start = "start", End = "end", DeviceId = "deviceId", StreamId = "streamId", CorrelationId = "correlationId",
        GlobalPid = "globalPid", GraphId = "graphId",
    }
);
table!(
    /// CUDA runtime calls.
    Runtime = "CUPTI_ACTIVITY_KIND_RUNTIME" {
        Start = "start", End = "end", GlobalTid = "globalTid", CorrelationId = "correlationId", NameId = "nameId",
    }
);
table!(
    /// Copies.
    Memcpy = "CUPTI_ACTIVITY_KIND_MEMCPY" {
        Start = "start", End = "end", DeviceId = "deviceId", StreamId = "streamId", CorrelationId = "correlationId",
        GlobalPid = "globalPid", CopyKind = "copyKind", Bytes = "bytes", SrcKind = "srcKind", DstKind = "dstKind",
    }
);
table!(
    /// Fills.
    Memset = "CUPTI_ACTIVITY_KIND_MEMSET" {
        Start = "start", End = "end", DeviceId = "deviceId", StreamId = "streamId", CorrelationId = "correlationId",
        GlobalPid = "globalPid", Bytes = "bytes",
    }
);
table!(
    /// The export's names of copy kinds.
    CopyKinds = "ENUM_CUDA_MEMCPY_OPER" { Id = "id", Name = "name" }
);
table!(
    /// The export's names of memory kinds.
    MemoryKinds = "ENUM_CUDA_MEM_KIND" { Id = "id", Label = "label" }
);
table!(
    /// NVTX marks and ranges.
    Nvtx = "NVTX_EVENTS" {
        Start = "start", End = "end", EventType = "eventType", Text = "text", TextId = "textId", GlobalTid = "globalTid",
    }
);
table!(
    /// The GPUs.
    Gpus = "TARGET_INFO_GPU" {
        Id = "id", Name = "name", TotalMemory = "totalMemory", ComputeMajor = "computeMajor",
        ComputeMinor = "computeMinor", SmCount = "smCount", WarpSize = "warpSize",
    }
);
table!(
    /// The profiled process's environment (read by the secret detector only).
    SystemEnv = "TARGET_INFO_SYSTEM_ENV" { Name = "name", Value = "value" }
);
table!(
    /// The capture's settings (read by the secret detector only).
    MetaCapture = "META_DATA_CAPTURE" { Name = "name", Value = "value" }
);

/// A table of copies or fills: the columns they share.
pub trait DeviceActivity: Column {
    /// `start` (ns).
    const START: Self;
    /// `end` (ns).
    const END: Self;
    /// `deviceId`.
    const DEVICE_ID: Self;
    /// `streamId`.
    const STREAM_ID: Self;
    /// `correlationId`.
    const CORRELATION_ID: Self;
    /// `globalPid`.
    const GLOBAL_PID: Self;
    /// `bytes`.
    const BYTES: Self;
}

/// Says which of `$table`'s columns are the shared ones of [`DeviceActivity`].
macro_rules! device_activity {
    ($table:ident) => {
        impl DeviceActivity for $table {
            const START: Self = $table::Start;
            const END: Self = $table::End;
            const DEVICE_ID: Self = $table::DeviceId;
            const STREAM_ID: Self = $table::StreamId;
            const CORRELATION_ID: Self = $table::CorrelationId;
            const GLOBAL_PID: Self = $table::GlobalPid;
            const BYTES: Self = $table::Bytes;
        }
    };
}
device_activity!(Memcpy);
device_activity!(Memset);

/// The table and its columns, as a [`WANTED`] entry.
const fn wanted<T: Column>() -> (&'static str, &'static [&'static str]) {
    (T::TABLE, T::COLUMNS)
}

/// What the reader asks of an export: each table and the columns it reads, by name (a column
/// absent from the export reads as NULL; which ones the analysis cannot do without is checked by
/// the reader). The page's SQLite module answers exactly these.
pub const WANTED: &[(&str, &[&str])] = &[
    wanted::<MetaExport>(),
    wanted::<StringIds>(),
    wanted::<Processes>(),
    wanted::<ThreadNames>(),
    wanted::<Kernels>(),
    wanted::<GraphReplays>(),
    wanted::<Runtime>(),
    wanted::<Memcpy>(),
    wanted::<Memset>(),
    wanted::<CopyKinds>(),
    wanted::<MemoryKinds>(),
    wanted::<Nvtx>(),
    wanted::<Gpus>(),
    wanted::<SystemEnv>(),
    wanted::<MetaCapture>(),
];
