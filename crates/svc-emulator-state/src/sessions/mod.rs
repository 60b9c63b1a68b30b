//! The user sessions service (docs/contract.md 5.5): accounts with password hashes, signed JWTs
//! with refresh-token rotation, the account methods, the outbox where reset and
//! email-confirmation codes are delivered, and service tokens. The HTTP layer checks `JWT`
//! credentials with it; its routes are the account slice's (svc-emulator's `account`).
//!
//! Outcomes: malformed bodies are `400`; missing or invalid `JWT` credentials and bad login
//! credentials are `401`; a business refusal (wrong current password, used or unknown code,
//! taken email) is `200` with `{"result": false, "errors": {...}}`, like register.

mod jwt;
mod password;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ring::rand::{SecureRandom, SystemRandom};
use rusqlite::{OptionalExtension, params};
use serde_json::{Value, json};

pub use jwt::{Claims, TokenType};

use crate::config::lifetimes::TokenLifetimes;
use crate::storage::accounts::{self as store, Account};
use crate::storage::{Store, StoreError};
use crate::util::timestamp::format_millis;
use jwt::Signer;

/// The account service shared by the routes.
#[derive(Debug, Clone)]
pub struct Accounts {
    store: Store,
    signer: Arc<Signer>,
    lifetimes: TokenLifetimes,
    /// Refresh calls received per project (emulator-only stats, for tests of single-flight
    /// refresh in clients).
    refresh_calls: Arc<std::sync::Mutex<std::collections::HashMap<String, u64>>>,
    /// The token generation of every user whose generation is not 0, by project and uid: a
    /// copy of the store's, so that checking a token needs no database query.
    generations: Arc<RwLock<Generations>>,
    /// How many times each project's state was put back (a reset or a snapshot's restore),
    /// kept in the store's settings as `restores.<project>`: an access token carries the count
    /// of its issue, and one from before the last restore is refused.
    restores: Arc<RwLock<HashMap<String, i64>>>,
}

/// Who a token is for: the project, the user's uid (`service` for a service token) and the
/// user's token generation.
struct Holder<'a> {
    project: &'a str,
    uid: &'a str,
    generation: i64,
}

impl<'a> Holder<'a> {
    fn of(project: &'a str, account: &'a Account) -> Self {
        Self {
            project,
            uid: &account.uid,
            generation: account.token_generation,
        }
    }
}

/// Token generations by project, then user uid.
type Generations = HashMap<String, HashMap<String, i64>>;

/// A refusal: `Err(Refusal)` becomes `{"result": false, "errors": {field: [message]}}`.
#[derive(Debug)]
pub struct Refusal(pub Value);

fn refusal(field: &str, message: &str) -> Refusal {
    Refusal(json!({ field: [message] }))
}

pub(crate) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 4)
}

fn random_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

impl Accounts {
    /// Creates the account tables and loads (or creates) the signing key in the meta store.
    pub fn open(store: &Store, lifetimes: TokenLifetimes) -> Result<Self, StoreError> {
        let (secret, generations, restores) = store.run_blocking(|conn, _| {
            store::migrate(conn)?;
            let restores = restore_counts(conn)?;
            let mut generations = Generations::new();
            for (project, uid, generation) in store::token_generations(conn)? {
                generations
                    .entry(project)
                    .or_default()
                    .insert(uid, generation);
            }
            let saved: Option<String> = conn
                .query_row(
                    "SELECT value FROM settings WHERE key = 'jwt_secret'",
                    [],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(hex) = saved {
                let key = decode_hex(&hex)
                    .ok_or_else(|| StoreError::Corrupt("the JWT signing key".into()))?;
                return Ok((key, generations, restores));
            }
            let mut key = vec![0u8; 32];
            SystemRandom::new()
                .fill(&mut key)
                .map_err(|_| StoreError::Corrupt("no system randomness for the JWT key".into()))?;
            conn.execute(
                "INSERT INTO settings (key, value) VALUES ('jwt_secret', ?1)",
                params![encode_hex(&key)],
            )?;
            Ok((key, generations, restores))
        })?;
        Ok(Self {
            store: store.clone(),
            signer: Arc::new(Signer::new(&secret)),
            lifetimes,
            refresh_calls: Arc::default(),
            generations: Arc::new(RwLock::new(generations)),
            restores: Arc::new(RwLock::new(restores)),
        })
    }

    /// After `project`'s account tables were put back (a reset or a snapshot's restore): every
    /// access token issued until now is refused from here on, and the users' token generations
    /// are read again. Refresh tokens follow the tables: one the restored state holds unused
    /// refreshes as it did then. Service tokens stay valid.
    pub(crate) async fn restored(&self, project: String) -> Result<(), StoreError> {
        let key = format!("restores.{project}");
        let (count, generations) = self
            .store
            .run(move |conn, _| {
                let tx = conn.transaction()?;
                let count: i64 = tx.query_row(
                    "INSERT INTO settings (key, value) VALUES (?1, '1')
                     ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1
                     RETURNING CAST(value AS INTEGER)",
                    params![key],
                    |r| r.get(0),
                )?;
                let generations = store::token_generations(&tx)?;
                tx.commit()?;
                Ok((count, generations))
            })
            .await?;
        {
            let mut all = self.generations.write().unwrap_or_else(|e| e.into_inner());
            let users = all.entry(project.clone()).or_default();
            users.clear();
            for (p, uid, generation) in generations {
                if p == project {
                    users.insert(uid, generation);
                }
            }
        }
        self.refresh_calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&project);
        self.restores
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(project, count);
        Ok(())
    }

