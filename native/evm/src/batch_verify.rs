//! Sender recovery with claimed keys: a whole batch's signatures checked against the public keys
//! their submitter says it recovered, in one multi-scalar multiplication (`src/batch_verify.c`),
//! and recovered one by one ([`crate::recover`]) when that check fails.
//!
//! The request is `recoverPacked`'s (`97·m` bytes: hashes, r‖s, recovery ids) followed by the
//! claimed keys x‖y (`64·m` bytes): `161·m` bytes in all. The answer is `recoverPacked`'s
//! (`65·m` bytes: keys, then one status byte each) and is byte for byte what `recoverPacked`
//! answers for the first `97·m` bytes: the claimed keys when every signature was made by its
//! claimed key, else every key recovered from its own signature. A wrong claim never changes
//! an answer; it costs its batch the per-signature price.

use std::os::raw::c_int;

use napi::{Error, Result, Status};
use napi_derive::napi;

use crate::recover::recover_into;
use crate::Out;

extern "C" {
    fn monsoon_batch_random(buf: *mut u8, len: usize) -> c_int;
    fn monsoon_batch_verify(
        hashes: *const u8,
        sigs: *const u8,
        recids: *const u8,
        keys: *const u8,
        m: usize,
        rand16: *const u8,
        window: c_int,
        jacobian: c_int,
    ) -> c_int;
}

/// Bytes one item takes in a request with claimed keys: 97 (as recoverPacked's) + 64 (key).
const REQUEST_WITH_KEY: usize = 97 + 64;

fn check_lengths(request: &[u8], m: usize, out_len: Option<usize>) -> Result<()> {
    if request.len() != REQUEST_WITH_KEY * m {
        return Err(Error::new(
            Status::InvalidArg,
            format!(
                "a request of {m} signatures with keys is {} bytes, found {}",
                REQUEST_WITH_KEY * m,
                request.len()
            ),
        ));
    }
    if let Some(len) = out_len {
        if len != 65 * m {
            return Err(Error::new(
                Status::InvalidArg,
                format!("an answer for {m} signatures is {} bytes, found {len}", 65 * m),
            ));
        }
    }
    Ok(())
}

/// Whether every signature of the request was made by its claimed key (weights `rand16`, 16 bytes
/// a signature; bucket window `window`, 0 for the default; `jacobian`: libsecp256k1's own
/// Pippenger rather than the affine-bucket one). Lengths checked by the caller.
fn verify(request: &[u8], m: usize, rand16: &[u8], window: i32, jacobian: bool) -> bool {
    let (hashes, rest) = request.split_at(32 * m);
    let (sigs, rest) = rest.split_at(64 * m);
    let (recids, keys) = rest.split_at(m);
    // SAFETY: every slice holds what the C function reads for m signatures (checked lengths).
    unsafe {
        monsoon_batch_verify(
            hashes.as_ptr(),
            sigs.as_ptr(),
            recids.as_ptr(),
            keys.as_ptr(),
            m,
            rand16.as_ptr(),
            window,
            jacobian as c_int,
        ) == 1
    }
}

/// Recovers the `count` senders of a request with claimed keys into `out` (layouts in the module
/// doc): the claimed keys if the batch verifies under fresh random weights from the OS, else
/// `recoverPacked`'s answer. Never throws for a bad signature or a wrong key.
#[napi]
pub fn recover_packed_with_keys(request: &[u8], count: u32, out: Out<'_>) -> Result<()> {
    let m = count as usize;
    check_lengths(request, m, Some(out.len()))?;
    let mut rand16 = vec![0u8; 16 * m];
    // SAFETY: rand16 is 16·m writable bytes.
    let seeded = unsafe { monsoon_batch_random(rand16.as_mut_ptr(), rand16.len()) } == 1;
    if m > 0 && seeded && verify(request, m, &rand16, 0, false) {
        let (keys, status) = out.split_at_mut(64 * m);
        keys.copy_from_slice(&request[97 * m..]);
        status.fill(1);
    } else {
        recover_into(&request[..97 * m], m, out);
    }
    Ok(())
}

/// The batch check alone, with the caller's weights (`16·count` bytes) and bucket window (0:
/// libsecp256k1's choice for the size): for tests and benchmarks, which need them fixed. Nodes
/// use [`recover_packed_with_keys`], whose weights nobody can know in advance. `jacobian`:
/// libsecp256k1's own Pippenger instead of the affine-bucket one nodes use (both must agree).
#[napi]
pub fn batch_verify_packed(
    request: &[u8],
    count: u32,
    weights: &[u8],
    window: u32,
    jacobian: Option<bool>,
) -> Result<bool> {
    let m = count as usize;
    check_lengths(request, m, None)?;
    if weights.len() != 16 * m {
        return Err(Error::new(
            Status::InvalidArg,
            format!("{m} signatures need {} bytes of weights, found {}", 16 * m, weights.len()),
        ));
    }
    if window > 12 {
        return Err(Error::new(Status::InvalidArg, format!("a bucket window is 0 to 12, found {window}")));
    }
    Ok(m == 0 || verify(request, m, weights, window as i32, jacobian.unwrap_or(false)))
}
