//! Reading a whole trace from a path or any `std::io::Read`: memory-mapped ranges parsed at
//! once, or blocks read on one thread while another parses.

// Parts of the text read at once are native only.
#[cfg(not(target_arch = "wasm32"))]
use super::gzip_pipeline::Sharing;
#[cfg_attr(target_arch = "wasm32", allow(unused_imports))]
use super::part::PartReader;
use super::reader::Reader;
use crate::error::{Error, Result};
// Parts of the text read at once are native only.
#[cfg_attr(target_arch = "wasm32", allow(unused_imports))]
use super::formats::{reading, sniff, Reading};
use super::source::read_some;
#[cfg_attr(target_arch = "wasm32", allow(unused_imports))]
use crate::ingest::{likely_event_start, DocumentForm, Format};
use crate::model::Trace;

/// Threads [`read_path_on`] uses: one per core, up to [`MAX_READ_THREADS`].
pub fn default_read_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_READ_THREADS)
}

/// Most threads [`read_path_on`] parses a mapped file on.
pub const MAX_READ_THREADS: usize = 8;

/// Least text a thread of [`read_path_on`] is given: below it, starting a thread and adopting its
/// part costs more than it saves.
#[cfg(unix)]
const MIN_RANGE_BYTES: usize = 4 << 20;

/// Reads a trace file into the model (not linked yet) on at most `threads` threads (1: in order,
/// on this thread); the result is the same for any number of threads. Natively on Unix, a plain-JSON file of 1 MB or more is memory-mapped and
/// parsed in place (no copy through `read()`), in ranges parsed at once, one per core (up to
/// [`MAX_READ_THREADS`]), and pages already parsed are handed back to the kernel so resident memory
/// stays small; everything else goes through [`read_trace`]. (Mapping pays off well below 64 MB:
/// the 58 MB llama trace reads in ~70 ms mapped against ~140 ms through `read_trace`'s blocks.)
///
/// The path `-` reads standard input (`zcat trace.json.gz | traceprism summary -`).
///
/// [`crate::pipeline::read_path`] reads and links, on [`default_read_threads`].
pub fn read_path_on(path: &std::path::Path, threads: usize) -> Result<Trace> {
    if path.as_os_str() == "-" {
        return read_trace(std::io::stdin());
    }
    let file = std::fs::File::open(path).map_err(|e| Error::new(format!("cannot open {}: {e}", path.display())))?;
    #[cfg(unix)]
    {
        const MIN_MAP: u64 = 1 << 20;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len >= MIN_MAP {
            // SAFETY: the map is read-only and private to this function; if another process
            // truncates the file while we read, the OS may raise SIGBUS — the same risk every
            // mmap-based reader accepts for speed.
            if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
                let format = sniff(&map);
                if reading(format) == Reading::InParts {
                    return read_mapped(&map, threads, format);
                }
                // Gzip, an XSpace, an Nsight export: read as a stream, told what it is.
                drop(map);
                return read_trace_of(file, Some(format));
            }
        }
    }
    #[cfg(not(unix))]
    let _ = threads;
    read_trace(file)
}

/// Parses a memory-mapped plain-JSON file on up to `threads` threads, one per range: each range
/// after the first starts at a likely event boundary near its share of the text and is parsed into
/// a [`Part`] on a thread of its own while this thread parses the first range. The parts are then
/// adopted in order, each only if this thread's stream stopped exactly at the boundary where it
/// begins and the part read without error; otherwise that range is parsed again here, in order, so
/// the result (and any error message) never depends on the guesses. Each thread hands back the
/// pages it has parsed.
#[cfg(unix)]
fn read_mapped(map: &memmap2::Mmap, threads: usize, format: Format) -> Result<Trace> {
    let _ = map.advise(memmap2::Advice::Sequential);
    let text: &[u8] = map;
    let mut reader = Reader::with_format(format, true);
    if threads <= 1 {
        push_mapped(map, 0, text.len(), |chunk| reader.push_json(chunk, chunk.len() as u64))?;
        return reader.finish();
    }
    let form = format.form().unwrap_or(DocumentForm::Object);
    let ranges = threads.min(text.len() / MIN_RANGE_BYTES).max(1);
    let mut cuts = vec![0];
    for k in 1..ranges {
        match likely_event_start(text, k * text.len() / ranges) {
            Some(at) if cuts.last().is_some_and(|&last| at > last) => cuts.push(at),
            _ => {}
        }
    }
    cuts.push(text.len());
    if cuts.len() == 2 {
        // One range (a small file, or no event start found): `push` still shares large blocks.
        push_mapped(map, 0, text.len(), |chunk| reader.push(chunk))?;
        return reader.finish();
    }
    let later = &cuts[1..];
    let (main_result, parts) = std::thread::scope(|scope| {
        let workers: Vec<_> = later
            .windows(2)
            .map(|range| {
                let (from, to) = (range[0], range[1]);
                scope.spawn(move || {
                    let mut part = PartReader::new(form, from as u64);
                    push_mapped(map, from, to, |chunk| part.push(chunk)).map(|()| part.finish())
                })
            })
            .collect();
        let main_result = push_mapped(map, 0, later[0], |chunk| reader.push_json(chunk, chunk.len() as u64));
        (main_result, workers.into_iter().map(|w| w.join()).collect::<Vec<_>>())
    });
    main_result?;
    for (part, range) in parts.into_iter().zip(later.windows(2)) {
        let adopted = match part {
            Ok(Ok(part)) => reader.adopt_part(part),
            _ => false,
        };
        if !adopted {
            push_mapped(map, range[0], range[1], |chunk| reader.push_json(chunk, chunk.len() as u64))?;
        }
    }
    reader.finish()
}

