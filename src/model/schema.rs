//! The model's tables, each declared once: a column's name, type and role are written in one line
//! of a `table!` declaration (in `model/mod.rs`), and everything that walks a table's columns
//! follows from it: the row the reader pushes, the bytes a part travels in between Web Workers
//! ([`crate::model::transfer`]), the check of those bytes, and the append of a part parsed
//! elsewhere (a thread, a worker) to the reader that adopts it. Adding a column is one line.
//!
//! A column's role says what its values mean when a part is appended to another builder:
//!
//! | role           | values                                   | on append              | checked in bytes        |
//! |----------------|------------------------------------------|------------------------|-------------------------|
//! | [`Plain`]      | numbers, times, kinds                    | kept                   | enum tags only          |
//! | [`Name`]       | an interned name id                      | the adopter's id       | below the part's names  |
//! | [`Thread`]     | a row of `Trace::threads`                | the adopter's row      | below the part's threads|
//! | [`EventIndex`] | an event's index in `traceEvents`        | shifted by the events before the part | no   |
//! | [`TextOrNumber`] | a pid/tid: a number or a text's name id | the text's adopter id  | a text id below the part's names |
//! | [`OpRow`]      | a row of `Trace::ops`                    | shifted by the adopter's ops before the part | below the part's ops |
//! | [`GpuRow`]     | a row of `Trace::gpu`                    | shifted by the adopter's GPU events before the part | below the part's GPU events |
//!
//! Link columns (filled by [`crate::link`]) are declared apart: a builder has not linked anything,
//! so they are not in the bytes and are [`NONE`](super::NONE) when pushed or appended.

use super::NameId;
use crate::support::codec::{ByteSource, Le, WireSink, STAGE_BYTES};

/// How a part's ids become the adopting builder's ids.
pub struct Remap<'a> {
    /// The adopter's name id of each of the part's name ids.
    pub names: &'a [NameId],
    /// The adopter's thread row of each of the part's thread rows.
    pub threads: &'a [u32],
    /// Events in `traceEvents` before the part's first event.
    pub event_offset: u64,
    /// CPU ops in the adopter before the part's first op.
    pub op_offset: u32,
    /// GPU events in the adopter before the part's first GPU event.
    pub gpu_offset: u32,
}

impl Remap<'_> {
    /// A stored pid/tid: a text one holds a name id, remapped too.
    pub fn id(&self, v: i64) -> i64 {
        match super::text_id_name(v).and_then(|n| self.names.get(n as usize)) {
            Some(&n) => super::text_id(n),
            None => v,
        }
    }
}

/// What the ids of a part in byte form must stay below.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Names the part interned.
    pub names: usize,
    /// Threads the part saw.
    pub threads: usize,
    /// CPU ops the part holds.
    pub ops: usize,
    /// GPU events the part holds.
    pub gpu: usize,
}

/// A value a column holds, and its form in a part's bytes.
pub trait Cell: Copy {
    /// The value's form in the bytes.
    type Wire: Le;
    /// False when every wire value is a valid cell (plain numbers); true for enum tags.
    const TAGGED: bool;
    /// The wire form.
    fn to_wire(self) -> Self::Wire;
    /// The value of a wire form, `None` if it is not one (a bad enum tag).
    fn from_wire(w: Self::Wire) -> Option<Self>;
    /// Writes a column's values (one pass, staged for sinks that are not a `Vec`).
    fn write_all<S: WireSink>(values: &[Self], sink: &mut S) {
        let per = (STAGE_BYTES / Self::Wire::SIZE).max(1);
        let mut wire = Vec::with_capacity(per.min(values.len()));
        for chunk in values.chunks(per) {
            wire.clear();
            wire.extend(chunk.iter().map(|v| v.to_wire()));
            sink.column(&wire);
        }
    }
}

macro_rules! plain_cells {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            type Wire = $t;
            const TAGGED: bool = false;
            #[inline]
            fn to_wire(self) -> $t {
                self
            }
            #[inline]
            fn from_wire(w: $t) -> Option<$t> {
                Some(w)
            }
            fn write_all<S: WireSink>(values: &[$t], sink: &mut S) {
                sink.column(values);
            }
        }
    )*};
}
plain_cells!(i32, i64, u32, [u32; 3]);