    /// How many times `project`'s state was put back.
    fn restores_of(&self, project: &str) -> i64 {
        let restores = self.restores.read().unwrap_or_else(|e| e.into_inner());
        restores.get(project).copied().unwrap_or(0)
    }

    /// The claims of a valid access or service token of any project, if `token` is one. An
    /// access token issued before its user's last password change is not valid.
    pub fn verify_any(&self, token: &str) -> Option<Claims> {
        let claims = self.signer.verify(token, now()).ok()?;
        let valid = match claims.typ {
            TokenType::Access => self.is_current(&claims),
            TokenType::Service => true,
            TokenType::Refresh => false,
        };
        valid.then_some(claims)
    }

    /// The claims of a valid access or service token of `project`, if `token` is one.
    pub fn verify_access(&self, project: &str, token: &str) -> Option<Claims> {
        self.verify_any(token)
            .filter(|claims| claims.project == project)
    }

    /// Whether a user's token is of the user's current token generation.
    fn is_current(&self, claims: &Claims) -> bool {
        let generations = self.generations.read().unwrap_or_else(|e| e.into_inner());
        let current = generations
            .get(&claims.project)
            .and_then(|users| users.get(&claims.sub))
            .copied()
            .unwrap_or(0);
        claims.generation == current && claims.restores == self.restores_of(&claims.project)
    }

    /// Records a user's new token generation, once it is committed to the store.
    fn set_generation(&self, project: &str, uid: &str, generation: i64) {
        self.generations
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .entry(project.to_owned())
            .or_default()
            .insert(uid.to_owned(), generation);
    }

    fn token(
        &self,
        holder: &Holder<'_>,
        typ: TokenType,
        ttl: Duration,
        now: i64,
    ) -> (String, Claims) {
        let claims = Claims {
            sub: holder.uid.to_owned(),
            project: holder.project.to_owned(),
            typ,
            iat: now,
            exp: now.saturating_add(secs(ttl)),
            jti: random_id(),
            generation: holder.generation,
            restores: self.restores_of(holder.project),
        };
        (self.signer.sign(&claims), claims)
    }

    /// Issues an access + refresh pair and remembers the refresh token; returns the AuthState.
    fn issue(&self, conn: &rusqlite::Connection, holder: &Holder<'_>) -> Result<Value, StoreError> {
        let now = now();
        let (access, access_claims) =
            self.token(holder, TokenType::Access, self.lifetimes.access, now);
        let (refresh, refresh_claims) =
            self.token(holder, TokenType::Refresh, self.lifetimes.refresh, now);
        store::remember_refresh(
            conn,
            holder.project,
            holder.uid,
            &refresh_claims.jti,
            refresh_claims.exp,
        )?;
        Ok(json!({
            "access_token": access,
            "refresh_token": refresh,
            "access_token_expires": format_millis(access_claims.exp * 1000),
            "refresh_token_expires": format_millis(refresh_claims.exp * 1000),
        }))
    }

