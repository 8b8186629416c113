//! Native gzip reading on two threads: one inflates, the other parses in order. Parsing is the
//! slower of the two, so whenever the parser is behind (its queue is full) the inflating thread
//! does not wait: it parses the block it has just filled itself, as a [`Part`] that starts at a
//! likely event boundary inside the block, and queues the part instead. The parser adopts the part
//! only if its own stream stops exactly at that boundary; otherwise it parses the rest of the block
//! again, in order, so the model and any error message never depend on the guess.

use super::formats::sniff;
use super::part::{Part, PartReader};
use super::reader::Reader;
use super::source::read_some;
use crate::error::{Error, Result};
use crate::ingest::{likely_event_start, DocumentForm, GzipDecoder, Output};
use crate::model::Trace;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};

/// Decompressed text per block handed to the parser.
const BLOCK: usize = 4 << 20;
/// Blocks queued for the parser before the inflating thread starts parsing blocks itself. With 1,
/// the parser ran dry after each shared block (it adopts the part at once, then waits for the
/// next block to be inflated); with 2 it still has a block queued while the inflater parses. On
/// the 953 MB bench file, `traceprism summary` in interleaved runs (6 with 1, 10 with 2 and 3):
/// median 1.92 s with 1, 1.68 s with 2, 1.67 s with 3 (4 MB more memory).
const QUEUE: usize = 2;
/// Compressed bytes read from the source at a time.
const READ: usize = 8 << 20;

/// What the inflating thread hands to the parser.
enum Inflated {
    /// Text to parse in order, and the compressed bytes it came from.
    Text(Vec<u8>, u64),
    /// A block the inflating thread parsed itself from `split` on: the text before `split` is
    /// parsed in order, then `part` is adopted (or, refused or failed, the rest is parsed in order).
    Parsed { block: Vec<u8>, compressed: u64, split: usize, part: Box<Result<Part>> },
}

/// When the inflating thread parses a block itself instead of queueing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// When the parser's queue is full (the default).
    WhenBehind,
    /// Every block but the first (tests and benchmarks: the part path on every block).
    Always,
    /// Never: the inflating thread only inflates (benchmarks: the gain of sharing).
    Never,
}

/// Reads a gzip trace from `source` on two threads, sharing the parse as `sharing` says.
pub fn read_gzip(mut source: impl std::io::Read + Send, sharing: Sharing) -> Result<Trace> {
    let mut first = vec![0u8; READ];
    let n = read_some(&mut source, &mut first)?;
    first.truncate(n);
    read(first, source, sharing)
}

/// Reads a gzip trace whose first compressed bytes are `first` and the rest comes from `source`.
pub(super) fn read(first: Vec<u8>, source: impl std::io::Read + Send, sharing: Sharing) -> Result<Trace> {
    let (tx, rx) = sync_channel::<Inflated>(QUEUE);
    // Parsed blocks go back to the inflating thread for reuse (fresh pages cost page faults).
    let (spare_tx, spare_rx) = sync_channel::<Vec<u8>>(QUEUE + 2);
    std::thread::scope(|scope| {
        let inflater = scope.spawn(move || inflate_blocks(first, source, sharing, &tx, &spare_rx));
        let parsed = parse_blocks(&rx, &spare_tx);
        drop(rx);
        drop(spare_tx);
        let inflated = inflater.join().unwrap_or_else(|_| Err(Error::new("inflate thread panicked")));
        let mut reader = parsed?;
        if let Some(what) = inflated? {
            reader.input_cut(what);
        }
        reader.finish()
    })
}

/// The parser's side: every block in order.
fn parse_blocks(rx: &Receiver<Inflated>, spare: &SyncSender<Vec<u8>>) -> Result<Reader> {
    let mut reader = Reader::new();
    for message in rx {
        let block = match message {
            Inflated::Text(block, compressed) => {
                reader.push_json(&block, compressed)?;
                block
            }
            Inflated::Parsed { block, compressed, split, part } => {
                reader.push_json(&block[..split], compressed)?;
                let adopted = match *part {
                    Ok(part) => reader.adopt_part_counted(part, 0),
                    Err(_) => false,
                };
                if !adopted {
                    reader.push_json(&block[split..], 0)?;
                }
                block
            }
        };
        let _ = spare.try_send(block);
    }
    Ok(reader)
}