/// Feeds `map[from..to]` to `feed` in blocks, handing each block's pages back to the kernel once
/// parsed (the parser keeps its own copy of any unparsed tail).
#[cfg(unix)]
fn push_mapped(map: &memmap2::Mmap, from: usize, to: usize, mut feed: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    const BLOCK: usize = 16 << 20;
    const PAGE: usize = 4096;
    let mut done = from;
    // Whole pages only: the thread of the range next door may still be reading the page two
    // ranges share.
    let mut dropped = from.div_ceil(PAGE) * PAGE;
    while done < to {
        let end = (done + BLOCK).min(to);
        feed(&map[done..end])?;
        let (lo, hi) = (dropped, end / PAGE * PAGE);
        if hi > lo {
            dropped = hi;
            // SAFETY: no borrow of `map[lo..hi]` outlives `feed`; dropping those pages only makes
            // a later access (a re-parse after a wrong guess) read the file again.
            unsafe {
                let _ = map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, lo, hi - lo);
            }
        }
        done = end;
    }
    Ok(())
}

/// Reads a whole trace (not linked yet) from any `std::io::Read` (a file, stdin) in 16 MiB blocks. Natively, gzip
/// input is inflated on a second thread while this one parses.
pub fn read_trace(source: impl std::io::Read + Send) -> Result<Trace> {
    read_trace_of(source, None)
}

/// [`read_trace`] of a source whose format is known already (`Some`: what [`sniff()`] said of its
/// first bytes), else told from its first block.
fn read_trace_of(mut source: impl std::io::Read + Send, known: Option<Format>) -> Result<Trace> {
    let mut first = vec![0u8; 16 << 20];
    let n = read_some(&mut source, &mut first)?;
    first.truncate(n);
    let format = known.unwrap_or_else(|| sniff(&first));
    #[cfg(not(target_arch = "wasm32"))]
    if reading(format) == Reading::Inflated {
        return super::gzip_pipeline::read(first, source, Sharing::WhenBehind);
    }
    let mut reader = Reader::with_format(format, true);
    reader.push(&first)?;
    #[cfg(not(target_arch = "wasm32"))]
    return read_plain_threaded(reader, first, source);
    #[cfg(target_arch = "wasm32")]
    {
        let mut buf = first;
        loop {
            let n = read_some(&mut source, &mut buf)?;
            if n == 0 {
                break;
            }
            reader.push(&buf[..n])?;
        }
        reader.finish()
    }
}

/// Reads the file on a helper thread while this one (and the parallel parser) parse the previous
/// block: one block in flight, so memory stays at three blocks.
#[cfg(not(target_arch = "wasm32"))]
fn read_plain_threaded(mut reader: Reader, first: Vec<u8>, mut source: impl std::io::Read + Send) -> Result<Trace> {
    use std::sync::mpsc::sync_channel;
    let (tx, rx) = sync_channel::<Vec<u8>>(1);
    let (back_tx, back_rx) = sync_channel::<Vec<u8>>(2);
    std::thread::scope(|scope| {
        let block_len = first.len();
        // Two buffers circulate: one being parsed, one being filled.
        let _ = back_tx.send(first);
        let _ = back_tx.send(Vec::new());
        let io = scope.spawn(move || -> Result<()> {
            while let Ok(mut buf) = back_rx.recv() {
                buf.resize(block_len.max(1 << 20), 0);
                let n = read_some(&mut source, &mut buf)?;
                if n == 0 {
                    break;
                }
                buf.truncate(n);
                if tx.send(buf).is_err() {
                    break;
                }
            }
            Ok(())
        });
        let mut parse_error = None;
        for block in rx {
            if let Err(e) = reader.push(&block) {
                parse_error = Some(e);
                break;
            }
            let _ = back_tx.send(block);
        }
        drop(back_tx);
        let io_result = io.join().unwrap_or_else(|_| Err(Error::new("read thread panicked")));
        if let Some(e) = parse_error {
            return Err(e);
        }
        io_result?;
        reader.finish()
    })
}
