//! Password hashes: PBKDF2-HMAC-SHA256 with a random salt, stored as
//! `pbkdf2_sha256$<iterations>$<salt>$<hash>` (Django's layout, base64 fields).
//!
//! A real password hash, slow on purpose; verification runs in constant time.

use std::num::NonZeroU32;

use ring::pbkdf2;
use ring::rand::{SecureRandom, SystemRandom};

use svc_engine::base64::{base64_decode, base64_encode_into};

const ALGORITHM: pbkdf2::Algorithm = pbkdf2::PBKDF2_HMAC_SHA256;
const PREFIX: &str = "pbkdf2_sha256";
/// Iterations for new hashes. High enough to be a real cost per guess, low enough that a test
/// suite that logs in a few hundred times stays quick.
const ITERATIONS: u32 = 100_000;
const SALT_LEN: usize = 16;
const HASH_LEN: usize = 32;

/// Hashes `password` with a fresh salt.
pub(crate) fn hash(password: &str) -> Result<String, ring::error::Unspecified> {
    let mut salt = [0u8; SALT_LEN];
    SystemRandom::new().fill(&mut salt)?;
    let mut out = [0u8; HASH_LEN];
    let iterations = NonZeroU32::new(ITERATIONS).ok_or(ring::error::Unspecified)?;
    pbkdf2::derive(ALGORITHM, iterations, &salt, password.as_bytes(), &mut out);
    Ok(format!(
        "{PREFIX}${ITERATIONS}${}${}",
        b64(&salt),
        b64(&out)
    ))
}

/// Whether `password` matches `stored`. A malformed stored hash matches nothing.
pub fn verify(password: &str, stored: &str) -> bool {
    let mut parts = stored.split('$');
    let (Some(PREFIX), Some(iterations), Some(salt), Some(hash), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    let (Some(iterations), Some(salt), Some(hash)) = (
        iterations.parse::<u32>().ok().and_then(NonZeroU32::new),
        base64_decode(salt),
        base64_decode(hash),
    ) else {
        return false;
    };
    pbkdf2::verify(ALGORITHM, iterations, &salt, password.as_bytes(), &hash).is_ok()
}

fn b64(data: &[u8]) -> String {
    let mut buf = Vec::new();
    base64_encode_into(&mut buf, data);
    String::from_utf8(buf).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_and_differ() {
        let a = hash("correct horse").unwrap();
        let b = hash("correct horse").unwrap();
        assert_ne!(a, b, "salted");
        assert!(a.starts_with("pbkdf2_sha256$100000$"));
        assert!(!a.contains("correct horse"));
        assert!(verify("correct horse", &a));
        assert!(!verify("correct horse!", &a));
        assert!(!verify("", &a));
        for bad in [
            "",
            "plain",
            "pbkdf2_sha256$0$AA==$AA==",
            "md5$1$a$b",
            "pbkdf2_sha256$10$%%$%%",
        ] {
            assert!(!verify("x", bad), "{bad}");
        }
    }
}
