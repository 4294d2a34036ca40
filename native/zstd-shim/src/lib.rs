//! The part of the `zstd` crate that arrow-rs's parquet uses, with one change: a page is
//! compressed by the host when it can.
//!
//! Why: zstd was the largest single cost of writing a release's Parquet (about 2.8 s of CPU at
//! 250,000 titles, in this module's WebAssembly build), and Node carries zstd 1.5.7 natively
//! (`node:zlib`), the very version built in here (zstd-sys 2.1.0+zstd.1.5.7). Given
//! the same level and the whole page in one call with room for the bound, both produce the same
//! frame byte for byte (every page of a 250,000-title release compared). The host says whether
//! it can through the import's answer: a negative one (no zstd, or another version, whose bytes
//! may differ) keeps the C zstd below, exactly as the real crate's bulk API calls it.
//!
//! The import `marquee.zstd_compress(level, src, src_len, dst, dst_capacity)` compresses
//! `src_len` bytes at `src` into `dst` and returns the frame's length, or -1 when the host will
//! not. It is called only with `dst_capacity` = `compress_bound(src_len)`, which parquet's codec
//! reserves: zstd then compresses in one pass, as `ZSTD_compress2` does here.
use std::io;

pub use zstd_safe;

#[link(wasm_import_module = "marquee")]
extern "C" {
    fn zstd_compress(level: i32, src: *const u8, src_len: usize, dst: *mut u8, dst_capacity: usize) -> isize;
}

/// The real crate's mapping of zstd's error codes to `io::Error`.
fn map_error_code(code: usize) -> io::Error {
    let msg = zstd_safe::get_error_name(code);
    io::Error::new(io::ErrorKind::Other, msg.to_string())
}

/// The levels zstd accepts.
pub fn compression_level_range() -> std::ops::RangeInclusive<i32> {
    zstd_safe::min_c_level()..=zstd_safe::max_c_level()
}

pub mod bulk {
    use super::{map_error_code, zstd_compress};
    use std::io;
    use zstd_safe::{CCtx, CParameter, DCtx, WriteBuf};

    /// One-shot compression at one level; the C context is made at the first page the host
    /// does not take.
    pub struct Compressor<'a> {
        level: i32,
        context: Option<CCtx<'a>>,
    }

    impl Compressor<'static> {
        pub fn new(level: i32) -> io::Result<Self> {
            if !super::compression_level_range().contains(&level) {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, "zstd level out of range"));
            }
            Ok(Self { level, context: None })
        }
    }

    impl<'a> Compressor<'a> {
        /// `source` as one zstd frame, written at `destination`'s end; returns its length.
        pub fn compress_to_buffer<C: WriteBuf + ?Sized>(&mut self, source: &[u8], destination: &mut C) -> io::Result<usize> {
            // The host is offered exactly the bound: room for any frame, and no more for it to
            // allocate (a reused buffer's capacity can be far larger).
            let bound = zstd_safe::compress_bound(source.len());
            if destination.capacity() >= bound {
                // Safety: the host writes at most `bound` bytes at the pointer, all within the
                // capacity, and the count it returns is what it wrote.
                let written = unsafe { zstd_compress(self.level, source.as_ptr(), source.len(), destination.as_mut_ptr(), bound) };
                if written >= 0 {
                    let written = written as usize;
                    assert!(written <= bound, "the host wrote past the buffer");
                    unsafe { destination.filled_until(written) };
                    return Ok(written);
                }
            }
            let level = self.level;
            let context = match &mut self.context {
                Some(context) => context,
                slot => {
                    let mut context = CCtx::create();
                    context.set_parameter(CParameter::CompressionLevel(level)).map_err(map_error_code)?;
                    slot.insert(context)
                }
            };
            let result = context.compress2(destination, source);
            if result.is_err() {
                // As the real crate: a failed compress2 leaves its frame open; start afresh.
                self.context = None;
            }
            result.map_err(map_error_code)
        }
    }

    /// One-shot decompression (parquet's codec needs it to exist; the release writes only).
    #[derive(Default)]
    pub struct Decompressor<'a> {
        context: Option<DCtx<'a>>,
    }

    impl Decompressor<'static> {
        pub fn new() -> io::Result<Self> {
            Ok(Self::default())
        }
    }

    impl<'a> Decompressor<'a> {
        pub fn decompress_to_buffer<C: WriteBuf + ?Sized>(&mut self, source: &[u8], destination: &mut C) -> io::Result<usize> {
            self.context.get_or_insert_with(DCtx::create).decompress(destination, source).map_err(map_error_code)
        }
    }
}