    /// Sets a user's password hash inside `tx` and ends every earlier session of the user: the
    /// refresh tokens are revoked and the token generation raised, so that earlier access
    /// tokens are refused too once the caller has committed `tx` and passed the generation to
    /// [`set_generation`](Self::set_generation). Returns the AuthState of a new session and
    /// the new generation.
    fn new_password(
        &self,
        tx: &rusqlite::Transaction<'_>,
        project: &str,
        uid: &str,
        hash: &str,
    ) -> Result<(Value, i64), StoreError> {
        store::set_password(tx, project, uid, hash)?;
        store::revoke_refresh_tokens(tx, project, uid)?;
        let generation = store::next_token_generation(tx, project, uid)?;
        let state = self.issue(
            tx,
            &Holder {
                project,
                uid,
                generation,
            },
        )?;
        Ok((state, generation))
    }

    /// A service token for `project` and its expiry.
    pub fn mint_service_token(&self, project: &str) -> (String, String) {
        let service = Holder {
            project,
            uid: "service",
            generation: 0,
        };
        let (token, claims) =
            self.token(&service, TokenType::Service, self.lifetimes.service, now());
        (token, format_millis(claims.exp * 1000))
    }

    /// Registers an account in `project` (`POST .../register/`): its session, or why not.
    pub async fn register(
        &self,
        project: String,
        body: Register,
    ) -> Result<Result<Value, Refusal>, StoreError> {
        let mut errors = serde_json::Map::new();
        if !looks_like_email(&body.email) {
            errors.insert("email".into(), json!(["Enter a valid email address."]));
        }
        if body.password.chars().count() < 8 {
            errors.insert(
                "password".into(),
                json!(["This password is too short. It must contain at least 8 characters."]),
            );
        }
        if !errors.is_empty() {
            return Ok(Err(Refusal(Value::Object(errors))));
        }
        let hash = password::hash(&body.password)
            .map_err(|_| StoreError::Corrupt("no system randomness".into()))?;
        self.store
            .run(move |conn, clock| {
                if store::by_email(conn, &project, &body.email)?.is_some() {
                    return Ok(Err(refusal(
                        "email",
                        "A user with this email already exists.",
                    )));
                }
                let account = Account {
                    uid: uuid::Uuid::new_v4().to_string(),
                    email: body.email,
                    password_hash: Some(hash),
                    first_name: body.first_name,
                    last_name: body.last_name,
                    language: body.language,
                    timezone: body.timezone,
                    date_add: clock.next(),
                    token_generation: 0,
                };
                store::insert(conn, &project, &account)?;
                Ok(Ok(account.info()))
            })
            .await
    }

    /// `Ok(None)`: bad credentials.
    pub async fn login(
        &self,
        project: String,
        email: String,
        password: String,
    ) -> Result<Option<Value>, StoreError> {
        let this = self.clone();
        self.store
            .run(move |conn, _| {
                let Some(account) = store::by_email(conn, &project, &email)? else {
                    // Spend the same time as a real check, so timing does not tell which
                    // emails exist.
                    let _ = password::verify(&password, DUMMY_HASH);
                    return Ok(None);
                };
                let ok = account
                    .password_hash
                    .as_deref()
                    .is_some_and(|h| password::verify(&password, h));
                if !ok {
                    return Ok(None);
                }
                let token = this.issue(conn, &Holder::of(&project, &account))?;
                Ok(Some(json!({ "token": token, "user": account.info() })))
            })
            .await
    }

    /// `Ok(None)`: the refresh token is invalid, expired, of another project, or already used.
    pub async fn refresh(
        &self,
        project: String,
        refresh_token: String,
    ) -> Result<Option<Value>, StoreError> {
        *self
            .refresh_calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(project.clone())
            .or_default() += 1;
        let Ok(claims) = self.signer.verify(&refresh_token, now()) else {
            return Ok(None);
        };
        if claims.typ != TokenType::Refresh || claims.project != project {
            return Ok(None);
        }
        let this = self.clone();
        self.store
            .run(move |conn, _| {
                let tx = conn.transaction()?;
                if !store::use_refresh(&tx, &project, &claims.jti)? {
                    return Ok(None);
                }
                // Revoked refresh tokens are marked used too; the generation is checked as
                // well, so that no token from before a password change can start a session.
                let Some(account) = store::by_uid(&tx, &project, &claims.sub)?
                    .filter(|a| a.token_generation == claims.generation)
                else {
                    return Ok(None);
                };
                let state = this.issue(&tx, &Holder::of(&project, &account))?;
                tx.commit()?;
                Ok(Some(state))
            })
            .await
    }