impl Cell for bool {
    type Wire = u8;
    const TAGGED: bool = true;
    fn to_wire(self) -> u8 {
        self as u8
    }
    fn from_wire(w: u8) -> Option<bool> {
        match w {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

/// A field-less enum stored as a one-byte tag: its position in [`Tag::ALL`].
pub trait Tag: Copy + PartialEq + 'static {
    /// Every variant, in tag order.
    const ALL: &'static [Self];
}

impl<T: Tag> Cell for T {
    type Wire = u8;
    const TAGGED: bool = true;
    fn to_wire(self) -> u8 {
        T::ALL.iter().position(|&v| v == self).unwrap_or(0) as u8
    }
    fn from_wire(w: u8) -> Option<T> {
        T::ALL.get(w as usize).copied()
    }
}

/// What a column's values mean when a part is appended elsewhere (see the module's table).
pub trait Role<T> {
    /// Whether values in bytes must be checked against [`Limits`].
    const CHECKS: bool;
    /// The value in the adopting builder.
    fn remap(v: T, to: &Remap) -> T;
    /// Whether a value from bytes is within the part's limits.
    fn valid(v: T, limits: &Limits) -> bool;
}

/// Values kept as they are.
pub struct Plain;
/// An interned name id.
pub struct Name;
/// A row of `Trace::threads`.
pub struct Thread;
/// An event's index in `traceEvents`.
pub struct EventIndex;
/// A process or thread id: a number, or a text's name id (see `model::text_id`).
pub struct TextOrNumber;
/// A row of `Trace::ops`.
pub struct OpRow;
/// A row of `Trace::gpu`.
pub struct GpuRow;

impl Role<u32> for GpuRow {
    const CHECKS: bool = true;
    #[inline]
    fn remap(v: u32, to: &Remap) -> u32 {
        v.saturating_add(to.gpu_offset)
    }
    fn valid(v: u32, limits: &Limits) -> bool {
        (v as usize) < limits.gpu
    }
}

impl Role<u32> for OpRow {
    const CHECKS: bool = true;
    #[inline]
    fn remap(v: u32, to: &Remap) -> u32 {
        v.saturating_add(to.op_offset)
    }
    fn valid(v: u32, limits: &Limits) -> bool {
        (v as usize) < limits.ops
    }
}

impl<T> Role<T> for Plain {
    const CHECKS: bool = false;
    #[inline]
    fn remap(v: T, _: &Remap) -> T {
        v
    }
    fn valid(_: T, _: &Limits) -> bool {
        true
    }
}

impl Role<u32> for Name {
    const CHECKS: bool = true;
    #[inline]
    fn remap(v: u32, to: &Remap) -> u32 {
        to.names[v as usize]
    }
    fn valid(v: u32, limits: &Limits) -> bool {
        (v as usize) < limits.names
    }
}

impl Role<u32> for Thread {
    const CHECKS: bool = true;
    #[inline]
    fn remap(v: u32, to: &Remap) -> u32 {
        to.threads[v as usize]
    }
    fn valid(v: u32, limits: &Limits) -> bool {
        (v as usize) < limits.threads
    }
}

impl Role<u32> for EventIndex {
    const CHECKS: bool = false;
    #[inline]
    fn remap(v: u32, to: &Remap) -> u32 {
        (v as u64 + to.event_offset).min(u32::MAX as u64) as u32
    }
    fn valid(_: u32, _: &Limits) -> bool {
        true
    }
}

impl Role<i64> for TextOrNumber {
    const CHECKS: bool = true;
    #[inline]
    fn remap(v: i64, to: &Remap) -> i64 {
        to.id(v)
    }
    fn valid(v: i64, limits: &Limits) -> bool {
        super::text_id_name(v).is_none_or(|n| (n as usize) < limits.names)
    }
}

/// Appends a part's own column (parsed in this process) through its role.
pub fn append_column<T: Cell, R: Role<T>>(dst: &mut Vec<T>, src: &[T], to: &Remap) {
    dst.reserve_exact(src.len());
    dst.extend(src.iter().map(|&v| R::remap(v, to)));
}

/// A part's rows in its bytes, read column after column, piece by piece (in the page the bytes
/// are a JS array: pieces are staged, the whole is never copied).
pub struct RowsInBytes<'a> {
    bytes: &'a dyn ByteSource,
    pos: usize,
    /// Pieces of a source that is not in this memory are copied here first.
    stage: Vec<u8>,
}

impl<'a> RowsInBytes<'a> {
    /// The rows that start at byte `pos` of `bytes`.
    pub fn new(bytes: &'a dyn ByteSource, pos: usize) -> Self {
        RowsInBytes { bytes, pos, stage: Vec::new() }
    }

    /// Hands the next `len` bytes to `f` in pieces of whole `size`-byte values.
    pub fn each(&mut self, len: usize, size: usize, mut f: impl FnMut(&[u8])) {
        let RowsInBytes { bytes, pos, stage } = self;
        if let Some(all) = bytes.slice(*pos, len) {
            f(all);
        } else {
            let step = (STAGE_BYTES / size).max(1) * size;
            let mut at = 0;
            while at < len {
                let n = step.min(len - at);
                stage.resize(n, 0);
                bytes.read(*pos + at, &mut stage[..n]);
                f(&stage[..n]);
                at += n;
            }
        }
        *pos += len;
    }