/// The inflating thread's side: fills blocks and queues them (or parses them when the queue is full).
fn inflate_blocks(
    first: Vec<u8>,
    mut source: impl std::io::Read,
    sharing: Sharing,
    tx: &SyncSender<Inflated>,
    spare: &Receiver<Vec<u8>>,
) -> Result<Option<String>> {
    let mut gz = GzipDecoder::default();
    let mut queue = Queue { tx, spare, sharing, block: vec![0; BLOCK], filled: 0, compressed: 0, offset: 0, form: None };
    queue.compressed += first.len() as u64;
    gz.push_to(&first, &mut queue)?;
    let mut buf = first;
    buf.resize(READ, 0);
    loop {
        let n = read_some(&mut source, &mut buf)?;
        if n == 0 {
            break;
        }
        queue.compressed += n as u64;
        gz.push_to(&buf[..n], &mut queue)?;
    }
    let end = gz.finish_to(&mut queue)?;
    queue.flush()?;
    Ok(end)
}

/// The block being filled (the inflater writes straight into it) and where it goes.
struct Queue<'a> {
    tx: &'a SyncSender<Inflated>,
    spare: &'a Receiver<Vec<u8>>,
    sharing: Sharing,
    /// `BLOCK` bytes, the first `filled` of them inflated text.
    block: Vec<u8>,
    filled: usize,
    /// Compressed bytes read since the last block was queued.
    compressed: u64,
    /// Offset of `block` in the whole text.
    offset: u64,
    /// The document's form, once its first bytes are known (`None`: not JSON, never split).
    form: Option<DocumentForm>,
}

impl Output for Queue<'_> {
    fn room(&mut self) -> &mut [u8] {
        &mut self.block[self.filled..]
    }

    fn wrote(&mut self, n: usize) -> Result<()> {
        self.filled += n;
        if self.filled == BLOCK {
            self.send_full()?;
        }
        Ok(())
    }
}

impl Queue<'_> {
    /// Queues the full block, or parses it here if the parser is behind.
    fn send_full(&mut self) -> Result<()> {
        if self.offset == 0 {
            // What is inside the gzip stream: its own first bytes tell.
            self.form = sniff(&self.block).form();
        }
        // A block back from the parser is reused as it is (full length: no clearing, no page faults).
        let next = self.spare.try_recv().ok().filter(|b| b.len() == BLOCK);
        let block = std::mem::replace(&mut self.block, next.unwrap_or_else(|| vec![0; BLOCK]));
        self.filled = 0;
        let compressed = std::mem::take(&mut self.compressed);
        let offset = self.offset;
        self.offset += block.len() as u64;
        // The document's form if this block may be parsed here (never the first block: it holds
        // the document's start, which only the in-order parser reads).
        let shareable = if self.sharing == Sharing::Never || offset == 0 { None } else { self.form };
        let message = match (self.sharing, shareable) {
            (Sharing::Always, Some(form)) => parse_here(block, compressed, offset, form),
            _ => match self.tx.try_send(Inflated::Text(block, compressed)) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Disconnected(_)) => return Err(Error::new("parser stopped")),
                Err(TrySendError::Full(Inflated::Text(block, compressed))) => match shareable {
                    Some(form) => parse_here(block, compressed, offset, form),
                    None => Inflated::Text(block, compressed),
                },
                Err(TrySendError::Full(message)) => message,
            },
        };
        self.tx.send(message).map_err(|_| Error::new("parser stopped"))
    }

    /// Queues the last, partial block.
    fn flush(&mut self) -> Result<()> {
        if self.filled == 0 && self.compressed == 0 {
            return Ok(());
        }
        let mut block = std::mem::take(&mut self.block);
        block.truncate(self.filled);
        self.tx.send(Inflated::Text(block, self.compressed)).map_err(|_| Error::new("parser stopped"))
    }
}

/// Parses `block` (at `offset` in the text) from its first likely event start on.
fn parse_here(block: Vec<u8>, compressed: u64, offset: u64, form: DocumentForm) -> Inflated {
    let Some(split) = likely_event_start(&block, 0) else { return Inflated::Text(block, compressed) };
    let mut reader = PartReader::new(form, offset + split as u64);
    let part = reader.push(&block[split..]).map(|()| reader.finish());
    Inflated::Parsed { block, compressed, split, part: Box::new(part) }
}
