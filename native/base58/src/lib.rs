//! Base58 (Bitcoin alphabet) of many byte strings in one call: the same text as `bs58.encode`
//! for each. A `1` per leading zero byte, then the number the remaining bytes spell, most
//! significant digit first.
//!
//! The number is kept in limbs of 58^5 (little-endian), made as the sum of each three-byte
//! chunk times its power of 2^24, whose limbs are computed once (`Powers`): every term is a
//! multiply-add independent of the others, and one pass of carries at the end brings each limb
//! under 58^5. A term is below 2^24 * 58^5 < 2^53.3, so 2^10 of them fit in 64 bits: 3,072
//! bytes, more than the longest token (1,041 bytes; longer inputs are refused).
//! Why here rather than in JavaScript (fastSiv.ts `base58`, the same method in doubles): a
//! release makes a token per link, a million at 250,000 titles, and this takes about half the
//! time (0.8 against 1.6 us a token).

const ALPHABET: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
/// 58^5: a limb holds five digits.
const LIMB: u64 = 656_356_768;
/// Input bytes a call may hold per string: 1,024 chunks of three bytes.
pub const MAX_INPUT: usize = 3 * 1024;

struct Powers {
    /// 2^(24 j) in limbs: row j is `limbs[start[j]..start[j + 1]]`.
    limbs: Vec<u64>,
    start: Vec<usize>,
}

impl Powers {
    fn up_to(&mut self, rows: usize) {
        while self.start.len() - 1 < rows {
            let n = self.start.len() - 1;
            let (from, to) = (self.start[n - 1], self.start[n]);
            let mut carry = 0u64;
            for k in from..to {
                let x = self.limbs[k] * (1 << 24) + carry;
                self.limbs.push(x % LIMB);
                carry = x / LIMB;
            }
            while carry > 0 {
                self.limbs.push(carry % LIMB);
                carry /= LIMB;
            }
            self.start.push(self.limbs.len());
        }
    }
}

struct State {
    powers: Powers,
    acc: Vec<u64>,
    /// The caller's buffer (words, so that it is 8-byte aligned for the offsets in it).
    scratch: Vec<u64>,
}

static mut STATE: Option<State> = None;

#[allow(static_mut_refs)]
fn state() -> &'static mut State {
    // One thread per instance: wasm32-unknown-unknown without threads.
    unsafe { STATE.get_or_insert_with(|| State { powers: Powers { limbs: vec![1], start: vec![0, 1] }, acc: Vec::new(), scratch: Vec::new() }) }
}

/// `x / LIMB` and `x % LIMB` without a 64-bit division (tens of cycles each in wasm): the
/// quotient from a multiplication in doubles, off by at most one (`x` rounds to 53 bits, an
/// error of at most 2^11, far below LIMB), which the remainder shows and which is mended.
#[inline(always)]
fn div_limb(x: u64) -> (u64, u64) {
    let mut q = ((x as f64) * (1.0 / LIMB as f64)) as u64;
    let mut r = x.wrapping_sub(q.wrapping_mul(LIMB)) as i64;
    if r < 0 {
        q -= 1;
        r += LIMB as i64;
    } else if r >= LIMB as i64 {
        q += 1;
        r -= LIMB as i64;
    }
    (q, r as u64)
}

/// Writes the base58 of `input` at the start of `out` (room for `input.len() * 138 / 100 + 1`
/// characters); returns how many it wrote.
fn encode(input: &[u8], powers: &mut Powers, acc: &mut Vec<u64>, out: &mut [u8]) -> usize {
    let zeros = input.iter().take_while(|&&b| b == 0).count();
    let rest = &input[zeros..];
    let chunks = (rest.len() + 2) / 3;
    powers.up_to(chunks);
    // The number is below 2^(24 * chunks): the last power's limbs and one more.
    let size = if chunks == 0 { 0 } else { powers.start[chunks] - powers.start[chunks - 1] + 1 };
    acc.clear();
    acc.resize(size, 0);
    let mut end = rest.len();
    for j in 0..chunks {
        let start = end.saturating_sub(3);
        let mut c = 0u64;
        for &b in &rest[start..end] {
            c = (c << 8) | b as u64;
        }
        end = start;
        if c == 0 {
            continue;
        }
        let row = &powers.limbs[powers.start[j]..powers.start[j + 1]];
        for (a, p) in acc.iter_mut().zip(row) {
            *a += c * p;
        }
    }
    let mut carry = 0u64;
    for a in acc.iter_mut() {
        let x = *a + carry;
        let (q, r) = div_limb(x);
        *a = r;
        carry = q;
    }
    debug_assert!(carry == 0);
    let mut used = acc.len();
    while used > 0 && acc[used - 1] == 0 {
        used -= 1;
    }
    let mut at = 0;
    for _ in 0..zeros {
        out[at] = b'1';
        at += 1;
    }
    // The most significant limb without its leading zero digits, then five digits a limb.
    let mut first = true;
    for k in (0..used).rev() {
        let mut limb = acc[k] as u32;
        let mut digits = [0u8; 5];
        for d in (0..5).rev() {
            digits[d] = ALPHABET[(limb % 58) as usize];
            limb /= 58;
        }
        let skip = if first { digits.iter().take_while(|&&d| d == b'1').count() } else { 0 };
        first = false;
        for &d in &digits[skip..] {
            out[at] = d;
            at += 1;
        }
    }
    at
}

/// A buffer of `len` bytes in module memory, 8-byte aligned, kept and reused by the next call
/// (grown as asked).
#[no_mangle]
pub extern "C" fn b58_scratch(len: usize) -> *mut u8 {
    let s = state();
    let words = len.div_ceil(8);
    if s.scratch.len() < words {
        s.scratch.resize(words, 0);
    }
    s.scratch.as_mut_ptr() as *mut u8
}

/// Base58 of `count` strings: string `i` is `input[offsets[i]..offsets[i + 1]]`; its text is
/// written at `out[out_offsets[i]..out_offsets[i + 1]]`, each string given room for
/// `len * 138 / 100 + 1` characters, one after the other. Returns 0, or -1 when a string is
/// longer than MAX_INPUT bytes (nothing is written then).
///
/// # Safety
/// The pointers are memory of this module (the scratch buffer), `offsets` holding `count + 1`
/// ascending values and `out` room for every string's text.
#[no_mangle]
pub unsafe extern "C" fn b58_many(input: *const u8, offsets: *const u32, count: usize, out: *mut u8, out_offsets: *mut u32) -> i32 {
    let offsets = std::slice::from_raw_parts(offsets, count + 1);
    let last = offsets[count] as usize;
    let input = std::slice::from_raw_parts(input, last);
    if offsets.windows(2).any(|w| w[1] < w[0] || (w[1] - w[0]) as usize > MAX_INPUT) {
        return -1;
    }
    let room: usize = offsets.windows(2).map(|w| (w[1] - w[0]) as usize * 138 / 100 + 1).sum();
    let out = std::slice::from_raw_parts_mut(out, room);
    let out_offsets = std::slice::from_raw_parts_mut(out_offsets, count + 1);
    let s = state();
    let mut at = 0usize;
    out_offsets[0] = 0;
    for i in 0..count {
        let bytes = &input[offsets[i] as usize..offsets[i + 1] as usize];
        at += encode(bytes, &mut s.powers, &mut s.acc, &mut out[at..]);
        out_offsets[i + 1] = at as u32;
    }
    0
}
