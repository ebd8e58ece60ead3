//! Sender recovery for a batch of signatures (and signing, for load generators), on libsecp256k1 (the C library revm's ECRECOVER
//! precompile already links, through the `secp256k1` crate).
//!
//! The batch format is `packages/execution/src/recoveryWorker.ts`'s, so this is a drop-in for
//! its `recoverPacked`: a request of `97·m` bytes (message hashes `[0, 32m)`, signatures r‖s
//! `[32m, 96m)`, recovery ids `[96m, 97m)`) answered in `65·m` bytes (public keys x‖y `[0, 64m)`,
//! status `[64m, 65m)`: 1 recovered, 0 not). One call for the whole batch: no per-signature
//! crossing, no per-signature JS object.

use napi::{Error, Result, Status};
use napi_derive::napi;
use secp256k1::ecdsa::{RecoverableSignature, RecoveryId};
use secp256k1::{Message, SecretKey, SECP256K1};

use crate::Out;

/// Recovers the `count` public keys of a packed `request` into `out` (layout in the module doc).
/// A signature that does not recover (recovery id not 0 or 1, r or s zero or ≥ n, no point for
/// this r) leaves its key zero and its status 0; it never throws for one. High s is not refused:
/// transactions check it before, as with the JS recoverer.
#[napi]
pub fn recover_packed(request: &[u8], count: u32, out: Out<'_>) -> Result<()> {
    let m = count as usize;
    if request.len() != 97 * m {
        return Err(Error::new(
            Status::InvalidArg,
            format!("a request of {m} signatures is {} bytes, found {}", 97 * m, request.len()),
        ));
    }
    if out.len() != 65 * m {
        return Err(Error::new(
            Status::InvalidArg,
            format!("an answer for {m} signatures is {} bytes, found {}", 65 * m, out.len()),
        ));
    }
    recover_into(request, m, out);
    Ok(())
}

/// [`recover_packed`] after its length checks: `request` is `97·m` bytes, `out` `65·m`.
pub(crate) fn recover_into(request: &[u8], m: usize, out: &mut [u8]) {
    let (hashes, rest) = request.split_at(32 * m);
    let (sigs, recids) = rest.split_at(64 * m);
    let (keys, status) = out.split_at_mut(64 * m);
    for i in 0..m {
        let key = &mut keys[64 * i..64 * i + 64];
        match recover_one(&hashes[32 * i..32 * i + 32], &sigs[64 * i..64 * i + 64], recids[i]) {
            Some(public) => {
                key.copy_from_slice(&public[1..]);
                status[i] = 1;
            }
            None => {
                key.fill(0);
                status[i] = 0;
            }
        }
    }
}

/// The uncompressed public key (0x04‖x‖y) that signed `hash`, if any.
fn recover_one(hash: &[u8], sig: &[u8], recid: u8) -> Option<[u8; 65]> {
    if recid > 1 {
        return None;
    }
    let id = RecoveryId::try_from(i32::from(recid)).ok()?;
    let sig = RecoverableSignature::from_compact(sig, id).ok()?;
    let digest: [u8; 32] = hash.try_into().ok()?;
    let key = SECP256K1.recover_ecdsa(Message::from_digest(digest), &sig).ok()?;
    Some(key.serialize_uncompressed())
}

/// Signs the 32-byte `hash` with the 32-byte private `key` (RFC 6979 nonce, low s, as the
/// `secp256k1` package's `ecdsaSign`): `out` gets r‖s (64 bytes) and the recovery id (1 byte).
#[napi]
pub fn sign_recoverable(hash: &[u8], key: &[u8], out: Out<'_>) -> Result<()> {
    let bad = |what: String| Error::new(Status::InvalidArg, what);
    let digest: [u8; 32] = hash.try_into().map_err(|_| bad(format!("a hash is 32 bytes, found {}", hash.len())))?;
    let secret: [u8; 32] = key.try_into().map_err(|_| bad(format!("a private key is 32 bytes, found {}", key.len())))?;
    if out.len() != 65 {
        return Err(bad(format!("a signature is 65 bytes (r‖s‖recovery id), found {}", out.len())));
    }
    let sk = SecretKey::from_byte_array(secret).map_err(|_| bad("the private key is zero or not below the curve order".into()))?;
    let (id, rs) = SECP256K1.sign_ecdsa_recoverable(Message::from_digest(digest), &sk).serialize_compact();
    out[..64].copy_from_slice(&rs);
    out[64] = i32::from(id) as u8;
    Ok(())
}