    /// Whether the next column (`n` values) holds only valid values for its cell type and role.
    pub fn check<T: Cell, R: Role<T>>(&mut self, n: usize, limits: &Limits) -> bool {
        let size = T::Wire::SIZE;
        if !T::TAGGED && !R::CHECKS {
            self.pos += n * size;
            return true;
        }
        let mut ok = true;
        self.each(n * size, size, |b| {
            ok &= b.chunks_exact(size).all(|c| T::from_wire(T::Wire::get(c)).is_some_and(|v| R::valid(v, limits)))
        });
        ok
    }

    /// Appends the next column (`n` values, already checked) to `dst` through its role.
    pub fn append<T: Cell, R: Role<T>>(&mut self, dst: &mut Vec<T>, n: usize, to: &Remap) {
        let size = T::Wire::SIZE;
        dst.reserve_exact(n);
        self.each(n * size, size, |b| {
            dst.extend(b.chunks_exact(size).filter_map(|c| T::from_wire(T::Wire::get(c))).map(|v| R::remap(v, to)))
        });
    }
}

/// Declares a model table: a struct of columns (one `Vec` each), its row type, and the code that
/// pushes, writes, checks and appends rows, all from one list of `name: type => Role` lines. Link
/// columns (`u32` rows of other tables, [`NONE`] until [`crate::link`] fills them) follow `links`.
macro_rules! table {
    (
        $(#[$meta:meta])*
        pub struct $table:ident, row $row:ident {
            $( $(#[$cmeta:meta])* $col:ident : $ty:ty => $role:ident, )*
        }
        links {
            $( $(#[$lmeta:meta])* $link:ident, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Default, Clone)]
        pub struct $table {
            $( $(#[$cmeta])* pub $col: Vec<$ty>, )*
            $( $(#[$lmeta])* pub $link: Vec<u32>, )*
        }

        #[doc = concat!("One row of [`", stringify!($table), "`] as the reader pushes it (links are filled later).")]
        #[derive(Debug, Clone, Copy)]
        pub struct $row {
            $( $(#[$cmeta])* pub $col: $ty, )*
        }

        #[allow(unused_mut, unused_variables)]
        impl $table {
            /// The columns' names, in declaration (and byte) order; link columns last.
            pub const COLUMNS: &'static [&'static str] = &[$(stringify!($col),)* $(stringify!($link),)*];

            /// Bytes per row in a part's bytes (link columns are not sent).
            pub const WIRE_ROW_BYTES: usize = 0 $(+ <<$ty as $crate::model::schema::Cell>::Wire as $crate::support::codec::Le>::SIZE)*;

            /// Appends one row; its links are [`NONE`](crate::model::NONE).
            pub fn push(&mut self, row: $row) {
                $( self.$col.push(row.$col); )*
                $( self.$link.push($crate::model::NONE); )*
            }

            /// Writes every column but the links, one after the other.
            pub fn write_bytes<S: $crate::support::codec::WireSink>(&self, sink: &mut S) {
                $( <$ty as $crate::model::schema::Cell>::write_all(&self.$col, sink); )*
            }

            /// Checks the next `n` rows of `rows` (every tag and id within `limits`); on failure,
            /// the column whose value is out of range.
            pub fn check_bytes(
                rows: &mut $crate::model::schema::RowsInBytes<'_>,
                n: usize,
                limits: &$crate::model::schema::Limits,
            ) -> Result<(), &'static str> {
                $(
                    if !rows.check::<$ty, $crate::model::schema::$role>(n, limits) {
                        return Err(concat!(stringify!($table), ".", stringify!($col), " out of range"));
                    }
                )*
                Ok(())
            }

            /// Appends another builder's rows (parsed here), ids remapped.
            pub fn append(&mut self, other: &Self, to: &$crate::model::schema::Remap) {
                $( $crate::model::schema::append_column::<$ty, $crate::model::schema::$role>(&mut self.$col, &other.$col, to); )*
                $( self.$link.extend_from_slice(&other.$link); )*
            }

            /// Appends the next `n` rows of `rows` (checked by [`Self::check_bytes`]), ids remapped.
            pub fn append_bytes(&mut self, rows: &mut $crate::model::schema::RowsInBytes<'_>, n: usize, to: &$crate::model::schema::Remap) {
                $( rows.append::<$ty, $crate::model::schema::$role>(&mut self.$col, n, to); )*
                $( self.$link.resize(self.$link.len() + n, $crate::model::NONE); )*
            }
        }
    };
}

pub(crate) use table;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GpuKind, OpKind};

    #[test]
    fn tags_follow_the_variants() {
        for (i, &k) in GpuKind::ALL.iter().enumerate() {
            assert_eq!(k.to_wire() as usize, i);
            assert_eq!(GpuKind::from_wire(i as u8), Some(k));
        }
        for (i, &k) in OpKind::ALL.iter().enumerate() {
            assert_eq!(k.to_wire() as usize, i);
        }
        assert_eq!(GpuKind::from_wire(GpuKind::ALL.len() as u8), None);
        assert_eq!(bool::from_wire(2), None);
    }
}