    /// The account `uid` of `project` as the account routes show it, or `None` when there is
    /// none.
    pub async fn user(&self, project: String, uid: String) -> Result<Option<Value>, StoreError> {
        self.store
            .run(move |conn, _| Ok(store::by_uid(conn, &project, &uid)?.map(|a| a.info())))
            .await
    }

    /// Changes the password of the account `uid` after checking its current one; its other
    /// sessions end.
    pub async fn change_password(
        &self,
        project: String,
        uid: String,
        new_password: String,
        current_password: Option<String>,
    ) -> Result<Result<Value, Refusal>, StoreError> {
        if new_password.chars().count() < 8 {
            return Ok(Err(refusal(
                "new_password",
                "This password is too short. It must contain at least 8 characters.",
            )));
        }
        let hash = password::hash(&new_password)
            .map_err(|_| StoreError::Corrupt("no system randomness".into()))?;
        let this = self.clone();
        self.store
            .run(move |conn, _| {
                let Some(account) = store::by_uid(conn, &project, &uid)? else {
                    return Ok(Err(refusal(
                        "non_field_errors",
                        "The user no longer exists.",
                    )));
                };
                if let Some(stored) = &account.password_hash {
                    let given = current_password.unwrap_or_default();
                    if !password::verify(&given, stored) {
                        return Ok(Err(refusal(
                            "current_password",
                            "The current password is not correct.",
                        )));
                    }
                }
                let tx = conn.transaction()?;
                let (state, generation) = this.new_password(&tx, &project, &uid, &hash)?;
                tx.commit()?;
                this.set_generation(&project, &uid, generation);
                Ok(Ok(state))
            })
            .await
    }

    /// Always succeeds, so the answer does not tell which emails exist; a code reaches the
    /// outbox only for a known account.
    pub async fn reset_password(&self, project: String, email: String) -> Result<(), StoreError> {
        let ttl = secs(self.lifetimes.refresh);
        self.store
            .run(move |conn, clock| {
                if let Some(account) = store::by_email(conn, &project, &email)? {
                    let code = random_id();
                    let expires = now().saturating_add(ttl.min(24 * 3600));
                    let date_add = clock.next();
                    store::issue_code(
                        conn,
                        &project,
                        &store::NewCode {
                            user_uid: &account.uid,
                            kind: "reset_password",
                            new_email: None,
                            to: &account.email,
                            code: &code,
                            expires,
                            date_add: &date_add,
                        },
                    )?;
                }
                Ok(())
            })
            .await
    }

    /// Sets a new password with the code a reset sent to the outbox.
    pub async fn reset_password_complete(
        &self,
        project: String,
        code: String,
        new_password: String,
    ) -> Result<Result<Value, Refusal>, StoreError> {
        if new_password.chars().count() < 8 {
            return Ok(Err(refusal(
                "new_password",
                "This password is too short. It must contain at least 8 characters.",
            )));
        }
        let hash = password::hash(&new_password)
            .map_err(|_| StoreError::Corrupt("no system randomness".into()))?;
        let this = self.clone();
        self.store
            .run(move |conn, _| {
                let tx = conn.transaction()?;
                let Some((uid, _)) =
                    store::use_code(&tx, &project, "reset_password", &code, now())?
                else {
                    return Ok(Err(refusal(
                        "code",
                        "The code is not valid or has been used.",
                    )));
                };
                let (state, generation) = this.new_password(&tx, &project, &uid, &hash)?;
                tx.commit()?;
                this.set_generation(&project, &uid, generation);
                Ok(Ok(state))
            })
            .await
    }

