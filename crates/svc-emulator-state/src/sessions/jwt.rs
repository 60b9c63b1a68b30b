//! JSON Web Tokens, HS256: what the emulator issues to user sessions and services.
//!
//! Tokens are real JWTs (`header.payload.signature`, base64url without padding) with `sub`,
//! `iat`, `exp`, plus `project`, `typ` (`access`, `refresh`, `service`), a unique `jti` and the
//! user's token generation `gen`. The signing key is 32 random bytes kept in the data path, so
//! tokens survive a restart on it.

use ring::hmac;
use serde::{Deserialize, Serialize};

use svc_engine::base64::{base64_encode_into, base64url_decode};

/// What a token is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenType {
    /// A user session's access token.
    Access,
    /// A user session's refresh token (single use: rotation).
    Refresh,
    /// A service token, minted for server-to-server calls.
    Service,
}

/// The claims the emulator signs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The user's uid (or `service` for service tokens).
    pub sub: String,
    /// The project the token belongs to.
    pub project: String,
    /// What the token is for.
    pub typ: TokenType,
    /// Issued at, Unix seconds.
    pub(crate) iat: i64,
    /// Expires at, Unix seconds.
    pub(crate) exp: i64,
    /// A unique id (refresh tokens are tracked by it).
    pub(crate) jti: String,
    /// The user's token generation when the token was issued (`gen`; 0 when absent, as in
    /// tokens of earlier versions): a password change raises it, and a session token of an
    /// earlier generation is refused.
    #[serde(rename = "gen", default)]
    pub(crate) generation: i64,
    /// How many times the project's state had been put back (a reset or a snapshot's restore)
    /// when the token was issued (`rst`; 0 when absent): an access token from before the last
    /// one is refused.
    #[serde(rename = "rst", default)]
    pub(crate) restores: i64,
}

/// Why a token was refused. Never carries the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JwtError {
    #[error("the token is malformed")]
    Malformed,
    #[error("the token's signature is not valid")]
    Signature,
    #[error("the token has expired")]
    Expired,
}

/// Signs and verifies tokens with one HMAC-SHA256 key.
pub(crate) struct Signer {
    key: hmac::Key,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signer(HS256, key hidden)")
    }
}

const HEADER: &str = r#"{"alg":"HS256","typ":"JWT"}"#;

impl Signer {
    pub(crate) fn new(secret: &[u8]) -> Self {
        Self {
            key: hmac::Key::new(hmac::HMAC_SHA256, secret),
        }
    }

    pub(crate) fn sign(&self, claims: &Claims) -> String {
        // Claims are plain strings and integers: serializing them cannot fail.
        let payload = serde_json::to_vec(claims).unwrap_or_default();
        let mut token = b64url(HEADER.as_bytes());
        token.push('.');
        token.push_str(&b64url(&payload));
        let tag = hmac::sign(&self.key, token.as_bytes());
        token.push('.');
        token.push_str(&b64url(tag.as_ref()));
        token
    }

    /// Checks the header, the signature (in constant time) and the expiry at `now`.
    pub fn verify(&self, token: &str, now: i64) -> Result<Claims, JwtError> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(JwtError::Malformed);
        };
        let signature = b64url_decode(signature).ok_or(JwtError::Malformed)?;
        let signed = &token[..header.len() + 1 + payload.len()];
        hmac::verify(&self.key, signed.as_bytes(), &signature).map_err(|_| JwtError::Signature)?;
        let header = b64url_decode(header).ok_or(JwtError::Malformed)?;
        let header: serde_json::Value =
            serde_json::from_slice(&header).map_err(|_| JwtError::Malformed)?;
        if header.get("alg").and_then(|a| a.as_str()) != Some("HS256") {
            return Err(JwtError::Malformed);
        }
        let payload = b64url_decode(payload).ok_or(JwtError::Malformed)?;
        let claims: Claims = serde_json::from_slice(&payload).map_err(|_| JwtError::Malformed)?;
        if claims.exp <= now {
            return Err(JwtError::Expired);
        }
        Ok(claims)
    }
}

fn b64url(data: &[u8]) -> String {
    let mut buf = Vec::with_capacity(data.len().div_ceil(3) * 4);
    base64_encode_into(&mut buf, data);
    buf.into_iter()
        .filter(|&b| b != b'=')
        .map(|b| match b {
            b'+' => '-',
            b'/' => '_',
            other => char::from(other),
        })
        .collect()
}

