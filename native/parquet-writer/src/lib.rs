//! Parquet files from Arrow IPC streams, for the weekly release (services/snapshot/parquetWriterWasm.ts).
//!
//! A wasm module with a plain C interface and one import, the host's zstd for the pages
//! (native/zstd-shim, patched in for parquet's ZSTD codec): JavaScript copies bytes into the
//! module's memory (`mq_alloc`), calls, and copies the Parquet bytes out. One `Session` per file:
//! its writer is made at the first record batch (whose schema it takes, as parquet-wasm's
//! `transformParquetStream` does), every batch of every IPC stream handed over is written in
//! order, and `mq_close` finishes the file. The bytes of each completed row group are available
//! after the call that completed it (`mq_out_*`), so a file is never held whole here.
//!
//! The properties are parquet-wasm's as Marquee sets them (services/snapshot/parquetEncoder.ts):
//! ZSTD at its default level, page statistics, a row-group row limit, `created_by`, and the
//! dictionary either off or off per column. Everything else is arrow-rs's default, as it is in
//! parquet-wasm, so the bytes are the same.
use std::io::Cursor;

use arrow_ipc::reader::StreamReader;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

pub struct Session {
    /// Taken by the writer when the first batch arrives.
    props: Option<WriterProperties>,
    writer: Option<ArrowWriter<Vec<u8>>>,
    /// Parquet bytes written and not yet taken by the caller.
    out: Vec<u8>,
    /// The last failure, for `mq_error_*`.
    error: String,
}

fn read_u32(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let b = bytes.get(*at..*at + 4)?;
    *at += 4;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn read_str(bytes: &[u8], at: &mut usize) -> Option<String> {
    let n = read_u32(bytes, at)? as usize;
    let s = bytes.get(*at..at.checked_add(n)?)?;
    *at += n;
    String::from_utf8(s.to_vec()).ok()
}

/// The properties, as parquetWriterWasm.ts encodes them (little-endian): u32 max row-group rows,
/// u8 1 when every dictionary is off, string `created_by`, u32 count, then that many strings:
/// the columns whose dictionary is off. A string is a u32 byte length and its UTF-8 bytes.
fn properties(bytes: &[u8]) -> Option<WriterProperties> {
    let mut at = 0;
    let rows = read_u32(bytes, &mut at)? as usize;
    let dictionary_off = *bytes.get(at)? != 0;
    at += 1;
    let created_by = read_str(bytes, &mut at)?;
    let plain = read_u32(bytes, &mut at)?;
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_max_row_group_row_count(Some(rows))
        .set_created_by(created_by);
    if dictionary_off {
        builder = builder.set_dictionary_enabled(false);
    }
    for _ in 0..plain {
        let column = read_str(bytes, &mut at)?;
        if !dictionary_off {
            builder = builder.set_column_dictionary_enabled(ColumnPath::from(column), false);
        }
    }
    if at != bytes.len() {
        return None;
    }
    Some(builder.build())
}

/// `len` bytes of module memory for the caller to fill (free with `mq_free`).
#[no_mangle]
pub extern "C" fn mq_alloc(len: usize) -> *mut u8 {
    let mut v = Vec::<u8>::with_capacity(len.max(1));
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// # Safety
/// `ptr` and `len` as `mq_alloc` gave and was asked.
#[no_mangle]
pub unsafe extern "C" fn mq_free(ptr: *mut u8, len: usize) {
    drop(Vec::from_raw_parts(ptr, 0, len.max(1)));
}

/// A session for one file, or null when the properties do not parse.
///
/// # Safety
/// `ptr..ptr + len` is memory of this module.
#[no_mangle]
pub unsafe extern "C" fn mq_open(ptr: *const u8, len: usize) -> *mut Session {
    match properties(std::slice::from_raw_parts(ptr, len)) {
        Some(props) => Box::into_raw(Box::new(Session { props: Some(props), writer: None, out: Vec::new(), error: String::new() })),
        None => std::ptr::null_mut(),
    }
}

/// Moves what the writer has written (completed row groups) to `out`.
fn drain(session: &mut Session) {
    if let Some(writer) = session.writer.as_mut() {
        let written = writer.inner_mut();
        if !written.is_empty() {
            session.out.extend_from_slice(written);
            written.clear();
        }
    }
}

/// Writes every record batch of one Arrow IPC stream: 0, or -1 with the reason in `mq_error_*`
/// (the file is then unusable: the caller drops it).
///
/// # Safety
/// `session` from `mq_open`, not dropped; `ptr..ptr + len` is memory of this module.
#[no_mangle]
pub unsafe extern "C" fn mq_batch(session: *mut Session, ptr: *const u8, len: usize) -> i32 {
    let session = &mut *session;
    let bytes = std::slice::from_raw_parts(ptr, len);
    let result = (|| -> Result<(), String> {
        // Validating (UTF-8 among others) as parquet-wasm's reading of the stream does.
        let reader = StreamReader::try_new(Cursor::new(bytes), None).map_err(|e| e.to_string())?;
        for batch in reader {
            let batch = batch.map_err(|e| e.to_string())?;
            if session.writer.is_none() {
                let props = session.props.take().ok_or("the file's writer failed before")?;
                session.writer = Some(ArrowWriter::try_new(Vec::new(), batch.schema(), Some(props)).map_err(|e| e.to_string())?);
            }
            if let Some(writer) = session.writer.as_mut() {
                writer.write(&batch).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    })();
    drain(session);
    match result {
        Ok(()) => 0,
        Err(e) => {
            session.error = e;
            -1
        }
    }
}

/// Finishes the file (the last row group and the footer): 0, or -1 (`mq_error_*`); a file that
/// was never given a batch has no schema and fails, as in parquet-wasm.
///
/// # Safety
/// `session` from `mq_open`, not dropped.
#[no_mangle]
pub unsafe extern "C" fn mq_close(session: *mut Session) -> i32 {
    let session = &mut *session;
    let Some(writer) = session.writer.take() else {
        session.error = "no record batch was written, so the file has no schema".into();
        return -1;
    };
    match writer.into_inner() {
        Ok(rest) => {
            session.out.extend_from_slice(&rest);
            0
        }
        Err(e) => {
            session.error = e.to_string();
            -1
        }
    }
}

/// # Safety
/// `session` from `mq_open`, not dropped.
#[no_mangle]
pub unsafe extern "C" fn mq_out_ptr(session: *const Session) -> *const u8 {
    (&*session).out.as_ptr()
}

/// # Safety
/// `session` from `mq_open`, not dropped.
#[no_mangle]
pub unsafe extern "C" fn mq_out_len(session: *const Session) -> usize {
    (&*session).out.len()
}

/// The caller has copied the bytes out.
///
/// # Safety
/// `session` from `mq_open`, not dropped.
#[no_mangle]
pub unsafe extern "C" fn mq_out_clear(session: *mut Session) {
    (&mut *session).out.clear()
}

/// # Safety
/// `session` from `mq_open`, not dropped.
#[no_mangle]
pub unsafe extern "C" fn mq_error_ptr(session: *const Session) -> *const u8 {
    (&*session).error.as_ptr()
}

/// # Safety
/// `session` from `mq_open`, not dropped.
#[no_mangle]
pub unsafe extern "C" fn mq_error_len(session: *const Session) -> usize {
    (&*session).error.len()
}

/// Frees the session (finished, failed or abandoned).
///
/// # Safety
/// `session` from `mq_open`, dropped once.
#[no_mangle]
pub unsafe extern "C" fn mq_drop(session: *mut Session) {
    drop(Box::from_raw(session))
}