    /// Starts a change of the account `uid`'s email: a code goes to the outbox.
    pub async fn change_email(
        &self,
        project: String,
        uid: String,
        new_email: String,
        current_password: Option<String>,
    ) -> Result<Result<String, Refusal>, StoreError> {
        if !looks_like_email(&new_email) {
            return Ok(Err(refusal("new_email", "Enter a valid email address.")));
        }
        self.store
            .run(move |conn, clock| {
                let Some(account) = store::by_uid(conn, &project, &uid)? else {
                    return Ok(Err(refusal(
                        "non_field_errors",
                        "The user no longer exists.",
                    )));
                };
                if let Some(stored) = &account.password_hash
                    && !password::verify(&current_password.unwrap_or_default(), stored)
                {
                    return Ok(Err(refusal(
                        "current_password",
                        "The current password is not correct.",
                    )));
                }
                if store::by_email(conn, &project, &new_email)?.is_some() {
                    return Ok(Err(refusal(
                        "new_email",
                        "A user with this email already exists.",
                    )));
                }
                let code = random_id();
                let expires = now().saturating_add(24 * 3600);
                let date_add = clock.next();
                store::issue_code(
                    conn,
                    &project,
                    &store::NewCode {
                        user_uid: &uid,
                        kind: "change_email",
                        new_email: Some(&new_email),
                        to: &new_email,
                        code: &code,
                        expires,
                        date_add: &date_add,
                    },
                )?;
                Ok(Ok(new_email))
            })
            .await
    }

    /// Completes an email change with the code sent to the outbox.
    pub async fn change_email_complete(
        &self,
        project: String,
        code: String,
    ) -> Result<Result<(String, String), Refusal>, StoreError> {
        self.store
            .run(move |conn, _| {
                let tx = conn.transaction()?;
                let Some((uid, Some(new_email))) =
                    store::use_code(&tx, &project, "change_email", &code, now())?
                else {
                    return Ok(Err(refusal(
                        "code",
                        "The code is not valid or has been used.",
                    )));
                };
                let Some(account) = store::by_uid(&tx, &project, &uid)? else {
                    return Ok(Err(refusal(
                        "code",
                        "The code is not valid or has been used.",
                    )));
                };
                if store::by_email(&tx, &project, &new_email)?.is_some() {
                    return Ok(Err(refusal(
                        "new_email",
                        "A user with this email already exists.",
                    )));
                }
                store::set_email(&tx, &project, &uid, &new_email)?;
                tx.commit()?;
                Ok(Ok((account.email, new_email)))
            })
            .await
    }

    /// How many refresh calls `project` received.
    pub fn refresh_calls(&self, project: &str) -> u64 {
        self.refresh_calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(project)
            .copied()
            .unwrap_or(0)
    }

    /// The messages `project`'s accounts were sent (codes of resets and email changes).
    pub async fn outbox(&self, project: String) -> Result<Vec<Value>, StoreError> {
        self.store
            .run(move |conn, _| store::outbox(conn, &project))
            .await
    }
}

/// How many times each project's state was put back, as the settings keep it.
fn restore_counts(conn: &rusqlite::Connection) -> Result<HashMap<String, i64>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT substr(key, 10), CAST(value AS INTEGER) FROM settings WHERE key LIKE 'restores.%'",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The body of `auth/register`.
#[derive(Debug, serde::Deserialize)]
pub struct Register {
    email: String,
    password: String,
    #[serde(default)]
    first_name: Option<String>,
    #[serde(default)]
    last_name: Option<String>,
    #[serde(default)]
    language: Option<String>,
    #[serde(default)]
    timezone: Option<String>,
}

/// A well-formed hash of nothing, verified when an email is unknown (same cost either way).
const DUMMY_HASH: &str =
    "pbkdf2_sha256$100000$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

fn looks_like_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !email.contains(char::is_whitespace)
}

fn encode_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_and_hex() {
        assert!(looks_like_email("a@b.co"));
        for bad in ["", "a", "@b.co", "a@b", "a b@c.de", "a@.com", "a@com."] {
            assert!(!looks_like_email(bad), "{bad}");
        }
        assert_eq!(
            decode_hex(&encode_hex(&[0, 1, 254, 255])),
            Some(vec![0, 1, 254, 255])
        );
        assert_eq!(decode_hex("abc"), None);
        assert_eq!(decode_hex("zz"), None);
    }
}