/// Decodes base64url without padding, in its canonical form only: the unused low bits of the
/// last character must be zero. Otherwise several texts decode to the same bytes, and a token
/// changed in its last character would still verify.
fn b64url_decode(text: &str) -> Option<Vec<u8>> {
    if text.contains(['+', '/', '=']) {
        return None;
    }
    base64url_decode(text).filter(|bytes| b64url(bytes) == text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: i64) -> Claims {
        Claims {
            restores: 0,
            sub: "u1".into(),
            project: "demo".into(),
            typ: TokenType::Access,
            iat: 100,
            exp,
            jti: "j1".into(),
            generation: 0,
        }
    }

    #[test]
    fn round_trip_and_refusals() {
        let signer = Signer::new(b"0123456789abcdef0123456789abcdef");
        let token = signer.sign(&claims(200));
        assert_eq!(token.split('.').count(), 3);
        assert!(!token.contains('='));
        assert_eq!(signer.verify(&token, 150).unwrap(), claims(200));
        assert_eq!(signer.verify(&token, 200), Err(JwtError::Expired));
        let other = Signer::new(b"another key, another signature..");
        assert_eq!(other.verify(&token, 150), Err(JwtError::Signature));
        // Tampered payload: the signature no longer matches.
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        parts[1] = b64url(br#"{"sub":"admin","project":"demo","typ":"access","iat":1,"exp":9999999999,"jti":"x"}"#);
        assert_eq!(
            signer.verify(&parts.join("."), 150),
            Err(JwtError::Signature)
        );
        for bad in ["", "a.b", "a.b.c.d", "!!.??.**", "e30.e30."] {
            assert!(signer.verify(bad, 150).is_err(), "{bad}");
        }
    }

    /// Regression: the signature's last character carries two bits that base64 does not use;
    /// changing them gave another token with the same signature bytes, and it verified.
    #[test]
    fn a_token_verifies_in_its_own_spelling_only() {
        let signer = Signer::new(b"0123456789abcdef0123456789abcdef");
        let token = signer.sign(&claims(200));
        assert!(signer.verify(&token, 150).is_ok());
        const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        for part in 0..3 {
            let parts: Vec<&str> = token.split('.').collect();
            let last = parts[part].chars().last().unwrap();
            let value = B64.iter().position(|&b| char::from(b) == last).unwrap();
            for low_bits in 1..4 {
                let mut changed: Vec<String> = parts.iter().map(|p| (*p).to_owned()).collect();
                changed[part].pop();
                changed[part].push(char::from(B64[value ^ low_bits]));
                let changed = changed.join(".");
                assert!(
                    signer.verify(&changed, 150).is_err(),
                    "part {part}, bits {low_bits}: {changed}"
                );
            }
        }
        assert_eq!(b64url_decode("AQ"), Some(vec![1]));
        assert_eq!(b64url_decode("AR"), None);
    }

    /// Tokens signed before token generations existed have no `gen`: generation 0.
    #[test]
    fn a_token_without_a_generation_is_of_generation_0() {
        let signer = Signer::new(b"0123456789abcdef0123456789abcdef");
        let header = b64url(HEADER.as_bytes());
        let payload = b64url(
            br#"{"sub":"u1","project":"demo","typ":"access","iat":100,"exp":200,"jti":"j1"}"#,
        );
        let signed = format!("{header}.{payload}");
        let tag = hmac::sign(&signer.key, signed.as_bytes());
        let token = format!("{signed}.{}", b64url(tag.as_ref()));
        assert_eq!(signer.verify(&token, 150).unwrap(), claims(200));
        let mut raised = claims(200);
        raised.generation = 3;
        let token = signer.sign(&raised);
        assert!(token.split('.').nth(1).is_some_and(|p| {
            String::from_utf8(base64url_decode(p).unwrap())
                .unwrap()
                .contains(r#""gen":3"#)
        }));
        assert_eq!(signer.verify(&token, 150).unwrap().generation, 3);
    }

    #[test]
    fn none_algorithm_is_refused() {
        let signer = Signer::new(b"k");
        let header = b64url(br#"{"alg":"none","typ":"JWT"}"#);
        let payload = b64url(&serde_json::to_vec(&claims(200)).unwrap());
        let unsigned = format!("{header}.{payload}.");
        assert!(signer.verify(&unsigned, 150).is_err());
    }
}
